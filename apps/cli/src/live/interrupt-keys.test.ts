import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FORCE_WINDOW_MS, listenForInterrupts } from './interrupt-keys.js';

/** Keyboard input of a terminal in raw mode, as far as `listenForInterrupts` looks. */
function rawTerminal(): PassThrough {
  const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => input });
  return input;
}

describe('listenForInterrupts', () => {
  it('stops on the first Ctrl-C and forces only on a second one within the window', () => {
    let now = 0;
    const calls: string[] = [];
    const stdin = rawTerminal() as unknown as NodeJS.ReadStream;
    const stop = listenForInterrupts(
      stdin,
      {
        onInterrupt: (signal) => calls.push(`interrupt ${signal}`),
        onForce: () => calls.push('force'),
        onBackground: () => calls.push('background'),
      },
      { raw: true, now: () => now },
    );
    try {
      stdin.emit('data', Buffer.from([0x02]));
      stdin.emit('data', Buffer.from([0x03]));
      now += FORCE_WINDOW_MS + 1;
      stdin.emit('data', Buffer.from([0x03]));
      now += FORCE_WINDOW_MS - 1;
      stdin.emit('data', Buffer.from([0x03]));
      expect(calls).toEqual(['background', 'interrupt SIGINT', 'interrupt SIGINT', 'force']);
    } finally {
      stop();
    }
  });

  it('stops once on SIGHUP or SIGTERM and never forces on a repeated one', () => {
    const calls: string[] = [];
    const stdin = new PassThrough() as unknown as NodeJS.ReadStream;
    const stop = listenForInterrupts(stdin, {
      onInterrupt: (signal) => calls.push(`interrupt ${signal}`),
      onForce: () => calls.push('force'),
    });
    try {
      // A closing terminal: the kernel's SIGHUP, the shell's, then a SIGTERM.
      process.emit('SIGHUP');
      process.emit('SIGHUP');
      process.emit('SIGTERM');
      expect(calls).toEqual(['interrupt SIGHUP']);
      // Ctrl-C still forces.
      process.emit('SIGINT');
      expect(calls).toEqual(['interrupt SIGHUP', 'force']);
    } finally {
      stop();
    }
  });

  it.each([
    ['ends', (stdin: PassThrough) => stdin.emit('end')],
    ['fails to be read (EIO)', (stdin: PassThrough) => stdin.emit('error', new Error('read EIO'))],
  ])('counts a raw terminal whose input %s as SIGHUP, once', (_how, close) => {
    const calls: string[] = [];
    const input = rawTerminal();
    const stdin = input as unknown as NodeJS.ReadStream;
    const stop = listenForInterrupts(
      stdin,
      {
        onInterrupt: (signal) => calls.push(`interrupt ${signal}`),
        onForce: () => calls.push('force'),
      },
      { raw: true },
    );
    try {
      close(input);
      process.emit('SIGHUP');
      expect(calls).toEqual(['interrupt SIGHUP']);
    } finally {
      stop();
    }
    // An error after listening stopped does not crash the process either.
    expect(() => input.emit('error', new Error('read EIO'))).not.toThrow();
  });

  it('does nothing on an input error once listening stopped, and never crashes on one', () => {
    const calls: string[] = [];
    const input = rawTerminal();
    const stop = listenForInterrupts(
      input as unknown as NodeJS.ReadStream,
      {
        onInterrupt: (signal) => calls.push(`interrupt ${signal}`),
        onForce: () => calls.push('force'),
      },
      { raw: true },
    );
    stop();
    expect(() => input.emit('error', new Error('read EIO'))).not.toThrow();
    input.emit('end');
    expect(calls).toEqual([]);
    // Listening again and again adds no listener that stays.
    for (let round = 0; round < 3; round++) {
      listenForInterrupts(
        input as unknown as NodeJS.ReadStream,
        { onInterrupt: () => undefined, onForce: () => undefined },
        { raw: true },
      )();
    }
    expect(input.listenerCount('error')).toBe(1);
  });
});
