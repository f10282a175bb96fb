import type { CliIo } from '../cli-io.js';
import { EXIT_CODES } from '../exit-codes.js';
import { type StopSignal, listenForInterrupts, stopReasonFor } from '../live/interrupt-keys.js';

/** Stop signals heard while a run is set up, before its own listener takes over. */
export type SetupInterrupts = {
  /** Aborts at the first SIGINT, SIGTERM or SIGHUP. */
  signal: AbortSignal;
  /** What stopped the setup, if anything. */
  reason: () => 'interrupted' | 'terminated' | 'hangup' | undefined;
  /** Stops listening (call it right before the run installs its own listener). */
  stop: () => void;
};

const SIGNAL_NAMES: Record<StopSignal, string> = {
  SIGINT: 'Ctrl-C (SIGINT)',
  SIGTERM: 'SIGTERM',
  SIGHUP: 'the terminal closing (SIGHUP)',
};

/**
 * Listens for SIGINT, SIGTERM and SIGHUP while a run starts (MCP servers can take up to 30 s
 * to connect), so a stop then closes what was started instead of killing the process and
 * leaving the servers running. A second Ctrl-C within two seconds exits at once.
 */
export function listenDuringSetup(io: CliIo): SetupInterrupts {
  const controller = new AbortController();
  let reason: ReturnType<SetupInterrupts['reason']>;
  const stop = listenForInterrupts(
    io.stdin,
    {
      onInterrupt: (signal) => {
        reason = stopReasonFor(signal);
        controller.abort(
          new Error(`Stopped by ${SIGNAL_NAMES[signal]} while the run was starting.`),
        );
      },
      onForce: () => process.exit(EXIT_CODES.interrupted),
    },
    { raw: false },
  );
  return { signal: controller.signal, reason: () => reason, stop };
}

/** What a run stopped while it was starting says on stderr. */
export function setupStoppedMessage(setup: SetupInterrupts): string {
  const reason = setup.signal.reason as unknown;
  const text = reason instanceof Error ? reason.message : 'Stopped while the run was starting.';
  return `delegate: ${text} Nothing ran; the MCP servers it had started are stopped.\n`;
}
