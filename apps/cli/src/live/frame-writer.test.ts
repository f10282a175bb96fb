import ansiEscapes from 'ansi-escapes';
import { describe, expect, it } from 'vitest';
import { FrameWriter } from './frame-writer.js';

const SYNC_START = '\u001b[?2026h';
const SYNC_END = '\u001b[?2026l';
// Cursor and erase sequences, and carriage returns: what is left is the text on screen.
// eslint-disable-next-line no-control-regex
const CONTROLS = /\u001b\[[0-9;?]*[A-Za-z]|\r/g;

/** A terminal stream that records what is written to it. */
function terminal(size: { columns: number; rows: number }) {
  const writes: string[] = [];
  const stream = {
    ...size,
    isTTY: true,
    write: (chunk: string) => {
      writes.push(chunk);
      return true;
    },
  } as unknown as NodeJS.WriteStream & { columns: number; rows: number };
  const unwrap = (chunk: string) =>
    chunk.startsWith(SYNC_START) && chunk.endsWith(SYNC_END)
      ? chunk.slice(SYNC_START.length, -SYNC_END.length)
      : chunk;
  return { stream, writes, last: () => unwrap(writes.at(-1) ?? '') };
}

describe('FrameWriter', () => {
  it('writes the first frame whole, then only the lines from the first one that changed', () => {
    const term = terminal({ columns: 80, rows: 24 });
    const writer = new FrameWriter(term.stream);
    writer.draw(['main', 'worker 1', 'worker 2', 'total']);
    expect(term.writes[0]!.startsWith(SYNC_START)).toBe(true);
    expect(term.last()).toBe(
      `${ansiEscapes.cursorHide}\r${['main', 'worker 1', 'worker 2', 'total'].map((line) => `${line}${ansiEscapes.eraseEndLine}\n`).join('')}`,
    );
    writer.draw(['main', 'worker 1', 'worker 2 · Grep', 'total']);
    // Up from under the frame to line 2, then lines 2 and 3 again.
    expect(term.last()).toBe(
      `${ansiEscapes.cursorUp(2)}\rworker 2 · Grep${ansiEscapes.eraseEndLine}\ntotal${ansiEscapes.eraseEndLine}\n`,
    );
    const count = term.writes.length;
    writer.draw(['main', 'worker 1', 'worker 2 · Grep', 'total']);
    expect(term.writes).toHaveLength(count);
    writer.done();
  });

  it('clears the old lines under a shorter frame and redraws everything after a resize', () => {
    const term = terminal({ columns: 80, rows: 24 });
    const writer = new FrameWriter(term.stream);
    writer.draw(['a', 'b', 'c']);
    writer.draw(['a', 'c']);
    expect(term.last()).toBe(
      `${ansiEscapes.cursorUp(2)}\rc${ansiEscapes.eraseEndLine}\n${ansiEscapes.eraseDown}`,
    );
    term.stream.columns = 40;
    writer.draw(['a', 'c']);
    expect(term.last()).toBe(
      `${ansiEscapes.cursorUp(2)}\r${ansiEscapes.eraseDown}a${ansiEscapes.eraseEndLine}\nc${ansiEscapes.eraseEndLine}\n`,
    );
    writer.done();
  });

  it('after a narrowing resize, goes up as many rows as the re-wrapped old frame takes', () => {
    const term = terminal({ columns: 80, rows: 24 });
    const writer = new FrameWriter(term.stream);
    writer.draw(['x'.repeat(70), 'y'.repeat(30), 'total']);
    term.stream.columns = 30;
    writer.draw(['x'.repeat(25), 'y'.repeat(25), 'total']);
    // 70 columns re-wrap onto three rows of 30, the others keep one each.
    expect(term.last().startsWith(`${ansiEscapes.cursorUp(5)}\r${ansiEscapes.eraseDown}`)).toBe(
      true,
    );
    writer.done();
  });

  it('keeps a tall frame under the terminal height: the first line, a count of the rest, the last lines', () => {
    const term = terminal({ columns: 80, rows: 6 });
    const writer = new FrameWriter(term.stream, { omitted: (count) => `(${count} hidden)` });
    const lines = ['main', ...Array.from({ length: 10 }, (_, index) => `w${index}`), 'total'];
    writer.draw(lines);
    const shown = term.last().split('\n').slice(0, -1);
    // Five rows: one stays free for the cursor.
    expect(shown.map((line) => line.replace(CONTROLS, ''))).toEqual([
      'main',
      '(8 hidden)',
      'w8',
      'w9',
      'total',
    ]);
    // A last frame is drawn whole: under the unchanged first line, every other line.
    writer.draw(lines, { whole: true });
    expect(term.last().startsWith(`${ansiEscapes.cursorUp(4)}\r`)).toBe(true);
    expect(
      term
        .last()
        .split('\n')
        .slice(0, -1)
        .map((line) => line.replace(CONTROLS, '')),
    ).toEqual(lines.slice(1));
    writer.done();
  });

  it('cuts the line that counts the left-out lines to the width, so it takes one row', () => {
    const term = terminal({ columns: 20, rows: 6 });
    const writer = new FrameWriter(term.stream, {
      omitted: (count) => `… ${count} more agents (all are listed when the run ends)`,
    });
    writer.draw(['main', ...Array.from({ length: 10 }, (_, index) => `w${index}`)]);
    const note = term.last().split('\n')[1]!.replace(CONTROLS, '');
    expect(note).toBe('… 7 more agents (a…');
    writer.done();
  });

  it('shows the cursor again when the process exits, and forgets that once done', () => {
    const before = process.listenerCount('exit');
    const term = terminal({ columns: 80, rows: 24 });
    const writer = new FrameWriter(term.stream);
    writer.draw(['a']);
    writer.draw(['b']);
    expect(process.listenerCount('exit')).toBe(before + 1);
    writer.done();
    expect(process.listenerCount('exit')).toBe(before);
  });

  it('writes persisted text above the frame and shows the cursor again when done', () => {
    const term = terminal({ columns: 80, rows: 24 });
    const writer = new FrameWriter(term.stream);
    writer.draw(['main', 'total']);
    writer.persist('warning: something');
    expect(term.last()).toBe(
      `${ansiEscapes.cursorUp(2)}\r${ansiEscapes.eraseDown}warning: something\n`,
    );
    writer.draw(['main', 'total']);
    expect(term.last()).toBe(
      `\rmain${ansiEscapes.eraseEndLine}\ntotal${ansiEscapes.eraseEndLine}\n`,
    );
    writer.done();
    expect(term.last()).toBe(ansiEscapes.cursorShow);
  });
});
