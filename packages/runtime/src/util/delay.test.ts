import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
import { delay } from './delay.js';

describe('delay', () => {
  it('rejects with ABORTED when the signal aborts, and at once when it already has', async () => {
    const controller = new AbortController();
    const waiting = delay(600_000, { signal: controller.signal });
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toSatisfy((error: unknown) =>
      DelegateError.hasCode(error, 'ABORTED'),
    );
    await expect(delay(600_000, { signal: controller.signal })).rejects.toSatisfy(
      (error: unknown) => DelegateError.hasCode(error, 'ABORTED'),
    );
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('resolves early when `until` settles, and leaves no listener behind', async () => {
    const controller = new AbortController();
    await delay(600_000, { signal: controller.signal, until: Promise.resolve() });
    await delay(600_000, { signal: controller.signal, until: Promise.reject(new Error('x')) });
    await delay(1, { signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
