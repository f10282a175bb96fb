import type { CliIo } from '../cli-io.js';
import { EXIT_CODES, type ExitCode } from '../exit-codes.js';
import { defaultSimPolicy } from '../session/default-sim-policy.js';
import { loadPolicyModule } from '../session/load-policy-module.js';

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
    ? await loadPolicyModule(options.policy, io.cwd)
    : await defaultSimPolicy();
  const sim = await startSim({ policy, port: options.port, host: options.host });
  io.stdout.write(
    options.json ? `${JSON.stringify({ url: sim.url, port: sim.port })}\n` : `${sim.url}\n`,
  );
  io.stderr.write(
    `api-sim listening; point a client at it with ANTHROPIC_BASE_URL=${sim.url} and any ANTHROPIC_API_KEY. Ctrl-C stops it.\n`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await sim.close();
  return EXIT_CODES.success;
}
