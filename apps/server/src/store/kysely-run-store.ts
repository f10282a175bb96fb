import {
  type CompleteUsage,
  DelegateError,
  addUsage,
  completeUsage,
  emptyUsage,
} from '@delegate/core';
import { type Kysely, type Selectable, type Transaction, Migrator, sql } from 'kysely';
import { RunOptions, type RunStatus } from '../http/schemas.js';
import type { AgentsTable, Database, EventsTable, RunsTable, TasksTable } from './database.js';
import { migrationProvider } from './migrations.js';
import type {
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
  StoredEvent,
  StoreSummary,
  TaskRecord,
  TranscriptChunk,
} from './run-store.js';

function parseJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

function toRun(row: Selectable<RunsTable>): RunRecord {
  return {
    id: row.id,
    status: row.status as RunStatus,
    prompt: row.prompt,
    options: RunOptions.parse(JSON.parse(row.options)),
    workspace: row.workspace,
    sessionId: row.session_id,
    transcriptDir: row.transcript_dir,
    pending: parseJson<RunInput>(row.pending),
    result: row.result,
    error: parseJson<RunError>(row.error),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    startedAt: row.started_at,
    endedAt: row.ended_at,
  };
}

function toAgent(row: Selectable<AgentsTable>): AgentRecord {
  return {
    runId: row.run_id,
    agentId: row.agent_id,
    parentAgentId: row.parent_agent_id,
    agentType: row.agent_type,
    description: row.description,
    mode: row.mode as AgentMode,
    backgrounded: Number(row.backgrounded) === 1,
    model: row.model,
    color: row.color,
    status: row.status as AgentStatus,
    currentTool: row.current_tool,
    lastActivity: row.last_activity,
    taskId: row.task_id,
    toolUseCount: Number(row.tool_use_count),
    usage: completeUsage(JSON.parse(row.usage) as CompleteUsage),
    costUsd: Number(row.cost_usd),
    priced: Number(row.priced) === 1,
    transcriptPath: row.transcript_path,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    error: row.error,
  };
}

function toTask(row: Selectable<TasksTable>): TaskRecord {
  return {
    runId: row.run_id,
    taskId: row.task_id,
    agentId: row.agent_id,
    type: row.type,
    description: row.description,
    status: row.status,
    backgrounded: Number(row.backgrounded) === 1,
    startedAt: row.started_at,
    endedAt: row.ended_at,
  };
}

function toEvent(row: Selectable<EventsTable>): StoredEvent {
  return {
    runId: row.run_id,
    seq: Number(row.seq),
    type: row.type,
    agentId: row.agent_id,
    time: row.time,
    data: JSON.parse(row.data) as Record<string, unknown>,
  };
}

function patchColumns(patch: RunPatch): Partial<RunsTable> {
  const columns: Partial<RunsTable> = {};
  if (patch.status !== undefined) columns.status = patch.status;
  if (patch.pending !== undefined)
    columns.pending = patch.pending === null ? null : JSON.stringify(patch.pending);
  if (patch.result !== undefined) columns.result = patch.result;
  if (patch.error !== undefined)
    columns.error = patch.error === null ? null : JSON.stringify(patch.error);
  if (patch.startedAt !== undefined) columns.started_at = patch.startedAt;
  if (patch.endedAt !== undefined) columns.ended_at = patch.endedAt;
  return columns;
}

function encodeCursor(run: RunRecord): string {
  return Buffer.from(JSON.stringify([run.createdAt, run.id])).toString('base64url');
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string'
    )
      return [value[0], value[1]];
  } catch {
    // Reported below.
  }
  throw new DelegateError(
    'INVALID_ARGUMENT',
    'cursor: not a cursor this server returned. Pass the nextCursor of a previous page, or leave it out for the first page.',
    { details: { field: 'cursor' } },
  );
}

/** Work done in the transaction of an append, after the rows are inserted. */
export type AfterAppend = (
  transaction: Transaction<Database>,
  events: readonly StoredEvent[],
) => Promise<void>;

