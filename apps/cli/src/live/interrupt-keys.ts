/** What the keys do during a run. */
export type InterruptHandlers = {
  /** Ctrl-C, SIGINT, SIGTERM or SIGHUP (the first time; `signal` says which). */
  onInterrupt: (signal: StopSignal) => void;
  /** A second Ctrl-C within `forceWindowMs` of the first. */
  onForce: () => void;
  /** Ctrl-B: move the running foreground sub-agent to the background. */
  onBackground?: () => void;
};

function ignoreInputError(): void {
  // The terminal is gone; whoever still listens has stopped what runs.
}

/**
 * Gives `stdin` one listener that drops its errors (once, however often it is called): an
 * `EIO` after the terminal closed must not crash the process while it stops its agents, also
 * after the listeners that act on it are gone.
 */
export function keepInputErrorsQuiet(stdin: NodeJS.ReadStream): void {
  if (!stdin.listeners('error').includes(ignoreInputError)) stdin.on('error', ignoreInputError);
}

/** The signals that stop a run. */
export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/** What a stop signal means for a run: `interrupted` (Ctrl-C), `terminated` or `hangup`. */
export function stopReasonFor(signal: StopSignal): 'interrupted' | 'terminated' | 'hangup' {
  if (signal === 'SIGTERM') return 'terminated';
  return signal === 'SIGHUP' ? 'hangup' : 'interrupted';
}

/** How soon a second Ctrl-C forces the exit. */
export const FORCE_WINDOW_MS = 2_000;

/**
 * Listens for Ctrl-C and Ctrl-B: in a terminal through raw keyboard input (so Ctrl-B
 * reaches the program), otherwise through SIGINT. SIGTERM and SIGHUP (the terminal closed)
 * count as Ctrl-C, so every agent and shell command is stopped rather than left running; the
 * end of a raw terminal's input counts as SIGHUP. Only Ctrl-C (SIGINT) again within
 * `FORCE_WINDOW_MS` forces the exit; a repeated SIGTERM or SIGHUP is ignored.
 * Returns a function that stops listening and restores the terminal.
 */
export function listenForInterrupts(
  stdin: NodeJS.ReadStream,
  handlers: InterruptHandlers,
  options: { raw: boolean; now?: () => number } = { raw: false },
): () => void {
  const now = options.now ?? Date.now;
  let firstAt: number | undefined;
  const interrupt = (signal: StopSignal): void => {
    // Only a second Ctrl-C forces the exit: a closing terminal can send SIGHUP twice (or
    // SIGHUP then SIGTERM), and that must not skip stopping the agents and their shells.
    if (signal !== 'SIGINT' && firstAt !== undefined) return;
    const time = now();
    if (firstAt !== undefined && time - firstAt <= FORCE_WINDOW_MS) {
      handlers.onForce();
      return;
    }
    firstAt = time;
    handlers.onInterrupt(signal);
  };
  const onSigint = (): void => interrupt('SIGINT');
  const onSigterm = (): void => interrupt('SIGTERM');
  const onSighup = (): void => interrupt('SIGHUP');
  // A raw-mode terminal sends Ctrl-D as a key: its input ending, or failing (EIO), means the
  // terminal closed, often a moment before SIGHUP arrives (or instead of it).
  let listening = true;
  const onInputClosed = (): void => {
    if (listening) interrupt('SIGHUP');
  };
  const onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    for (const byte of bytes) {
      if (byte === 0x03) interrupt('SIGINT');
      else if (byte === 0x02) handlers.onBackground?.();
    }
  };
  const raw = options.raw && stdin.isTTY === true;
  if (raw) {
    stdin.setRawMode(true);
    stdin.on('data', onData);
    stdin.on('end', onInputClosed);
    stdin.on('error', onInputClosed);
    keepInputErrorsQuiet(stdin);
    stdin.resume();
  }
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
  process.on('SIGHUP', onSighup);
  return () => {
    listening = false;
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigterm);
    process.off('SIGHUP', onSighup);
    if (raw) {
      stdin.off('data', onData);
      stdin.off('end', onInputClosed);
      stdin.off('error', onInputClosed);
      try {
        stdin.setRawMode(false);
      } catch {
        // The terminal closed (SIGHUP): there is no mode left to restore.
      }
      stdin.pause();
    }
  };
}
