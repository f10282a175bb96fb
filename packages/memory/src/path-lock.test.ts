import { describe, expect, it } from 'vitest';
import { withPathLock } from './path-lock.js';

describe('withPathLock', () => {
  it('runs tasks for one key one at a time, in order', async () => {
    const events: string[] = [];
    const task = (name: string) => async () => {
      events.push(`start ${name}`);
      await new Promise((settle) => setImmediate(settle));
      events.push(`end ${name}`);
      return name;
    };
    const results = await Promise.all([
      withPathLock('/same', task('a')),
      withPathLock('/same', task('b')),
      withPathLock('/same', task('c')),
    ]);
    expect(results).toEqual(['a', 'b', 'c']);
    expect(events).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('lets different keys run side by side', async () => {
    const events: string[] = [];
    const task = (name: string) => async () => {
      events.push(`start ${name}`);
      await new Promise((settle) => setImmediate(settle));
      events.push(`end ${name}`);
    };
    await Promise.all([withPathLock('/one', task('a')), withPathLock('/two', task('b'))]);
    expect(events.slice(0, 2)).toEqual(['start a', 'start b']);
  });

  it('runs the next queued task after one fails', async () => {
    const failing = withPathLock('/key', async () => {
      await new Promise((settle) => setImmediate(settle));
      throw new Error('boom');
    });
    const next = withPathLock('/key', async () => 'ran');
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBe('ran');
  });
});
