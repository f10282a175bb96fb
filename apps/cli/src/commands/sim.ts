import type { CliIo } from '../cli-io.js';
import { type ExitCode, UsageError } from '../exit-codes.js';
import { type StopSignal, listenForInterrupts, stopReasonFor } from '../live/interrupt-keys.js';
import { defaultSimPolicy } from '../session/default-sim-policy.js';
import { loadPolicyModule } from '../session/load-policy-module.js';
import { exitCodeFor } from './execute-run.js';

/** A usage error naming `--host` or `--port` when the server could not listen there, else undefined. */
function listenError(
  error: unknown,
  options: { port: number; host: string },
): UsageError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  const where = `${options.host}:${options.port}`;
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
    case 'EADDRNOTAVAIL':
      return new UsageError(
        `--host ${JSON.stringify(options.host)} is not an address of this machine (${code}). Pass an IP address or a name that resolves to one here, such as 127.0.0.1 (the default), ::1 or 0.0.0.0.`,
      );
    case 'EADDRINUSE':
      return new UsageError(
        `--port ${options.port}: ${where} is already in use. Pick another port, or --port 0 for any free one.`,
      );
    case 'EACCES':
      return new UsageError(
        `--port ${options.port}: not allowed to listen on ${where} (EACCES; ports below 1024 need privileges). Pick a port of 1024 or more, or --port 0 for any free one.`,
      );
    default:
      return undefined;
  }
}

/** `delegate sim`: the simulator as a server until Ctrl-C or SIGTERM. */
export async function simCommand(options: {
  io: CliIo;
  port: number;
  host: string;
  policy?: string;
  json?: boolean;
}): Promise<ExitCode> {
  const { io } = options;
  const { startSim } = await import('@delegate/api-sim');
  const policy = options.policy
    ? await loadPolicyModule({ path: options.policy, processCwd: io.cwd, flag: '--policy' })
    : await defaultSimPolicy();
  const sim = await startSim({ policy, port: options.port, host: options.host }).catch(
    (error: unknown) => {
      throw listenError(error, options) ?? error;
    },
  );
  io.stdout.write(
    options.json ? `${JSON.stringify({ url: sim.url, port: sim.port })}\n` : `${sim.url}\n`,
  );
  io.stderr.write(
    `api-sim listening; point a client at it with ANTHROPIC_BASE_URL=${sim.url} and any ANTHROPIC_API_KEY. Ctrl-C stops it.\n`,
  );
  // Stopped as a run is stopped, with its exit codes: 130 (Ctrl-C), 143 (SIGTERM), 129 (SIGHUP).
  const signal = await new Promise<StopSignal>((resolve) => {
    const stopListening = listenForInterrupts(io.stdin, {
      onInterrupt: (received) => {
        stopListening();
        resolve(received);
      },
      onForce: () => undefined,
    });
  });
  await sim.close();
  return exitCodeFor(stopReasonFor(signal));
}
