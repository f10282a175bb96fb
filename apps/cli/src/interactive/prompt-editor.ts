/** A key as `readline.emitKeypressEvents` reports it. */
export type Keypress = {
  name?: string | undefined;
  ctrl?: boolean | undefined;
  meta?: boolean | undefined;
  sequence?: string | undefined;
};

// Typed text never carries control characters onto the prompt line.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;

/** What a key asks the interactive session to do. */
export type EditorAction =
  | { type: 'none' }
  | { type: 'submit'; text: string }
  | { type: 'interrupt' }
  | { type: 'background' }
  | { type: 'eof' };

/**
 * The prompt line of the interactive session: the text being typed, the cursor, and the
 * history of submitted lines. Pure state: `press` changes it and says what the key asks for.
 */
export class PromptEditor {
  text = '';
  cursor = 0;
  private readonly history: string[] = [];
  private historyIndex: number | undefined;

  /** Applies one key. */
  press(input: string | undefined, key: Keypress): EditorAction {
    if (key.ctrl) return this.control(key.name);
    switch (key.name ?? '') {
      case 'return':
      case 'enter':
        return this.submit();
      case 'backspace':
        if (this.cursor > 0) {
          this.text = this.text.slice(0, this.cursor - 1) + this.text.slice(this.cursor);
          this.cursor--;
        }
        return { type: 'none' };
      case 'delete':
        this.text = this.text.slice(0, this.cursor) + this.text.slice(this.cursor + 1);
        return { type: 'none' };
      case 'left':
        this.cursor = Math.max(0, this.cursor - 1);
        return { type: 'none' };
      case 'right':
        this.cursor = Math.min(this.text.length, this.cursor + 1);
        return { type: 'none' };
      case 'home':
        this.cursor = 0;
        return { type: 'none' };
      case 'end':
        this.cursor = this.text.length;
        return { type: 'none' };
      case 'up':
        this.recall(-1);
        return { type: 'none' };
      case 'down':
        this.recall(1);
        return { type: 'none' };
      default:
        break;
    }
    // Printable input, one key or a pasted run of text (new lines become spaces).
    if (input && !key.meta && !input.startsWith('\u001b')) {
      const clean = input.replace(/[\r\n]+/g, ' ').replace(CONTROL_CHARACTERS, '');
      this.text = this.text.slice(0, this.cursor) + clean + this.text.slice(this.cursor);
      this.cursor += clean.length;
    }
    return { type: 'none' };
  }

  private control(name: string | undefined): EditorAction {
    switch (name ?? '') {
      case 'c':
        return { type: 'interrupt' };
      case 'b':
        return { type: 'background' };
      case 'd':
        return this.text === '' ? { type: 'eof' } : { type: 'none' };
      case 'a':
        this.cursor = 0;
        return { type: 'none' };
      case 'e':
        this.cursor = this.text.length;
        return { type: 'none' };
      case 'u':
        this.text = this.text.slice(this.cursor);
        this.cursor = 0;
        return { type: 'none' };
      case 'w': {
        const before = this.text.slice(0, this.cursor).replace(/\S+\s*$/, '');
        this.text = before + this.text.slice(this.cursor);
        this.cursor = before.length;
        return { type: 'none' };
      }
      default:
        return { type: 'none' };
    }
  }

  private submit(): EditorAction {
    const text = this.text.trim();
    this.text = '';
    this.cursor = 0;
    this.historyIndex = undefined;
    if (text !== '' && this.history.at(-1) !== text) this.history.push(text);
    return { type: 'submit', text };
  }

  private recall(step: number): void {
    if (this.history.length === 0) return;
    const next = (this.historyIndex ?? this.history.length) + step;
    if (next < 0) return;
    if (next >= this.history.length) {
      this.historyIndex = undefined;
      this.text = '';
    } else {
      this.historyIndex = next;
      this.text = this.history[next]!;
    }
    this.cursor = this.text.length;
  }

  /** Clears the line. */
  clear(): void {
    this.text = '';
    this.cursor = 0;
  }
}
