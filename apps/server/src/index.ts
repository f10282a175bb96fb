export { startServer } from './start-server.js';
export type { DelegateServer, ServerParts } from './start-server.js';
export { ServerConfig, parseServerConfig } from './config/server-config.js';
export type { ServerConfigInput } from './config/server-config.js';
export { loadServerToken } from './config/server-token.js';
export type { ServerToken } from './config/server-token.js';
export type {
  AgentMode,
  AgentRecord,
  AgentStatus,
  NewRun,
  RunError,
  RunInput,
  RunPage,
  RunPatch,
  RunRecord,
  RunStore,
  EventsAppended,
  ModelTotals,
  StoreSummary,
  StoredEvent,
  TaskRecord,
  TranscriptChunk,
} from './store/run-store.js';
export { KyselyRunStore } from './store/kysely-run-store.js';
export type { AfterAppend } from './store/kysely-run-store.js';
export { PostgresRunStore, openPostgresRunStore } from './store/postgres-run-store.js';
export { openSqliteRunStore } from './store/sqlite-run-store.js';
export { MIGRATIONS, migrationProvider } from './store/migrations.js';
export type { Database } from './store/database.js';
export type {
  RunJob,
  RunJobHandler,
  RunQueue,
  RunQueueShutdown,
  RunQueueStats,
} from './queue/run-queue.js';
export { InProcessRunQueue } from './queue/in-process-run-queue.js';
export { BullRunQueue } from './queue/bull-run-queue.js';
export type { BullRunQueueOptions } from './queue/bull-run-queue.js';
export { CreateRunBody, RunEventData, RunEventView, RunStatus, RunView } from './http/schemas.js';
