import { emitKeypressEvents } from 'node:readline';
import { keepInputErrorsQuiet } from '../live/interrupt-keys.js';
import { FRAME_MS, renderTree } from '../live/render-tree.js';
import type { Colors } from '../terminal/colors.js';
import type { AgentTree } from '../usage/agent-tree.js';
import { type EditorAction, type Keypress, PromptEditor } from './prompt-editor.js';

type Draw = ((text: string) => void) & { done(): void; clear(): void };

/** The size drawn for when a terminal reports none (0 by 0, as some docker -t and CI terminals do). */
const FALLBACK_COLUMNS = 100;
const FALLBACK_ROWS = 24;

/**
 * The interactive session's screen on a terminal: output scrolls above, and below it a
 * frame redrawn in place with the agents that are running and the prompt line. Keys are read
 * in raw mode, so Ctrl-C and Ctrl-B reach the session while agents run.
 */
export class InteractiveScreen {
  readonly editor = new PromptEditor();
  private draw!: Draw;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private status = '';
  private question: { text: string; resolve: (answer: string) => void } | undefined;
  private readonly onKeypress = (input: string | undefined, key: Keypress | undefined): void => {
    const action = this.editor.press(input, key ?? { sequence: input });
    if (action.type === 'submit' && this.question) {
      const { resolve, text } = this.question;
      this.question = undefined;
      // The question and its answer stay in the scrollback: what was allowed is on record.
      this.persist(`${this.options.colors.yellow(text)} ${action.text}`);
      resolve(action.text);
    } else if (action.type !== 'none') {
      this.onAction(action);
    }
    this.render();
  };

  constructor(
    private readonly options: {
      stdin: NodeJS.ReadStream;
      stdout: NodeJS.WriteStream;
      tree: () => AgentTree;
      colors: Colors;
      prompt: string;
    },
    private readonly onAction: (action: Exclude<EditorAction, { type: 'none' }>) => void,
    /**
     * The terminal closed: its input ended or can no longer be read (`EIO`). A raw-mode
     * terminal sends Ctrl-D as a key, so an end of input means the terminal itself is gone,
     * often a moment before SIGHUP arrives (or instead of it).
     */
    private readonly onClosed: () => void = () => undefined,
  ) {}

  /** Takes over the terminal. */
  async start(): Promise<void> {
    const { createLogUpdate } = await import('log-update');
    const { stdout } = this.options;
    // log-update falls back to a default size only when the terminal reports none, not 0 (it
    // then wraps at 0 columns and clips every frame to 0 rows, so nothing showed).
    const sized = {
      isTTY: stdout.isTTY,
      get columns() {
        return stdout.columns || FALLBACK_COLUMNS;
      },
      get rows() {
        return stdout.rows || FALLBACK_ROWS;
      },
      write: (chunk: string) => stdout.write(chunk),
    };
    this.draw = createLogUpdate(sized as unknown as NodeJS.WritableStream, {
      showCursor: false,
    }) as Draw;
    emitKeypressEvents(this.options.stdin);
    this.options.stdin.setRawMode(true);
    this.options.stdin.on('keypress', this.onKeypress);
    this.options.stdin.on('end', this.onClosed);
    this.options.stdin.on('error', this.onClosed);
    keepInputErrorsQuiet(this.options.stdin);
    this.options.stdin.resume();
    this.timer = setInterval(() => this.render(), FRAME_MS);
    this.render();
  }

  /** A line under the agents, above the prompt (what the session is doing). */
  setStatus(text: string): void {
    this.status = text;
    this.render();
  }

  /** Writes text that stays in the scrollback, above the frame. */
  print(text: string): void {
    this.persist(text.endsWith('\n') ? text.slice(0, -1) : text);
    this.render();
  }

  /** Asks a question on the prompt line; resolves with the next submitted line. */
  ask(text: string): Promise<string> {
    return new Promise((resolve) => {
      this.question = { text, resolve };
      this.render();
    });
  }

  // Not log-update's `persist`: it clips the text to the terminal's height like a frame, so
  // the first lines of an answer taller than the terminal were never written. Written below
  // the cleared frame, every line scrolls into the scrollback; the next render redraws the frame.
  private persist(text: string): void {
    this.draw.clear();
    this.options.stdout.write(`${text}\n`);
  }

  private render(): void {
    // A key that ends the session (/exit, Ctrl-D) is handled before its redraw: no prompt is
    // drawn again below the session's last lines.
    if (this.stopped) return;
    const { colors } = this.options;
    const tree = this.options.tree();
    const running = tree.nodes().some((node) => node.status === 'running');
    const lines = running
      ? renderTree(tree, {
          colors,
          width: this.options.stdout.columns || FALLBACK_COLUMNS,
          now: Date.now(),
          frame: Math.floor(Date.now() / FRAME_MS),
        })
      : [];
    if (this.status) lines.push(colors.dim(this.status));
    const { text, cursor } = this.editor;
    const shown = `${text.slice(0, cursor)}${colors.inverse(text[cursor] ?? ' ')}${text.slice(cursor + 1)}`;
    lines.push(
      this.question
        ? `${colors.yellow(this.question.text)} ${shown}`
        : `${colors.cyan(this.options.prompt)}${shown}`,
    );
    this.draw(lines.join('\n'));
  }

  /** Gives the terminal back. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.options.stdin.off('keypress', this.onKeypress);
    this.options.stdin.off('end', this.onClosed);
    this.options.stdin.off('error', this.onClosed);
    try {
      this.options.stdin.setRawMode(false);
    } catch {
      // The terminal closed (SIGHUP): there is no mode left to restore.
    }
    this.options.stdin.pause();
    this.draw.clear();
    this.draw.done();
  }
}
