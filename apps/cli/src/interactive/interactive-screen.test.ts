import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { colorsFor } from '../terminal/colors.js';
import { AgentTree } from '../usage/agent-tree.js';
import { InteractiveScreen } from './interactive-screen.js';

function terminal(): { stdin: PassThrough; screen: InteractiveScreen; closed: string[] } {
  const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => stdin });
  const stdout = Object.assign(new PassThrough(), { isTTY: true, columns: 80, rows: 24 });
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
  return { stdin, screen, closed };
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
});
