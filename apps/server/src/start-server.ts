import { setMaxListeners } from 'node:events';
import { chmod, mkdir, realpath, stat } from 'node:fs/promises';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { type ServerType, createAdaptorServer } from '@hono/node-server';
import type { Sim } from '@delegate/api-sim';
import { DelegateError, errorMessage } from '@delegate/core';
import type { DestinationStream, Logger } from 'pino';
import {
  type ServerConfig,
  type ServerConfigInput,
  parseServerConfig,
} from './config/server-config.js';
import { type ServerToken, loadServerToken } from './config/server-token.js';
import { RunEventHub } from './events/run-event-hub.js';
import { createApp, createHealthApp } from './http/create-app.js';
import { capSocketsPerAddress, socketTimeouts } from './http/guard-sockets.js';
import { OpenStreams } from './http/open-streams.js';
import { createLogger } from './logging/create-logger.js';
import { InProcessRunQueue } from './queue/in-process-run-queue.js';
import { BullRunQueue } from './queue/bull-run-queue.js';
import type { RunJob, RunQueue, RunQueueShutdown } from './queue/run-queue.js';
import { openRedis } from './queue/bull-run-queue.js';
import { LocalRunControl, RedisRunControl, type RunControl } from './runner/run-control.js';
import { RunExecutor } from './runner/run-executor.js';
import { RunService } from './runner/run-service.js';
import {
  MIN_SECRET_LENGTH,
  createRedactor,
  redactableSecrets,
} from './security/create-redactor.js';
import { startInProcessSim } from './sim/start-in-process-sim.js';
import type { RunStore } from './store/run-store.js';
import { openPostgresRunStore } from './store/postgres-run-store.js';
import { redactUrl, urlPasswords } from './store/redact-url.js';
import { openSqliteRunStore } from './store/sqlite-run-store.js';
import { isInside } from './workspace/resolve-workspace.js';

/** How long a shutdown waits for events held for a store that does not answer, in ms. */
const EVENTS_FLUSH_GIVE_UP_MS = 5_000;

/** A running delegate-server. */
export type DelegateServer = {
  /**
   * Base URL (`http://127.0.0.1:PORT`). A worker (`role: 'worker'`) serves no API: its URL is
   * that of its health listener (`healthPort`), or empty without one.
   */
  url: string;
  /** Port it listens on (a worker's health port; 0 for a worker without one). */
  port: number;
  /** The bearer token clients must send. */
  token: ServerToken;
  /** The validated configuration. */
  config: ServerConfig;
  /** The run store. */
  store: RunStore;
  /** The logger. */
  logger: Logger;
  /** The in-process simulator, with `--sim`. */
  sim: Sim | undefined;
  /**
   * Shuts down gracefully: stops taking work, lets running turns finish for
   * `shutdownTimeoutMs` (or `timeoutMs`), marks the rest interrupted, ends event streams,
   * closes the store. Calling it again returns the same promise.
   */
  close(options?: { timeoutMs?: number }): Promise<RunQueueShutdown>;
};

/** Parts a deployment may replace (the scale-out uses PostgreSQL and BullMQ). */
export type ServerParts = {
  /** The store; default SQLite in the data directory. */
  store?: RunStore;
  /** The queue; default in-process with `maxConcurrentRuns`. */
  queue?: RunQueue;
  /** Where JSON logs go; default stdout. */
  logDestination?: DestinationStream;
  /**
   * Called when the server has no working run left (after each turn that leaves it idle).
   * The `delegate-server` bin uses it to collect garbage, so memory goes back to about its
   * idle size between bursts of work instead of waiting for V8's next major collection.
   */
  onIdle?: () => void;
  /** Called when a run starts working on an idle server (the bin cancels a pending collection). */
  onBusy?: () => void;
};

// The connection URLs hold the store's and the queue's passwords, which may be too short to
// be found by value.
const SECRET_VARIABLES = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'DELEGATE_SERVER_TOKEN',
  'DELEGATE_STORE_URL',
  'DELEGATE_QUEUE_URL',
];

