import type { CompleteUsage } from '@delegate/core';
import type { RunOptions, RunStatus } from '../http/schemas.js';

/** What a queued run will do when a worker takes it. */
export type RunInput =
  | {
      /** The run's first turn, with the prompt it was created with. */
      kind: 'start';
    }
  | {
      /** A further turn with a new user message. */
      kind: 'message';
      /** The message. */
      text: string;
    }
  | {
      /** Continues an interrupted run from its transcripts. */
      kind: 'resume';
      /** Optional message for the main agent; a default note otherwise. */
      text?: string;
      /**
       * The input of the turn that was cut off (a takeover): sent instead of `text` when the
       * restored conversation does not hold it yet (the worker died before storing it).
       */
      original?: string;
    };

/** A run's error, as the API shows it. */
export type RunError = {
  /** Machine-readable code (a `DelegateErrorCode` or a server code). */
  code: string;
  /** What happened and what to do. */
  message: string;
};

/** A run as stored. */
export type RunRecord = {
  /** Run id (`run_` + 24 hex digits); also the runtime session id. */
  id: string;
  /** Lifecycle status. */
  status: RunStatus;
  /** The prompt the run was created with. */
  prompt: string;
  /** Options the run was created with (the workspace resolved to a real path). */
  options: RunOptions;
  /** Real path of the run's workspace (the main agent's working directory). */
  workspace: string;
  /** Runtime session id (the transcript file name). */
  sessionId: string;
  /** Directory of the runtime's JSONL transcripts for this run. */
  transcriptDir: string;
  /** The input a worker will run next, while the run is queued. */
  pending: RunInput | null;
  /** The main agent's last answer. */
  result: string | null;
  /** Why the run failed or was interrupted. */
  error: RunError | null;
  /** ISO 8601 creation time. */
  createdAt: string;
  /** ISO 8601 time of the last change. */
  updatedAt: string;
  /** ISO 8601 time the last turn started. */
  startedAt: string | null;
  /** ISO 8601 time the last turn ended. */
  endedAt: string | null;
};

/** Fields of a new run. */
export type NewRun = Omit<RunRecord, 'updatedAt' | 'startedAt' | 'endedAt' | 'result' | 'error'>;

/** Fields of a run that may change. */
export type RunPatch = Partial<
  Pick<RunRecord, 'status' | 'pending' | 'result' | 'error' | 'startedAt' | 'endedAt'>
>;

/** Status of one agent of a run's tree. */
export type AgentStatus = 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted';

/** How an agent runs: the run's main agent, or a sub-agent's start mode. */
export type AgentMode = 'main' | 'foreground' | 'background' | 'fork';

/** One agent of a run's tree, with its usage and cost. */
export type AgentRecord = {
  /** Run the agent belongs to. */
  runId: string;
  /** Agent id (`main` for the main agent). */
  agentId: string;
  /** Agent that spawned it; null for the main agent. */
  parentAgentId: string | null;
  /** Agent type (`fork` for forks, `main` or the chosen agent for the main agent). */
  agentType: string;
  /** Short description from the Agent tool call. */
  description: string;
  /** How it was started. */
  mode: AgentMode;
  /** True once it runs in the background (started there, or moved). */
  backgrounded: boolean;
  /** Model id. */
  model: string;
  /** Display color from its definition, when it has one. */
  color: string | null;
  /** Status. */
  status: AgentStatus;
  /** Tool it is running now, if any. */
  currentTool: string | null;
  /** Last thing it did. */
  lastActivity: string | null;
  /** Task id of its current or last run (sub-agents). */
  taskId: string | null;
  /** Tool calls so far. */
  toolUseCount: number;
  /** Token usage so far. */
  usage: CompleteUsage;
  /** Cost of `usage` in US dollars. */
  costUsd: number;
  /** False when the model has no price, so `costUsd` is incomplete. */
  priced: boolean;
  /** Its JSONL transcript file. */
  transcriptPath: string | null;
  /** ISO 8601 start time. */
  startedAt: string;
  /** ISO 8601 end time. */
  endedAt: string | null;
  /** Why it failed, was cancelled or interrupted. */
  error: string | null;
};

/** A task of a run (a sub-agent run or a background shell). */
export type TaskRecord = {
  /** Run the task belongs to. */
  runId: string;
  /** Task id. */
  taskId: string;
  /** Agent the task runs, for agent tasks. */
  agentId: string | null;
  /** Task type (`local_agent`, `local_bash`, …). */
  type: string;
  /** What it does. */
  description: string;
  /** Task status. */
  status: string;
  /** True when it runs in the background. */
  backgrounded: boolean;
  /** ISO 8601 start time. */
  startedAt: string;
  /** ISO 8601 end time. */
  endedAt: string | null;
};

/** One entry of a run's append-only event log. */
export type StoredEvent = {
  /** Run the event belongs to. */
  runId: string;
  /** Position in the run's log, from 1 without gaps (the SSE `id`). */
  seq: number;
  /** Event type (`run.status`, `agent.started`, …). */
  type: string;
  /** Agent the event is about, if any. */
  agentId: string | null;
  /** ISO 8601 time the event was emitted. */
  time: string;
  /** The event itself (its `type` field included). */
  data: Record<string, unknown>;
};

/**
 * A piece of one of a run's transcript files (JSONL lines, or a whole metadata file), so
 * that any worker can restore the files and resume any agent of the run.
 */
