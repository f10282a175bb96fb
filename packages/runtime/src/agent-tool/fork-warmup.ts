import type { AgentRuntime } from '../session/agent-runtime.js';
import { delay } from '../util/delay.js';

/** Longest a sibling fork waits for the first sibling's response to begin. */
const SIBLING_WAIT_MS = 15_000;
/** How long a gate is kept for late siblings. */
const GATE_LIFETIME_MS = 60_000;

/**
 * Sibling forks of one assistant message share everything but the directive. The first
 * sibling goes ahead and gets an `onFirstResponse` to call when its response begins; the
 * others wait (at most 15 s, or until the caller aborts) for that, because a cache entry
 * becomes readable only then, so they read the prefix it wrote.
 */
export async function awaitForkWarmup(
  runtime: AgentRuntime,
  options: { parentMessageUuid: string; signal: AbortSignal },
): Promise<(() => void) | undefined> {
  const key = options.parentMessageUuid;
  const gate = runtime.forkWarmups.get(key);
  if (gate) {
    // An abort ends the wait; the run itself then sees the aborted signal and stops.
    await delay(SIBLING_WAIT_MS, { signal: options.signal, until: gate }).catch(() => undefined);
    return undefined;
  }
  let open!: () => void;
  runtime.forkWarmups.set(key, new Promise<void>((resolve) => (open = resolve)));
  setTimeout(() => runtime.forkWarmups.delete(key), GATE_LIFETIME_MS).unref();
  return () => open();
}
