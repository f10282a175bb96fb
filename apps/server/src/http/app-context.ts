import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Logger } from 'pino';
import type { RunEventHub } from '../events/run-event-hub.js';
import type { RunQueue } from '../queue/run-queue.js';
import type { RunService } from '../runner/run-service.js';
import type { RunStore } from '../store/run-store.js';
import type { AuthVariables } from './auth-middleware.js';
import type { OpenStreams } from './open-streams.js';

/** Context variables of every request. */
export type AppEnv = { Variables: AuthVariables & { requestId: string } };

/** The app type the routes are registered on. */
export type App = OpenAPIHono<AppEnv>;

/** What the routes need. */
export type AppDependencies = {
  service: RunService;
  store: RunStore;
  hub: RunEventHub;
  queue: RunQueue;
  logger: Logger;
  /** The workspace roots, real paths. */
  workspaceRoots: readonly string[];
  /** The workspace roots as configured (symbolic links not followed). */
  configuredWorkspaceRoots: readonly string[];
  homeDir: string | undefined;
  /** Apply workspace agent files as written (`--trust-workspace-agents`). */
  trustWorkspaceAgents: boolean;
  keepAliveMs: number;
  /** Aborts when the server shuts down (ends every event stream). */
  shutdownSignal: AbortSignal;
  /** Event streams in progress. */
  streams: OpenStreams;
  /** False once the server is shutting down. */
  isAccepting: () => boolean;
  /** With a shared store: true while this node hears other nodes' event appends. */
  appendWatch?: () => boolean;
};

/** The bearer scheme every /v1 route uses, for the OpenAPI document. */
export const SECURITY = [{ bearerAuth: [] }];
