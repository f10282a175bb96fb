import { describe, expect, it } from 'vitest';
import { PromptEditor } from './prompt-editor.js';

function type(editor: PromptEditor, text: string): void {
  for (const character of text) editor.press(character, { name: character, sequence: character });
}

describe('PromptEditor', () => {
  it('edits the line and submits it trimmed', () => {
    const editor = new PromptEditor();
    type(editor, 'helo');
    editor.press(undefined, { name: 'left' });
    type(editor, 'l');
    expect(editor.text).toBe('hello');
    editor.press(undefined, { name: 'end' });
    type(editor, ' world  ');
    editor.press(undefined, { name: 'w', ctrl: true });
    expect(editor.text).toBe('hello ');
    expect(editor.press('\r', { name: 'return' })).toEqual({ type: 'submit', text: 'hello' });
    expect(editor.text).toBe('');
  });

  it('keeps control characters out and turns pasted new lines into spaces', () => {
    const editor = new PromptEditor();
    editor.press('a\u0007b\nc', { sequence: 'a\u0007b\nc' });
    expect(editor.text).toBe('ab c');
  });

  it('maps Ctrl-C, Ctrl-B and Ctrl-D on an empty line to actions', () => {
    const editor = new PromptEditor();
    expect(editor.press(undefined, { name: 'c', ctrl: true })).toEqual({ type: 'interrupt' });
    expect(editor.press(undefined, { name: 'b', ctrl: true })).toEqual({ type: 'background' });
    expect(editor.press(undefined, { name: 'd', ctrl: true })).toEqual({ type: 'eof' });
    type(editor, 'x');
    expect(editor.press(undefined, { name: 'd', ctrl: true })).toEqual({ type: 'none' });
  });

  it('recalls earlier lines with up and down', () => {
    const editor = new PromptEditor();
    for (const line of ['first', 'second']) {
      type(editor, line);
      editor.press('\r', { name: 'return' });
    }
    editor.press(undefined, { name: 'up' });
    expect(editor.text).toBe('second');
    editor.press(undefined, { name: 'up' });
    expect(editor.text).toBe('first');
    editor.press(undefined, { name: 'down' });
    editor.press(undefined, { name: 'down' });
    expect(editor.text).toBe('');
  });
});
