import { delimiter } from 'node:path';
import { Command, CommanderError } from 'commander';
import { DelegateError } from '@delegate/core';
import { isEnvTruthy } from '@delegate/tool-filter';
import type { ServerConfigInput } from './server-config.js';

// No default list is given to commander: it would print `(default: [])` after the defaults the
// descriptions name (the current directory, CORS off).
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function list(text: string | undefined, separator: string): string[] | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  return text
    .split(separator)
    .map((item) => item.trim())
    .filter(Boolean);
}

function pacing(text: string | undefined): ServerConfigInput['simPacing'] {
  if (text === undefined) return undefined;
  const [first, perToken] = text.split(',');
  return { timeToFirstTokenMs: first ?? '', msPerToken: perToken ?? '0' };
}

/**
 * A switch variable: on as `isEnvTruthy` reads it (1, true, yes, on); unset, empty, 0, false,
 * no or off leave it off; anything else is refused rather than guessed.
 */
function trueVariable(value: string | undefined): boolean {
  if (isEnvTruthy(value)) return true;
  if (value === undefined || ['', '0', 'false', 'no', 'off'].includes(value.trim().toLowerCase()))
    return false;
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `delegate-server: DELEGATE_TRUST_WORKSPACE_AGENTS: ${JSON.stringify(value.slice(0, 40))} is not a switch; use 1 or 0.`,
  );
}

/** The command's definition (also its `--help`). */
export function createCommand(): Command {
  return new Command('delegate-server')
    .description(
      'HTTP + SSE API and dashboard for Delegate runs (SQLite or PostgreSQL store, in-process or BullMQ queue).',
    )
    .option('--port <port>', 'port to listen on (DELEGATE_SERVER_PORT; default 8787, 0: any)')
    .option('--host <host>', 'address to bind (DELEGATE_SERVER_HOST; default 127.0.0.1)')
    .option(
      '--data-dir <dir>',
      'database, token and transcripts (DELEGATE_SERVER_DATA_DIR; default ~/.delegate/server)',
    )
    .option(
      '--workspace-root <dir>',
      `directory runs may work in; repeat for several (DELEGATE_SERVER_WORKSPACE_ROOTS, "${delimiter}"-separated; default the current directory)`,
      collect,
    )
    .option(
      '--max-concurrent-runs <n>',
      'runs working at once (DELEGATE_SERVER_MAX_CONCURRENT_RUNS; default 4)',
    )
    .option(
      '--sim [policy]',
      'use an in-process simulator: echo (default), demo, or a policy module path',
    )
    .option('--sim-pacing <ttft,msPerToken>', 'simulator latency in ms, e.g. 100,2 (default none)')
    .option(
      '--cors-origin <origin>',
      'allow this browser origin; repeat for several (DELEGATE_SERVER_CORS_ORIGINS, ","-separated; default: CORS off)',
      collect,
    )
    .option('--rate-limit <n>', 'requests per minute per token (default 600)')
    .option(
      '--auth-failure-limit <n>',
      'failed authentications per minute per address (default 30)',
    )
    .option('--body-limit <bytes>', 'largest request body (default 1048576)')
    .option('--keep-alive-ms <ms>', 'SSE keep-alive interval (default 15000)')
    .option(
      '--headers-timeout-ms <ms>',
      'time a client has to send request headers before its socket is closed (default 10000)',
    )
    .option('--shutdown-timeout-ms <ms>', 'grace time for running turns on SIGTERM (default 30000)')
    .option('--idle-sessions <n>', 'finished sessions kept in memory (default 32)')
    .option(
      '--trust-workspace-agents',
      "apply workspace agent files' permissionMode, hooks and MCP servers as written (DELEGATE_TRUST_WORKSPACE_AGENTS=1; default: left out, with a warning)",
    )
    .option(
      '--store <url>',
      'shared PostgreSQL store, postgres://… (DELEGATE_STORE_URL; default SQLite in the data dir)',
    )
    .option(
      '--queue <url>',
      'shared BullMQ queue on Redis, redis://… (DELEGATE_QUEUE_URL; default in-process)',
    )
    .option(
      '--queue-prefix <prefix>',
      'prefix of the Redis keys (DELEGATE_QUEUE_PREFIX; default delegate)',
    )
    .option('--worker', 'only take runs from the shared queue; serve no HTTP API')
    .option(
      '--health-port <port>',
      'with --worker: serve /healthz, /readyz and /metrics on this port (DELEGATE_SERVER_HEALTH_PORT; 0: any)',
    )
    .option('--api-only', 'only serve the HTTP API; take no runs (workers do)')
    .option('--max-failovers <n>', 'moves to another worker before a run is failed (default 3)')
    .option(
      '--failover-after-ms <ms>',
      'a silent worker loses its runs to another after this long (default 30000)',
    )
    .option(
      '--log-level <level>',
      'fatal, error, warn, info, debug, trace or silent (DELEGATE_SERVER_LOG_LEVEL; default info)',
    )
    .exitOverride()
    .configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: () => undefined });
}

