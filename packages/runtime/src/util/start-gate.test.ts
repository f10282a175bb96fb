import { describe, expect, it } from 'vitest';
import { createStartGate } from './start-gate.js';

describe('createStartGate', () => {
  it('lets waiters through in order, one per event-loop turn, with timers running between', async () => {
    const gate = createStartGate();
    const order: string[] = [];
    // A timer due now runs in the timers phase of the next loop turn: it must come before the
    // later waiters, not after all of them.
    setTimeout(() => order.push('timer'), 0);
    await Promise.all(
      Array.from({ length: 5 }, (_, index) => gate().then(() => order.push(`start ${index}`))),
    );
    expect(order.filter((entry) => entry.startsWith('start'))).toEqual([
      'start 0',
      'start 1',
      'start 2',
      'start 3',
      'start 4',
    ]);
    expect(order.indexOf('timer')).toBeLessThan(order.indexOf('start 4'));
  });
});
