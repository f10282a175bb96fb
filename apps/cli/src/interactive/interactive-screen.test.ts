import { PassThrough } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { colorsFor } from '../terminal/colors.js';
import { AgentTree } from '../usage/agent-tree.js';
import { InteractiveScreen } from './interactive-screen.js';

/**
 * A screen on a fake terminal of `size` (80 by 24); `written()` is all it wrote, without
 * escape sequences.
 */
function terminal(size: { columns: number; rows: number } = { columns: 80, rows: 24 }): {
  stdin: PassThrough;
  screen: InteractiveScreen;
  closed: string[];
  written: () => string;
} {
  const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => stdin });
  const stdout = Object.assign(new PassThrough(), { isTTY: true, ...size });
  let output = '';
  stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const closed: string[] = [];
  const tree = new AgentTree({ mainModel: 'claude-sonnet-4-5' });
  const screen = new InteractiveScreen(
    {
      stdin: stdin as unknown as NodeJS.ReadStream,
      stdout: stdout as unknown as NodeJS.WriteStream,
      tree: () => tree,
      colors: colorsFor(stdout as unknown as NodeJS.WriteStream, { NO_COLOR: '1' }),
      prompt: '› ',
    },
    () => undefined,
    () => closed.push('closed'),
  );
  return { stdin, screen, closed, written: () => stripVTControlCharacters(output) };
}

/** The lines `line 0` … `line <count - 1>`. */
function numberedLines(count: number): string[] {
  return Array.from({ length: count }, (_, index) => `line ${index}`);
}

/** Lets the screen's streams deliver what was written to them. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe('InteractiveScreen', () => {
  it('tells the session the terminal closed when its input ends, before any SIGHUP', async () => {
    const { stdin, screen, closed } = terminal();
    await screen.start();
    try {
      stdin.emit('end');
      expect(closed).toEqual(['closed']);
    } finally {
      screen.stop();
    }
  });

  it('tells the session when its input can no longer be read instead of crashing, and nothing once stopped', async () => {
    const { stdin, screen, closed } = terminal();
    await screen.start();
    stdin.emit('error', Object.assign(new Error('read EIO'), { code: 'EIO' }));
    expect(closed).toEqual(['closed']);
    screen.stop();
    // The session has exited by then: an error or an end changes nothing, and crashes nothing.
    expect(() => stdin.emit('error', new Error('read EIO'))).not.toThrow();
    stdin.emit('end');
    expect(closed).toEqual(['closed']);
  });

  it.each([
    ['100 by 10', { columns: 100, rows: 10 }],
    ['100 by 1', { columns: 100, rows: 1 }],
    ['0 by 0 (no size reported)', { columns: 0, rows: 0 }],
  ])('writes every line of text taller than a %s terminal', async (_name, size) => {
    const { screen, written } = terminal(size);
    await screen.start();
    try {
      screen.print(numberedLines(30).join('\n'));
      await settle();
      const shown = written().split(/\r?\n/);
      for (const line of numberedLines(30)) expect(shown).toContain(line);
    } finally {
      screen.stop();
    }
  });

  it('shows the prompt and what is typed on a terminal that reports 0 by 0', async () => {
    const { stdin, screen, written } = terminal({ columns: 0, rows: 0 });
    await screen.start();
    try {
      stdin.write('hello');
      await settle();
      expect(written()).toContain('› hello');
    } finally {
      screen.stop();
    }
  });
});