/**
 * Reads flags and environment into a configuration input (flags win); `parseServerConfig`
 * validates it. Returns undefined when `--help` or `--version` was answered.
 */
export function readCommandLine(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): ServerConfigInput | undefined {
  const command = createCommand();
  try {
    command.parse([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError && error.code === 'commander.helpDisplayed')
      return undefined;
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `delegate-server: ${error instanceof Error ? error.message.replace(/^error: /, '') : String(error)}. Run delegate-server --help for the options.`,
    );
  }
  const flags = command.opts<Record<string, string | string[] | boolean | undefined>>();
  const text = (name: string): string | undefined => flags[name] as string | undefined;
  const input: ServerConfigInput = {};
  const set = <K extends keyof ServerConfigInput>(
    key: K,
    value: ServerConfigInput[K] | undefined,
  ) => {
    if (value !== undefined) input[key] = value;
  };
  set('port', text('port') ?? env.DELEGATE_SERVER_PORT);
  set('host', text('host') ?? env.DELEGATE_SERVER_HOST);
  // The variable may sit in an environment API and worker processes share: only a worker reads
  // it. The flag on a non-worker is refused by parseServerConfig.
  set(
    'healthPort',
    text('healthPort') ??
      (flags.worker === true ? env.DELEGATE_SERVER_HEALTH_PORT || undefined : undefined),
  );
  set('dataDir', text('dataDir') ?? env.DELEGATE_SERVER_DATA_DIR);
  set(
    'workspaceRoots',
    (flags.workspaceRoot as string[] | undefined) ??
      list(env.DELEGATE_SERVER_WORKSPACE_ROOTS, delimiter),
  );
  set('maxConcurrentRuns', text('maxConcurrentRuns') ?? env.DELEGATE_SERVER_MAX_CONCURRENT_RUNS);
  set('sim', flags.sim === true ? 'echo' : (flags.sim as string | undefined));
  set('simPacing', pacing(text('simPacing')));
  set(
    'corsOrigins',
    (flags.corsOrigin as string[] | undefined) ?? list(env.DELEGATE_SERVER_CORS_ORIGINS, ','),
  );
  set('rateLimitPerMinute', text('rateLimit'));
  set('authFailuresPerMinute', text('authFailureLimit'));
  set('bodyLimitBytes', text('bodyLimit'));
  set('keepAliveMs', text('keepAliveMs'));
  set('headersTimeoutMs', text('headersTimeoutMs'));
  set('shutdownTimeoutMs', text('shutdownTimeoutMs'));
  set('idleSessions', text('idleSessions'));
  set(
    'trustWorkspaceAgents',
    flags.trustWorkspaceAgents === true || trueVariable(env.DELEGATE_TRUST_WORKSPACE_AGENTS)
      ? true
      : undefined,
  );
  set(
    'logLevel',
    (text('logLevel') ?? env.DELEGATE_SERVER_LOG_LEVEL) as ServerConfigInput['logLevel'],
  );
  set('store', text('store') ?? (env.DELEGATE_STORE_URL || undefined));
  set('queue', text('queue') ?? (env.DELEGATE_QUEUE_URL || undefined));
  set('queuePrefix', text('queuePrefix') ?? (env.DELEGATE_QUEUE_PREFIX || undefined));
  if (flags.worker === true && flags.apiOnly === true)
    throw new DelegateError(
      'INVALID_ARGUMENT',
      'delegate-server: --worker and --api-only exclude each other (a process that does neither does nothing). Pass one of them, or neither to serve the API and take runs.',
    );
  set('role', flags.worker === true ? 'worker' : flags.apiOnly === true ? 'api' : undefined);
  set('maxFailovers', text('maxFailovers'));
  set('failoverAfterMs', text('failoverAfterMs'));
  set('apiKey', env.ANTHROPIC_API_KEY || undefined);
  set('baseURL', env.ANTHROPIC_BASE_URL || undefined);
  set('token', env.DELEGATE_SERVER_TOKEN || undefined);
  return input;
}
