import { describe, expect, it } from 'vitest';
import { createLimiter } from './create-limiter.js';

describe('createLimiter', () => {
  it('never runs more tasks at once than allowed, and runs them all', async () => {
    const limit = createLimiter(3);
    let running = 0;
    let peak = 0;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        limit(async () => {
          running += 1;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setTimeout(resolve, 1));
          running -= 1;
          return index;
        }),
      ),
    );
    expect(peak).toBe(3);
    expect(results).toEqual(Array.from({ length: 20 }, (_, index) => index));
  });

  it('frees the slot of a task that fails', async () => {
    const limit = createLimiter(1);
    await expect(limit(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limit(() => Promise.resolve('next'))).resolves.toBe('next');
  });

  it('refuses a concurrency below one', () => {
    expect(() => createLimiter(0)).toThrow(/positive whole number/);
  });
});
