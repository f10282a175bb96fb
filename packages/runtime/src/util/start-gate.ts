import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * A gate that lets one waiter through per turn of the event loop, in order.
 *
 * A main agent that starts a hundred background agents in one response would otherwise build
 * and send a hundred first requests in one synchronous stretch (each serializes its whole
 * prompt), stalling timers and I/O of everything else for that long. Through the gate each
 * start runs in its own loop turn, so the stretch is one agent's start.
 */
export function createStartGate(): () => Promise<void> {
  let last: Promise<unknown> = Promise.resolve();
  return () => {
    const slot = last.then(() => nextTurn());
    last = slot;
    return slot.then(() => undefined);
  };
}