/**
 * A `RunStore` over any Kysely dialect whose SQL supports `RETURNING` and
 * `ON CONFLICT … DO UPDATE` (SQLite 3.35+, PostgreSQL). `SqliteRunStore` wires it to
 * better-sqlite3; a PostgreSQL store passes a `PostgresDialect` instance.
 */
export class KyselyRunStore implements RunStore {
  /** The query builder (exposed for store-specific tests and tools). */
  readonly db: Kysely<Database>;
  private readonly onClose: (() => Promise<void>) | undefined;

  private readonly afterAppend: AfterAppend | undefined;

  constructor(options: {
    db: Kysely<Database>;
    onClose?: () => Promise<void>;
    /** Runs inside the transaction that appends events (PostgreSQL: NOTIFY). */
    afterAppend?: AfterAppend;
  }) {
    this.db = options.db;
    this.onClose = options.onClose;
    this.afterAppend = options.afterAppend;
  }

  /** Applies every migration in `MIGRATIONS` that has not run yet. */
  async migrate(): Promise<void> {
    const migrator = new Migrator({ db: this.db, provider: migrationProvider });
    const { error, results } = await migrator.migrateToLatest();
    if (error !== undefined) {
      const failed = results?.find((result) => result.status === 'Error')?.migrationName;
      throw new DelegateError(
        'FILE_SYSTEM_ERROR',
        `Store migration ${failed ?? '(unknown)'} failed: ${error instanceof Error ? error.message : String(error)}. The database was left at the last migration that succeeded; fix the cause (disk, permissions, a newer schema from another server version) and start again.`,
        { cause: error },
      );
    }
  }

  /** Runs `select 1`. */
  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  /** Destroys the connection pool. */
  async close(): Promise<void> {
    await this.db.destroy();
    await this.onClose?.();
  }

