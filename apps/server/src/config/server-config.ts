import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { DelegateError } from '@delegate/core';
import { z } from 'zod';

const wholeNumber = (minimum: number, maximum: number) =>
  z.preprocess(
    (value) => (typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value),
    z
      .number({ error: (issue) => `must be a whole number, got ${JSON.stringify(issue.input)}` })
      .int(`must be a whole number from ${minimum} to ${maximum}`)
      .min(minimum, `must be at least ${minimum}`)
      .max(maximum, `must be at most ${maximum}`),
  );

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Latency of the in-process simulator. */
export const SimPacing = z.object({
  /** Delay before a response starts, in ms. */
  timeToFirstTokenMs: wholeNumber(0, 600_000).default(0),
  /** Delay per output token, in ms. */
  msPerToken: wholeNumber(0, 60_000).default(0),
});

/** The server's configuration, from flags, environment or code; validated at start. */
export const ServerConfig = z
  .object({
    /** Port to listen on (0: any free port). */
    port: wholeNumber(0, 65_535).default(8787),
    /**
     * Port of a worker's health listener, serving only `/healthz`, `/readyz` and `/metrics`
     * (0: any free port); a worker serves no HTTP without it. Only with `role: 'worker'`.
     */
    healthPort: wholeNumber(0, 65_535).optional(),
    /** Address to bind; loopback by default so nothing outside this machine can connect. */
    host: z.string().trim().min(1).default('127.0.0.1'),
    /** Where the database, the token, transcripts and task output live. */
    dataDir: z
      .string()
      .trim()
      .min(1)
      .default(() => join(homedir(), '.delegate', 'server'))
      .transform((path) => resolve(path)),
    /** Directories runs may work in (a run's workspace must lie inside one). */
    workspaceRoots: z
      .array(z.string().trim().min(1))
      .min(1)
      .default(() => [process.cwd()]),
    /** Most runs working at once; more wait in the queue. */
    maxConcurrentRuns: wholeNumber(1, 10_000).default(4),
    /** Messages API key (never logged, stored or passed to tools). */
    apiKey: z.string().trim().min(1).optional(),
    /** Messages API base URL: http or https only, refused at start rather than at the first run. */
    baseURL: z
      .url({
        protocol: /^https?$/,
        // The value is never repeated: a mistyped base URL may carry a credential (`user:key@gateway`).
        error:
          'must be an http:// or https:// URL, such as https://api.anthropic.com or a proxy (the value is not shown: it may hold a credential)',
      })
      .refine(
        (url) => {
          // Not a URL at all: the check above says so.
          if (!URL.canParse(url)) return true;
          const parsed = new URL(url);
          return parsed.username === '' && parsed.password === '';
        },
        {
          message:
            "holds a user name or password (user:secret@host), and Node's fetch refuses to send a request to such a URL, so every run would fail; give the URL without them and the credential as the API key (the value is not shown)",
        },
      )
      .optional(),
    /** Run an in-process simulator with this policy (`echo`, `demo` or a module path). */
    sim: z.string().trim().min(1).optional(),
    /** Latency of the in-process simulator. */
    simPacing: SimPacing.optional(),
    /** The bearer token clients must send; generated and stored in `dataDir` when absent. */
    token: z
      .string()
      .min(16, 'must be at least 16 characters (use a long random value)')
      .max(512)
      .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
      .optional(),
    /** Origins allowed by CORS (none: CORS off). */
    corsOrigins: z.array(z.url()).default([]),
    /** Requests per minute per token. */
    rateLimitPerMinute: wholeNumber(1, 10_000_000).default(600),
    /** Failed authentications per minute per client address before 429. */
    authFailuresPerMinute: wholeNumber(1, 10_000_000).default(30),
    /** Largest request body in bytes (413 beyond). */
    bodyLimitBytes: wholeNumber(1_024, 100_000_000).default(1_048_576),
    /** Interval of SSE keep-alive comments, in ms. */
    keepAliveMs: wholeNumber(10, 3_600_000).default(15_000),
    /** How long a client may take to send a request's headers before its socket is closed, in ms. */
    headersTimeoutMs: wholeNumber(100, 600_000).default(10_000),
    /** Grace time for running turns on SIGTERM before they are interrupted, in ms. */
    shutdownTimeoutMs: wholeNumber(0, 3_600_000).default(30_000),
    /** Finished sessions kept in memory for quick continuation (older ones reload from transcripts). */
    idleSessions: wholeNumber(0, 10_000).default(32),
    /** Log level. */
    logLevel: z.enum(LOG_LEVELS).default('info'),
    /** Home directory for user agents and memory (default the OS home). */
    homeDir: z.string().trim().min(1).optional(),
    /**
     * Apply the agent files of workspaces (`.claude/agents`, `.delegate/agents`) as written:
     * a looser `permissionMode`, `hooks` and MCP servers defined in the file. Off by default:
     * whatever a clone or a branch holds would otherwise run programs on the server.
     */
    trustWorkspaceAgents: z.boolean().default(false),
    /** A shared PostgreSQL store (`postgres://…`); default the embedded SQLite file in `dataDir`. */
    store: z
      .string()
      .trim()
      .regex(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// or postgresql:// URL')
      .optional(),
    /** A shared BullMQ queue on Redis (`redis://…`); default the in-process queue. */
    queue: z
      .string()
      .trim()
      .regex(/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// URL')
      .optional(),
    /** Prefix of the queue's Redis keys and channels (several deployments on one Redis). */
    queuePrefix: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1 to 64 letters, digits, ".", "_" or "-"')
      .default('delegate'),
    /** What this process does: serve the API and take runs, only take runs, or only serve the API. */
    role: z.enum(['all', 'worker', 'api']).default('all'),
    /** Times a run may move to another worker after its worker died before it is failed. */
    maxFailovers: wholeNumber(0, 1_000).default(3),
    /** How long a silent worker keeps its runs before another worker takes them over, in ms. */
    failoverAfterMs: wholeNumber(1_000, 3_600_000).default(30_000),
  })
  .strict()
  .superRefine((config, context) => {
    if (config.role !== 'all' && config.queue === undefined)
      context.addIssue({
        code: 'custom',
        path: ['role'],
        message: `${config.role === 'worker' ? '--worker' : '--api-only'} needs a shared queue: pass --queue redis://… (and --store postgres://…)`,
      });
    if (config.healthPort !== undefined && config.role !== 'worker')
      context.addIssue({
        code: 'custom',
        path: ['healthPort'],
        message:
          'is for --worker processes only: an API node serves /healthz, /readyz and /metrics on --port',
      });
    if (config.queue !== undefined && config.store === undefined)
      context.addIssue({
        code: 'custom',
        path: ['store'],
        message:
          'a shared queue needs a shared store: pass --store postgres://… so every worker sees the same runs',
      });
  });
export type ServerConfig = z.infer<typeof ServerConfig>;
/** What callers may pass: every field optional, numbers as numbers or digit strings. */
export type ServerConfigInput = z.input<typeof ServerConfig>;

/** Flag of each config field, for error messages. */
export const CONFIG_FLAGS: Readonly<Record<string, string>> = {
  port: '--port',
  healthPort: '--health-port',
  host: '--host',
  dataDir: '--data-dir',
  workspaceRoots: '--workspace-root',
  maxConcurrentRuns: '--max-concurrent-runs',
  apiKey: 'ANTHROPIC_API_KEY',
  baseURL: 'ANTHROPIC_BASE_URL',
  sim: '--sim',
  simPacing: '--sim-pacing',
  token: 'DELEGATE_SERVER_TOKEN',
  corsOrigins: '--cors-origin',
  rateLimitPerMinute: '--rate-limit',
  authFailuresPerMinute: '--auth-failure-limit',
  bodyLimitBytes: '--body-limit',
  keepAliveMs: '--keep-alive-ms',
  headersTimeoutMs: '--headers-timeout-ms',
  shutdownTimeoutMs: '--shutdown-timeout-ms',
  idleSessions: '--idle-sessions',
  logLevel: '--log-level',
  homeDir: 'HOME',
  trustWorkspaceAgents: '--trust-workspace-agents',
  store: '--store',
  queue: '--queue',
  queuePrefix: '--queue-prefix',
  role: '--worker/--api-only',
  maxFailovers: '--max-failovers',
  failoverAfterMs: '--failover-after-ms',
};

/**
 * Validates a configuration. Every problem is reported at once, each with the flag or
 * variable that sets it; a key or a token is never echoed back.
 */
export function parseServerConfig(input: unknown): ServerConfig {
  const parsed = ServerConfig.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const [first, ...rest] = issue.path.map(String);
      const name =
        first === undefined
          ? 'config'
          : `${CONFIG_FLAGS[first] ?? first}${rest.length > 0 ? `.${rest.join('.')}` : ''}`;
      return `  ${name}: ${issue.message}`;
    });
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `delegate-server: invalid configuration:\n${lines.join('\n')}\nRun delegate-server --help for the options.`,
    );
  }
  const config = parsed.data;
  // An API-only node never talks to a model: its workers do.
  if (config.apiKey === undefined && config.sim === undefined && config.role !== 'api') {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      'delegate-server: no model to talk to. Set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a proxy), or start with --sim to use the built-in simulator.',
    );
  }
  return config;
}
