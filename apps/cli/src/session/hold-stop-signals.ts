import type { StopSignal } from '../live/interrupt-keys.js';

const STOP_SIGNALS: readonly StopSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** What a CLI says when it holds a stop signal. */
export const STOPPING_NOTE =
  'stopping the agents and MCP servers this run started before exiting (a few seconds at most).';

/** Longest a stop signal waits for the held work before it ends the process anyway. */
export const HELD_STOP_LIMIT_MS = 10_000;

// Nested holds (the run's shutdown, then the session's close inside it) share the outermost.
let holding = 0;

/**
 * Runs `work` (stopping what a run started: agents, shells, MCP servers) with SIGINT, SIGTERM
 * and SIGHUP held. Without it a stop signal in that window ends the process at once, and an
 * MCP server that does not exit when its stdin closes (the SDK signals it only 2 s later) is
 * left running on its own. A signal heard meanwhile is raised again once `work` has ended (or
 * after `HELD_STOP_LIMIT_MS`), so the process ends by it as it would have, with the servers
 * stopped; `onHeld` is told of the first one. Inside another hold, `work` just runs.
 */
export async function holdStopSignals<T>(
  work: () => Promise<T>,
  onHeld?: (signal: StopSignal) => void,
): Promise<T> {
  if (holding > 0) return work();
  holding++;
  let heard: StopSignal | undefined;
  let limit: NodeJS.Timeout | undefined;
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    holding--;
    clearTimeout(limit);
    for (const [signal, listener] of listeners) process.off(signal, listener);
    // Raised only when nobody else listens: a listener left (the interactive session's) decides.
    if (heard !== undefined && process.listenerCount(heard) === 0) process.kill(process.pid, heard);
  };
  const listeners = STOP_SIGNALS.map((signal) => {
    const listener = (): void => {
      if (heard !== undefined) return;
      heard = signal;
      onHeld?.(signal);
      limit = setTimeout(release, HELD_STOP_LIMIT_MS);
      limit.unref();
    };
    process.on(signal, listener);
    return [signal, listener] as const;
  });
  try {
    return await work();
  } finally {
    release();
  }
}
