/** The exit codes of `delegate`. */
export const EXIT_CODES = {
  /** The command did what was asked. */
  success: 0,
  /**
   * The agent run failed (an API error after retries, the turn limit, an abort), a check found
   * errors, or the output could not be written (a full disk: ENOSPC, an I/O error: EIO).
   */
  runFailed: 1,
  /** The command line or a settings file is wrong; nothing ran. */
  usage: 2,
  /** The terminal closed (SIGHUP): every agent was stopped. */
  hangup: 129,
  /** The person pressed Ctrl-C (SIGINT). */
  interrupted: 130,
  /** The program reading the output went away (a closed pipe, as in `| head -1`). */
  outputClosed: 141,
  /** The process got SIGTERM. */
  terminated: 143,
} as const;
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

/**
 * A mistake in how `delegate` was called (a bad flag value, a missing file, a bad settings
 * file). It exits with code 2; the message says what is wrong and what to do.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
