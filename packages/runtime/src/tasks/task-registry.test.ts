import { describe, expect, it } from 'vitest';
import { TaskRegistry } from './task-registry.js';

describe('TaskRegistry', () => {
  it('returns at once from waitFor and waitForNotification when the signal has already aborted', async () => {
    const registry = new TaskRegistry();
    const task = registry.register({ type: 'local_agent', description: 'long job' });
    const controller = new AbortController();
    controller.abort();
    // Without the early return these would wait out their (test-timeout-sized) timeouts.
    const waited = await registry.waitFor(task.id, {
      timeoutMs: 600_000,
      signal: controller.signal,
    });
    expect(waited.status).toBe('running');
    expect(
      await registry.waitForNotification({ timeoutMs: 600_000, signal: controller.signal }),
    ).toBe(false);
  });

  it('keeps the first final status and returns a finished task from waitFor', async () => {
    const registry = new TaskRegistry();
    const task = registry.register({ type: 'local_agent', description: 'job' });
    const waiting = registry.waitFor(task.id, { timeoutMs: 600_000 });
    expect(registry.finish(task.id, { status: 'killed', error: 'stopped' })).toBe(true);
    expect(registry.finish(task.id, { status: 'completed', result: 'late result' })).toBe(false);
    expect((await waiting).status).toBe('killed');
    const again = await registry.waitFor(task.id, { timeoutMs: 600_000 });
    expect(again).toMatchObject({ status: 'killed', error: 'stopped' });
    expect(again.result).toBeUndefined();
  });
});