/** This process's environment without the credentials, for the commands runs execute. */
function toolEnvironment(secrets: readonly (string | undefined)[]): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (SECRET_VARIABLES.includes(name) || value === undefined) continue;
    if (redactableSecrets(secrets).some((secret) => value.includes(secret))) continue;
    environment[name] = value;
  }
  return environment;
}

async function realRoots(roots: readonly string[]): Promise<string[]> {
  return Promise.all(
    roots.map(async (root) => {
      try {
        return await realpath(root);
      } catch (error) {
        throw new DelegateError(
          'INVALID_ARGUMENT',
          `--workspace-root: ${root} does not exist (${errorMessage(error)}). Create it or pass another directory.`,
        );
      }
    }),
  );
}

async function prepareDataDir(config: ServerConfig, roots: readonly string[]): Promise<string> {
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const dataDir = await realpath(config.dataDir);
  const overlap = roots.find((root) => isInside(root, dataDir) || isInside(dataDir, root));
  if (overlap !== undefined) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `--data-dir ${dataDir} overlaps the workspace root ${overlap}: runs could read the server's token and database. Put the data directory outside every workspace root.`,
    );
  }
  // The database and the transcripts hold every run's prompts and results: a data directory
  // that already existed open to the group or others (mkdir keeps an existing one's mode) is
  // made private, as a new one is. One owned by another user is left alone: chmod would fail.
  const stats = await stat(dataDir);
  if ((stats.mode & 0o077) !== 0 && stats.uid === process.getuid?.()) await chmod(dataDir, 0o700);
  return dataDir;
}

function listen(
  server: ServerType,
  options: { port: number; host: string; portFlag: string },
): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', (error) => {
      reject(
        new DelegateError(
          'INVALID_ARGUMENT',
          `Cannot listen on ${options.host}:${options.port}: ${errorMessage(error)}. Pick another ${options.portFlag} or --host.`,
          { cause: error },
        ),
      );
    });
    // A deep accept queue: hundreds of dashboards and SSE clients may connect at once.
    server.listen({ port: options.port, host: options.host, backlog: 4_096 }, () =>
      resolve(server.address() as AddressInfo),
    );
  });
}

/** Everything the configuration resolves to before the store opens. */
type Foundation = {
  config: ServerConfig;
  /** The workspace roots, real paths. */
  roots: string[];
  /** The workspace roots as configured (absolute, symbolic links not followed). */
  configuredRoots: string[];
  dataDir: string;
  token: ServerToken;
  sim: Sim | undefined;
  secrets: (string | undefined)[];
  redact: <T>(value: T) => T;
  logger: Logger;
};

async function lay(input: ServerConfigInput, parts: ServerParts): Promise<Foundation> {
  const config = parseServerConfig(input);
  const roots = await realRoots(config.workspaceRoots);
  const dataDir = await prepareDataDir(config, roots);
  const token = await loadServerToken({ configured: config.token, dataDir });
  const sim = config.sim
    ? await startInProcessSim({
        policy: config.sim,
        ...(config.simPacing ? { pacing: config.simPacing } : {}),
      })
    : undefined;
  // Passwords in connection URLs are secrets like the key and the token: never logged.
  const secrets = [
    config.apiKey,
    token.token,
    ...urlPasswords(config.store),
    ...urlPasswords(config.queue),
  ];
  const logger = createLogger({
    level: config.logLevel,
    secrets,
    ...(parts.logDestination ? { destination: parts.logDestination } : {}),
  });
  for (const [setting, url] of [
    ['store', config.store],
    ['queue', config.queue],
  ] as const) {
    if (urlPasswords(url).some((password) => password.length < MIN_SECRET_LENGTH))
      logger.warn(
        { setting },
        `the ${setting} URL's password is under 8 characters: too short to redact, so a tool result that shows it (a file that holds it, say) is not cleaned; use a longer password`,
      );
  }
  return {
    config,
    roots,
    configuredRoots: config.workspaceRoots.map((root) => resolve(root)),
    dataDir,
    token,
    sim,
    secrets,
    redact: createRedactor(secrets),
    logger,
  };
}

