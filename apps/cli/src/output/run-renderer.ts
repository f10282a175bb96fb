import type { AgentEvent } from '@delegate/core';
import type { QueryEvent } from '@delegate/runtime';
import type { AgentTree } from '../usage/agent-tree.js';

/** What a renderer is told once the session exists, before the first request. */
export type RunStartInfo = {
  /** Session id (transcripts and `--resume` use it). */
  sessionId: string;
  /** Main model id. */
  model: string;
  /** Main agent's working directory. */
  cwd: string;
  /** Names of the main agent's tools. */
  tools: string[];
  /** Agent types the main agent can start. */
  agents: string[];
  /** Main agent's permission mode. */
  permissionMode: string;
  /** Configured MCP servers and where each stands. */
  mcpServers: Array<{ name: string; status: string }>;
  /** `sim` when an in-process simulator answers, else where the key came from. */
  apiKeySource: string;
};

/**
 * What stopped a run from outside: Ctrl-C or SIGINT, SIGTERM, the terminal closing (SIGHUP),
 * or the output's reader leaving.
 */
export type StopReason = 'interrupted' | 'terminated' | 'hangup' | 'output_closed';

/** How a run ended, for exit codes and result lines. */
export type RunExitReason = 'completed' | 'max_turns' | 'aborted' | 'error' | StopReason;

/** What a renderer is told once the run is over. */
export type RunResult = {
  /** Session id. */
  sessionId: string;
  /** The main agent's final answer. */
  text: string;
  /** How the run ended. */
  exitReason: RunExitReason;
  /** What went wrong, when it did not complete. */
  error?: string;
  /** Wall time of the run. */
  durationMs: number;
  /** Wall time the main agent spent waiting for the API. */
  durationApiMs: number;
  /** Main-agent responses. */
  numTurns: number;
  /** Every agent with its usage and cost. */
  tree: AgentTree;
};

/** A renderer that shows nothing (the demo's comparison run, the interactive session's turns). */
export const SILENT_RENDERER: RunRenderer = {
  start: () => undefined,
  onMainEvent: () => undefined,
  onAgentEvent: () => undefined,
  finish: async () => undefined,
};

/** Turns a run into output: a live view, plain lines, one JSON object, or NDJSON. */
export interface RunRenderer {
  /** Once, before the first request. */
  start(info: RunStartInfo): void;
  /** Every event the main agent's run yields. */
  onMainEvent(event: QueryEvent): void;
  /** Every lifecycle event of the session. */
  onAgentEvent(event: AgentEvent): void;
  /** Once, at the end. */
  finish(result: RunResult): Promise<void>;
}