export type TranscriptChunk = {
  /** Run the transcript belongs to. */
  runId: string;
  /** File path relative to the transcript directory (`<run>.jsonl`, `<run>/agents/<id>.jsonl`). */
  file: string;
  /** Byte offset of `content` in the file (0 for a file stored whole). */
  offset: number;
  /** The bytes, as UTF-8 text (whole lines). */
  content: string;
};

/** Usage and cost of every agent of one model, summed over all runs. */
export type ModelTotals = {
  /** Model id. */
  model: string;
  /** Token usage. */
  usage: CompleteUsage;
  /** Cost in US dollars (of the priced agents). */
  costUsd: number;
};

/** Totals over the whole store, for metrics. */
export type StoreSummary = {
  /** Number of runs per status. */
  runsByStatus: Record<string, number>;
  /** Usage and cost per model. */
  models: ModelTotals[];
  /** Model responses recorded (one usage change each). */
  turns: number;
  /** Takeovers of runs from workers that stopped answering. */
  failovers: number;
};

/** Positions some process appended to a run's event log (a shared store's notification). */
export type EventsAppended = {
  /** The run. */
  runId: string;
  /** First position appended. */
  firstSeq: number;
  /** Last position appended. */
  lastSeq: number;
};

/** What a shared store tells about its watch of other processes' appends, besides the appends. */
export type AppendWatchEvents = {
  /** The watch broke off (the database went away): appends are not heard until it is back. */
  onLost?: (error: unknown) => void;
  /**
   * The watch is back after a loss. Appends made meanwhile were not heard: read the log from
   * the last position delivered (the event hub's `catchUp`).
   */
  onRestored?: () => void;
};

/** A page of runs, newest first. */
export type RunPage = {
  /** Runs of this page. */
  runs: RunRecord[];
  /** Cursor of the next page; null on the last page. */
  nextCursor: string | null;
};

/**
 * Where the server keeps runs, agent trees, tasks, the event log and a copy of the
 * transcripts (the runtime writes JSONL files; every finished turn is copied into the
 * store, so another worker can restore them). Every implementation runs the shared
 * contract suite (`run-store-contract.ts`); SQLite and PostgreSQL share the Kysely queries
 * and migrations (`KyselyRunStore`).
 */
export interface RunStore {
  /** Applies pending schema migrations; safe to call on every start. */
  migrate(): Promise<void>;
  /** Resolves when the store answers a trivial query (readiness). */
  ping(): Promise<void>;
  /** Closes connections. */
  close(): Promise<void>;

  /** Inserts a new run; rejects when the id exists. */
  createRun(run: NewRun): Promise<RunRecord>;
  /** A run, or undefined. */
  getRun(runId: string): Promise<RunRecord | undefined>;
  /** Runs newest first, optionally of one status, `limit` per page. */
  listRuns(options: { status?: RunStatus; limit: number; cursor?: string }): Promise<RunPage>;
  /**
   * Changes a run when its status is one of `from` (compare-and-set, so two workers or a
   * cancel racing a start cannot both win); returns the updated run, or undefined when the
   * status did not match or the run does not exist.
   */
  transitionRun(options: {
    runId: string;
    from: readonly RunStatus[];
    patch: RunPatch;
  }): Promise<RunRecord | undefined>;
  /** Ids of runs in any of `statuses`, oldest first. */
  runIdsWithStatus(statuses: readonly RunStatus[]): Promise<string[]>;

  /** Inserts or replaces an agent of a run's tree. */
  upsertAgent(agent: AgentRecord): Promise<void>;
  /** The run's agents in start order. */
  listAgents(runId: string): Promise<AgentRecord[]>;
  /** Inserts or replaces a task. */
  upsertTask(task: TaskRecord): Promise<void>;
  /** The run's tasks in start order. */
  listTasks(runId: string): Promise<TaskRecord[]>;
  /** Ids of the runs that have a task stored as `running`, in no particular order. */
  runIdsWithRunningTasks(): Promise<string[]>;

  /** Appends events in one transaction; `seq` values must continue the run's log. */
  appendEvents(events: readonly StoredEvent[]): Promise<void>;
  /** Events with `seq` greater than `after`, in order, at most `limit`. */
  listEvents(options: { runId: string; after: number; limit: number }): Promise<StoredEvent[]>;
  /** The last event of `type` with `seq` at most `atOrBefore` (default: the end of the log). */
  lastEventOfType(options: {
    runId: string;
    type: string;
    atOrBefore?: number;
  }): Promise<StoredEvent | undefined>;
  /** The highest `seq` of the run's log (0 when it is empty). */
  lastEventSeq(runId: string): Promise<number>;

  /** Totals for metrics: runs by status, usage and cost by model, turns, failovers. */
  summarize(): Promise<StoreSummary>;

  /** Stores transcript pieces; a piece at an offset already stored replaces it. */
  saveTranscriptChunks(chunks: readonly TranscriptChunk[]): Promise<void>;
  /** The run's transcript pieces, by file, then offset. */
  listTranscriptChunks(runId: string): Promise<TranscriptChunk[]>;

  /**
   * Calls `listener` with the positions whenever any process appends events to any run's log (a shared store
   * only; absent on embedded stores, where the only writer is this process). Resolves with
   * a function that stops listening. A watch that breaks off is opened again, with a growing
   * pause between attempts, until it is back or stopped; `events` hears of both.
   */
  watchAppends?(
    listener: (append: EventsAppended) => void,
    events?: AppendWatchEvents,
  ): Promise<() => Promise<void>>;
}