/** The store, the event log, the queue and what runs the work. */
type Engine = {
  store: RunStore;
  hub: RunEventHub;
  queue: RunQueue;
  service: RunService;
  control: RunControl;
  /** What runs turns; undefined on an API-only node. */
  executor: RunExecutor | undefined;
  /**
   * Recovers the runs a previous process left and starts taking work (the queue's worker and,
   * on a shared queue, the requeue sweep). Until then the engine touches no run.
   */
  start: () => Promise<void>;
  /** Stops the requeue sweep and listening for other processes' event appends. */
  stopWatching: () => Promise<void>;
  /** With a shared store: true while other processes' appends are heard (for /readyz). */
  appendWatch?: () => boolean;
};

async function assemble(base: Foundation, parts: ServerParts): Promise<Engine> {
  const { config, logger, redact } = base;
  const store: RunStore =
    parts.store ??
    (config.store
      ? await openPostgresRunStore({ url: config.store })
      : openSqliteRunStore({ path: join(base.dataDir, 'runs.sqlite') }));
  await store.migrate();
  const hub = new RunEventHub({
    store,
    redact,
    onWriteError: (runId, error) =>
      logger.error({ runId, err: redact(errorMessage(error)) }, 'storing events failed'),
    // Said on the first failure of a series, and then every tenth (about every 100 s).
    onRetry: (runId, error, attempt) => {
      if (attempt === 1 || attempt % 10 === 0)
        logger.warn(
          { runId, attempt, err: redact(errorMessage(error)) },
          'could not store events; keeping them and trying again',
        );
    },
  });
  const onHandlerError = (job: RunJob, error: unknown): void =>
    logger.error({ runId: job.runId, err: redact(errorMessage(error)) }, 'run job failed');
  const queue: RunQueue =
    parts.queue ??
    (config.queue
      ? new BullRunQueue({
          url: config.queue,
          prefix: config.queuePrefix,
          concurrency: config.maxConcurrentRuns,
          lockDurationMs: config.failoverAfterMs,
          // The executor fails a run past maxFailovers; BullMQ must not fail the job first.
          maxStalledCount: config.maxFailovers + 1,
          onHandlerError,
          onConnection: (change) =>
            change.state === 'lost'
              ? logger.warn(
                  { err: redact(errorMessage(change.error)) },
                  'lost the connection to the Redis queue; new runs are refused with 503 and runs cannot be handed to workers until it is back (reconnecting)',
                )
              : logger.info('the Redis queue answers again'),
        })
      : new InProcessRunQueue({ concurrency: config.maxConcurrentRuns, onHandlerError }));
  if (config.queue && !parts.queue && !(await queue.ready())) {
    await queue.shutdown({ timeoutMs: 0 });
    await store.close();
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Cannot reach the Redis queue at ${redactUrl(config.queue)} (no answer to PING within a second). Check that Redis runs and the URL is right (--queue / DELEGATE_QUEUE_URL).`,
    );
  }
  const baseURL = base.sim?.url ?? config.baseURL;
  const executor =
    config.role === 'api'
      ? undefined
      : new RunExecutor({
          store,
          hub,
          logger,
          redact,
          idleSessions: config.idleSessions,
          shared: queue.shared === true,
          maxFailovers: config.maxFailovers,
          ...(queue.shared ? { lockDurationMs: config.failoverAfterMs } : {}),
          ...(parts.onIdle ? { onIdle: parts.onIdle } : {}),
          ...(parts.onBusy ? { onBusy: parts.onBusy } : {}),
          defaults: {
            dataDir: base.dataDir,
            apiKey: config.apiKey ?? 'sim-key',
            ...(baseURL ? { baseURL } : {}),
            ...(config.homeDir ? { homeDir: config.homeDir } : {}),
            trustWorkspaceAgents: config.trustWorkspaceAgents,
            workspaceRoots: base.roots,
            toolEnv: toolEnvironment(base.secrets),
            secrets: redactableSecrets(base.secrets),
          },
        });
  const appendWatch = { listening: true };
  const stopWatching = store.watchAppends
    ? await store.watchAppends((append) => hub.appendedElsewhere(append), {
        onLost: (error) => {
          appendWatch.listening = false;
          logger.warn(
            { err: redact(errorMessage(error)) },
            "lost the PostgreSQL listener that hears other nodes' events; following runs from this node waits until it is back (retrying)",
          );
        },
        onRestored: () => {
          appendWatch.listening = true;
          logger.info(
            "listening to other nodes' events again; catching up on what was stored meanwhile",
          );
          hub.catchUp();
        },
      })
    : undefined;
  const control = config.queue
    ? await RedisRunControl.open({
        executor,
        connect: () => openRedis(config.queue!),
        prefix: config.queuePrefix,
      })
    : new LocalRunControl(executor);
  const service = new RunService({
    store,
    hub,
    queue,
    executor,
    control,
    logger,
    workspaceRoots: base.roots,
    configuredWorkspaceRoots: base.configuredRoots,
    dataDir: base.dataDir,
    redact,
    ...(config.homeDir ? { homeDir: config.homeDir } : {}),
  });
  let sweep: NodeJS.Timeout | undefined;
  return {
    store,
    hub,
    queue,
    service,
    control,
    executor,
    start: async () => {
      await service.recover();
      if (executor) queue.start(executor.handle);
      if (executor && queue.shared) sweep = startRequeueSweep(service, config, logger);
    },
    stopWatching: async () => {
      clearInterval(sweep);
      await stopWatching?.();
    },
    ...(stopWatching ? { appendWatch: () => appendWatch.listening } : {}),
  };
}

/**
 * Now and then queues runs the store says are queued but whose job a race lost, and takes over
 * running runs nobody holds (shared queue).
 */
function startRequeueSweep(
  service: RunService,
  config: ServerConfig,
  logger: Logger,
): NodeJS.Timeout {
  let busy = false;
  const timer = setInterval(
    () => {
      if (busy) return;
      busy = true;
      service
        .requeueQueued()
        .then(() => service.takeOverOrphaned())
        .catch((error: unknown) =>
          logger.warn({ err: errorMessage(error) }, 'requeue sweep failed'),
        )
        .finally(() => {
          busy = false;
        });
    },
    Math.max(10_000, config.failoverAfterMs),
  );
  timer.unref();
  return timer;
}

/** Closes the HTTP server: idle sockets at once, the rest after a second. */
function closeHttp(server: ServerType): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      if ('closeAllConnections' in server) server.closeAllConnections();
    }, 1_000);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    if ('closeIdleConnections' in server) server.closeIdleConnections();
  });
}

/**
 * Undoes a start that failed after the engine was assembled: stops the queue without waiting,
 * closes the listener, the run control, the append watch, the store and the simulator. Every
 * step runs even when an earlier one fails; their errors are logged, the start's is thrown.
 */
async function abandon(
  base: Foundation,
  engine: Engine,
  server: ServerType | undefined,
): Promise<void> {
  const steps: [string, () => Promise<unknown>][] = [
    ['queue', () => engine.queue.shutdown({ timeoutMs: 0 })],
    ['listener', async () => (server?.listening ? closeHttp(server) : undefined)],
    ['run control', () => engine.control.close()],
    ['append watch', () => engine.stopWatching()],
    ['events', () => engine.hub.flushAll({ giveUpAfterMs: 0 })],
    ['store', () => engine.store.close()],
    ['simulator', async () => base.sim?.close()],
  ];
  for (const [part, step] of steps) {
    try {
      await step();
    } catch (error) {
      base.logger.warn(
        { part, err: base.redact(errorMessage(error)) },
        'closing after a failed start',
      );
    }
  }
}

/**
 * Starts delegate-server: validates the configuration, opens the store, listens, then recovers
 * runs and starts taking work. When it cannot listen (a port in use) it rejects naming the port,
 * having taken no run and closed what it opened.
 */
export async function startServer(
  input: ServerConfigInput = {},
  parts: ServerParts = {},
): Promise<DelegateServer> {
  const base = await lay(input, parts);
  const { config, logger } = base;
  const engine = await assemble(base, parts).catch(async (error: unknown) => {
    await base.sim?.close();
    throw error;
  });
  const shutdown = new AbortController();
  // Every open event stream listens for the shutdown.
  setMaxListeners(0, shutdown.signal);
  const streams = new OpenStreams();
  // Not ready (/readyz) until the engine has recovered and takes work.
  let accepting = false;
  const dependencies = {
    ...engine,
    logger,
    workspaceRoots: base.roots,
    configuredWorkspaceRoots: base.configuredRoots,
    homeDir: config.homeDir,
    trustWorkspaceAgents: config.trustWorkspaceAgents,
    keepAliveMs: config.keepAliveMs,
    shutdownSignal: shutdown.signal,
    streams,
    isAccepting: () => accepting,
    security: {
      token: base.token.token,
      corsOrigins: config.corsOrigins,
      rateLimitPerMinute: config.rateLimitPerMinute,
      authFailuresPerMinute: config.authFailuresPerMinute,
      bodyLimitBytes: config.bodyLimitBytes,
      redact: base.redact,
    },
  };
  // A worker serves no API: it takes runs from the shared queue, and answers health probes
  // and metrics scrapes only when it has a health port.
  const listener =
    config.role !== 'worker'
      ? { app: createApp(dependencies), port: config.port, portFlag: '--port' }
      : config.healthPort !== undefined
        ? { app: createHealthApp(dependencies), port: config.healthPort, portFlag: '--health-port' }
        : undefined;
  const server = listener
    ? createAdaptorServer({
        fetch: listener.app.fetch,
        serverOptions: socketTimeouts({ headersTimeoutMs: config.headersTimeoutMs }),
      })
    : undefined;
  if (server) capSocketsPerAddress(server as HttpServer);
  let address: AddressInfo | undefined;
  // Listen first: a process that cannot bind its port (another one may hold it, on the same
  // data directory) must not recover that one's runs or take jobs before it gives up.
  try {
    address =
      server && listener
        ? await listen(server, {
            port: listener.port,
            host: config.host,
            portFlag: listener.portFlag,
          })
        : undefined;
    await engine.start();
  } catch (error) {
    await abandon(base, engine, server);
    throw error;
  }
  accepting = true;
  const host = address?.family === 'IPv6' ? `[${address.address}]` : address?.address;
  const url = address ? `http://${host}:${address.port}` : '';
  logger.info(
    {
      ...(address ? { url } : {}),
      role: config.role,
      store: config.store ? 'postgres' : 'sqlite',
      queue: config.queue ? 'bullmq' : 'in-process',
      dataDir: base.dataDir,
      workspaceRoots: base.roots,
      tokenSource: base.token.source,
    },
    config.role === 'worker' ? 'delegate-server worker taking runs' : 'delegate-server listening',
  );

  let closing: Promise<RunQueueShutdown> | undefined;
  const close = (options: { timeoutMs?: number } = {}): Promise<RunQueueShutdown> => {
    closing ??= (async () => {
      accepting = false;
      engine.service.stopAccepting();
      const result = await engine.queue.shutdown({
        timeoutMs: options.timeoutMs ?? config.shutdownTimeoutMs,
      });
      // Kept for a next message that will now go to another process (or a restart).
      await engine.executor?.closeIdle();
      // Events held for a store that does not answer are dropped after a while: it must end.
      await engine.hub.flushAll({ giveUpAfterMs: EVENTS_FLUSH_GIVE_UP_MS });
      // Event streams send what is left and end; then the sockets close.
      shutdown.abort();
      await streams.drained(2_000);
      if (server) await closeHttp(server);
      await engine.control.close();
      await engine.stopWatching();
      await engine.store.close();
      await base.sim?.close();
      logger.info({ ...result }, 'delegate-server stopped');
      return result;
    })();
    return closing;
  };
  return {
    url,
    port: address?.port ?? 0,
    token: base.token,
    config,
    store: engine.store,
    logger,
    sim: base.sim,
    close,
  };
}
