import { describe, expect, it } from 'vitest';
import { DelegateError } from './errors.js';
import { MAX_TIMER_MS, timerDelay } from './timer-delay.js';

describe('timerDelay', () => {
  it('gives no timer for Infinity, caps what Node cannot hold and refuses what is not a delay', () => {
    expect(timerDelay(Number.POSITIVE_INFINITY, 'wait: timeoutMs')).toBeUndefined();
    expect(timerDelay(2 ** 40, 'wait: timeoutMs')).toBe(MAX_TIMER_MS);
    expect(timerDelay(0, 'wait: timeoutMs')).toBe(0);
    expect(timerDelay(250, 'wait: timeoutMs')).toBe(250);
    for (const bad of [-1, Number.NaN, '5', undefined]) {
      let caught: unknown;
      try {
        timerDelay(bad, 'wait: timeoutMs');
      } catch (error) {
        caught = error;
      }
      expect(DelegateError.hasCode(caught, 'INVALID_ARGUMENT'), String(bad)).toBe(true);
      expect((caught as Error).message).toContain('wait: timeoutMs');
    }
  });
});
