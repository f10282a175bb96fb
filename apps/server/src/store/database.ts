/** Columns of `runs`. */
export type RunsTable = {
  id: string;
  status: string;
  prompt: string;
  options: string;
  workspace: string;
  session_id: string;
  transcript_dir: string;
  pending: string | null;
  result: string | null;
  error: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  ended_at: string | null;
};

/** Columns of `agents`. */
export type AgentsTable = {
  run_id: string;
  agent_id: string;
  position: number;
  parent_agent_id: string | null;
  agent_type: string;
  description: string;
  mode: string;
  backgrounded: number;
  model: string;
  color: string | null;
  status: string;
  current_tool: string | null;
  last_activity: string | null;
  task_id: string | null;
  tool_use_count: number;
  usage: string;
  cost_usd: number;
  priced: number;
  transcript_path: string | null;
  started_at: string;
  ended_at: string | null;
  error: string | null;
};

/** Columns of `tasks`. */
export type TasksTable = {
  run_id: string;
  task_id: string;
  position: number;
  agent_id: string | null;
  type: string;
  description: string;
  status: string;
  backgrounded: number;
  started_at: string;
  ended_at: string | null;
};

/** Columns of `events`. */
export type EventsTable = {
  run_id: string;
  seq: number;
  type: string;
  agent_id: string | null;
  time: string;
  data: string;
};

/** Columns of `transcripts`: pieces of a run's transcript files, by byte offset. */
export type TranscriptsTable = {
  run_id: string;
  file: string;
  byte_offset: number;
  content: string;
};

/**
 * The store's schema as Kysely sees it. Only portable column types are used (text,
 * integer, double precision; booleans as 0/1, JSON as text, times as ISO 8601 text) so
 * SQLite and PostgreSQL share the queries and the migrations.
 */
export type Database = {
  runs: RunsTable;
  agents: AgentsTable;
  tasks: TasksTable;
  events: EventsTable;
  transcripts: TranscriptsTable;
};