  /** Inserts a run. */
  async createRun(run: NewRun): Promise<RunRecord> {
    const existing = await this.getRun(run.id);
    if (existing)
      throw new DelegateError('INVALID_ARGUMENT', `A run with id ${run.id} already exists.`);
    const row = await this.db
      .insertInto('runs')
      .values({
        id: run.id,
        status: run.status,
        prompt: run.prompt,
        options: JSON.stringify(run.options),
        workspace: run.workspace,
        session_id: run.sessionId,
        transcript_dir: run.transcriptDir,
        pending: run.pending === null ? null : JSON.stringify(run.pending),
        result: null,
        error: null,
        created_at: run.createdAt,
        updated_at: run.createdAt,
        started_at: null,
        ended_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toRun(row);
  }

  /** A run, or undefined. */
  async getRun(runId: string): Promise<RunRecord | undefined> {
    const row = await this.db
      .selectFrom('runs')
      .selectAll()
      .where('id', '=', runId)
      .executeTakeFirst();
    return row ? toRun(row) : undefined;
  }

  /** Runs newest first. */
  async listRuns(options: {
    status?: RunStatus;
    limit: number;
    cursor?: string;
  }): Promise<RunPage> {
    let query = this.db.selectFrom('runs').selectAll();
    if (options.status !== undefined) query = query.where('status', '=', options.status);
    if (options.cursor !== undefined) {
      const [createdAt, id] = decodeCursor(options.cursor);
      query = query.where((eb) =>
        eb.or([
          eb('created_at', '<', createdAt),
          eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)]),
        ]),
      );
    }
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(options.limit + 1)
      .execute();
    const runs = rows.slice(0, options.limit).map(toRun);
    const last = runs.at(-1);
    return {
      runs,
      nextCursor: rows.length > options.limit && last ? encodeCursor(last) : null,
    };
  }

  /** Compare-and-set on the run's status. */
  async transitionRun(options: {
    runId: string;
    from: readonly RunStatus[];
    patch: RunPatch;
  }): Promise<RunRecord | undefined> {
    if (options.from.length === 0) return undefined;
    const row = await this.db
      .updateTable('runs')
      .set({ ...patchColumns(options.patch), updated_at: new Date().toISOString() })
      .where('id', '=', options.runId)
      .where('status', 'in', [...options.from])
      .returningAll()
      .executeTakeFirst();
    return row ? toRun(row) : undefined;
  }

  /** Ids of runs in the given statuses, oldest first. */
  async runIdsWithStatus(statuses: readonly RunStatus[]): Promise<string[]> {
    if (statuses.length === 0) return [];
    const rows = await this.db
      .selectFrom('runs')
      .select('id')
      .where('status', 'in', [...statuses])
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
    return rows.map((row) => row.id);
  }

  /** Inserts or replaces an agent (its tree position is kept). */
  async upsertAgent(agent: AgentRecord): Promise<void> {
    const columns = {
      parent_agent_id: agent.parentAgentId,
      agent_type: agent.agentType,
      description: agent.description,
      mode: agent.mode,
      backgrounded: agent.backgrounded ? 1 : 0,
      model: agent.model,
      color: agent.color,
      status: agent.status,
      current_tool: agent.currentTool,
      last_activity: agent.lastActivity,
      task_id: agent.taskId,
      tool_use_count: agent.toolUseCount,
      usage: JSON.stringify(agent.usage),
      cost_usd: agent.costUsd,
      priced: agent.priced ? 1 : 0,
      transcript_path: agent.transcriptPath,
      started_at: agent.startedAt,
      ended_at: agent.endedAt,
      error: agent.error,
    };
    await this.db
      .insertInto('agents')
      .values({
        run_id: agent.runId,
        agent_id: agent.agentId,
        position: sql<number>`(select coalesce(max(position), 0) + 1 from agents where run_id = ${agent.runId})`,
        ...columns,
      })
      .onConflict((conflict) => conflict.columns(['run_id', 'agent_id']).doUpdateSet(columns))
      .execute();
  }

  /** Agents in the order they were first stored. */
  async listAgents(runId: string): Promise<AgentRecord[]> {
    const rows = await this.db
      .selectFrom('agents')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('position', 'asc')
      .execute();
    return rows.map(toAgent);
  }

  /** Inserts or replaces a task. */
  async upsertTask(task: TaskRecord): Promise<void> {
    const columns = {
      agent_id: task.agentId,
      type: task.type,
      description: task.description,
      status: task.status,
      backgrounded: task.backgrounded ? 1 : 0,
      started_at: task.startedAt,
      ended_at: task.endedAt,
    };
    await this.db
      .insertInto('tasks')
      .values({
        run_id: task.runId,
        task_id: task.taskId,
        position: sql<number>`(select coalesce(max(position), 0) + 1 from tasks where run_id = ${task.runId})`,
        ...columns,
      })
      .onConflict((conflict) => conflict.columns(['run_id', 'task_id']).doUpdateSet(columns))
      .execute();
  }

  /** Ids of the runs with a task stored as running. */
  async runIdsWithRunningTasks(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('tasks')
      .select('run_id')
      .distinct()
      .where('status', '=', 'running')
      .execute();
    return rows.map((row) => row.run_id);
  }

  /** Tasks in the order they were first stored. */
  async listTasks(runId: string): Promise<TaskRecord[]> {
    const rows = await this.db
      .selectFrom('tasks')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('position', 'asc')
      .execute();
    return rows.map(toTask);
  }

  /** Appends events in one transaction. */
  async appendEvents(events: readonly StoredEvent[]): Promise<void> {
    if (events.length === 0) return;
    const rows = events.map((event) => ({
      run_id: event.runId,
      seq: event.seq,
      type: event.type,
      agent_id: event.agentId,
      time: event.time,
      data: JSON.stringify(event.data),
    }));
    await this.db.transaction().execute(async (transaction) => {
      // Batches keep each statement under SQLite's bound-parameter limit.
      for (let start = 0; start < rows.length; start += 100) {
        await transaction
          .insertInto('events')
          .values(rows.slice(start, start + 100))
          .execute();
      }
      await this.afterAppend?.(transaction, events);
    });
  }

  /** Totals for metrics. */
  async summarize(): Promise<StoreSummary> {
    const statuses = await this.db
      .selectFrom('runs')
      .select((eb) => ['status', eb.fn.countAll<number>().as('count')])
      .groupBy('status')
      .execute();
    const runsByStatus: Record<string, number> = {};
    for (const row of statuses) runsByStatus[row.status] = Number(row.count);
    const agents = await this.db
      .selectFrom('agents')
      .select(['model', 'usage', 'cost_usd'])
      .execute();
    const models = new Map<string, { usage: CompleteUsage; costUsd: number }>();
    for (const agent of agents) {
      const totals = models.get(agent.model) ?? { usage: emptyUsage(), costUsd: 0 };
      totals.usage = completeUsage(
        addUsage(totals.usage, JSON.parse(agent.usage) as CompleteUsage),
      );
      totals.costUsd += Number(agent.cost_usd);
      models.set(agent.model, totals);
    }
    const counts = await this.db
      .selectFrom('events')
      .select((eb) => ['type', eb.fn.countAll<number>().as('count')])
      .where('type', 'in', ['agent.usage', 'run.failover'])
      .groupBy('type')
      .execute();
    const count = (type: string) => Number(counts.find((row) => row.type === type)?.count ?? 0);
    return {
      runsByStatus,
      models: [...models].map(([model, totals]) => ({ model, ...totals })),
      turns: count('agent.usage'),
      failovers: count('run.failover'),
    };
  }

  /** Stores transcript pieces, replacing one at the same offset. */
  async saveTranscriptChunks(chunks: readonly TranscriptChunk[]): Promise<void> {
    if (chunks.length === 0) return;
    await this.db.transaction().execute(async (transaction) => {
      for (const chunk of chunks) {
        await transaction
          .insertInto('transcripts')
          .values({
            run_id: chunk.runId,
            file: chunk.file,
            byte_offset: chunk.offset,
            content: chunk.content,
          })
          .onConflict((conflict) =>
            conflict
              .columns(['run_id', 'file', 'byte_offset'])
              .doUpdateSet({ content: chunk.content }),
          )
          .execute();
      }
    });
  }

  /** The run's transcript pieces by file and offset. */
  async listTranscriptChunks(runId: string): Promise<TranscriptChunk[]> {
    const rows = await this.db
      .selectFrom('transcripts')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('file', 'asc')
      .orderBy('byte_offset', 'asc')
      .execute();
    return rows.map((row) => ({
      runId: row.run_id,
      file: row.file,
      offset: Number(row.byte_offset),
      content: row.content,
    }));
  }

  /** Events after `after`, in order. */
  async listEvents(options: {
    runId: string;
    after: number;
    limit: number;
  }): Promise<StoredEvent[]> {
    const rows = await this.db
      .selectFrom('events')
      .selectAll()
      .where('run_id', '=', options.runId)
      .where('seq', '>', options.after)
      .orderBy('seq', 'asc')
      .limit(options.limit)
      .execute();
    return rows.map(toEvent);
  }

  /** The last event of a type at or before a position. */
  async lastEventOfType(options: {
    runId: string;
    type: string;
    atOrBefore?: number;
  }): Promise<StoredEvent | undefined> {
    let query = this.db
      .selectFrom('events')
      .selectAll()
      .where('run_id', '=', options.runId)
      .where('type', '=', options.type);
    if (options.atOrBefore !== undefined) query = query.where('seq', '<=', options.atOrBefore);
    const row = await query.orderBy('seq', 'desc').limit(1).executeTakeFirst();
    return row ? toEvent(row) : undefined;
  }

  /** The highest seq of a run's log. */
  async lastEventSeq(runId: string): Promise<number> {
    const row = await this.db
      .selectFrom('events')
      .select((eb) => eb.fn.max('seq').as('last'))
      .where('run_id', '=', runId)
      .executeTakeFirst();
    return row?.last === null || row?.last === undefined ? 0 : Number(row.last);
  }
}
