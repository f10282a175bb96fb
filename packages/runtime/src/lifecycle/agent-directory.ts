import {
  type CompleteUsage,
  DelegateError,
  addUsage,
  emptyUsage,
  getLastAssistantMessage,
  getText,
} from '@delegate/core';
import { capReport } from '../agent-tool/finalize-agent-result.js';
import type { AgentRecord, AgentRecordStatus } from './agent-record.js';

/** What is left of a finished agent once its record was compacted: enough to explain and resume it. */
export type CompactedAgent = {
  /** Marks a compacted entry. */
  readonly compacted: true;
  /** Agent id. */
  readonly agentId: string;
  /** Name to address it with SendMessage. */
  readonly name?: string;
  /** Agent type. */
  readonly agentType: string;
  /** Short description from the Agent tool call. */
  readonly description: string;
  /** How its last run ended. */
  readonly status: Exclude<AgentRecordStatus, 'running'>;
  /** Task of its last run. */
  readonly taskId?: string;
  /** Tokens of every run, summed. */
  readonly usage: CompleteUsage;
  /** Its last report (capped like the Agent tool's result), when it gave one. */
  readonly result?: string;
};

/** A spawned agent as the directory holds it: whole, or compacted after it finished. */
export type AgentEntry = AgentRecord | CompactedAgent;

/** True for an entry whose conversation was released. */
export function isCompacted(entry: AgentEntry): entry is CompactedAgent {
  return 'compacted' in entry;
}

function summarize(record: AgentRecord): { usage: CompleteUsage; result?: string } {
  let usage = emptyUsage();
  for (const message of record.messages) {
    if (message.type === 'assistant') usage = addUsage(usage, message.message.usage);
  }
  const last = getLastAssistantMessage(record.messages);
  const text = last ? getText(last.message.content) : '';
  return text ? { usage, result: capReport(text) } : { usage };
}

function compact(record: AgentRecord): CompactedAgent {
  return {
    ...summarize(record),
    compacted: true,
    agentId: record.agentId,
    agentType: record.agentType,
    description: record.description,
    status: record.status === 'running' ? 'idle' : record.status,
    ...(record.name ? { name: record.name } : {}),
    ...(record.taskId ? { taskId: record.taskId } : {}),
  };
}

/** Options of an {@link AgentDirectory}. */
export type AgentDirectoryOptions = {
  /** Finished records kept whole. */
  maxRetained: number;
  /** Summaries of compacted records kept; older ones are forgotten (default: no limit). */
  maxSummaries?: number;
};

/**
 * The agents of a session by id and by name. The last `maxRetained` finished records are
 * kept whole (SendMessage continues them in memory); older finished ones are compacted to a
 * summary (id, type, status, usage, capped report), and past `maxSummaries` summaries the
 * oldest are forgotten, so a long session holds a bounded amount per agent. A forgotten
 * agent's name stays taken. Running agents are counted per parent, so "does this agent
 * still have running children" costs O(1).
 */
export class AgentDirectory {
  private readonly entries = new Map<string, AgentEntry>();
  private readonly finished = new Set<AgentRecord>();
  private readonly running = new Set<AgentRecord>();
  private readonly runningChildren = new Map<string, number>();
  private readonly claimed = new Set<string>();
  private readonly summaries = new Set<CompactedAgent>();
  // Names of forgotten agents: a name is never handed out twice in a session.
  private readonly retiredNames = new Set<string>();
  private readonly maxRetained: number;
  private readonly maxSummaries: number;

  constructor(options: AgentDirectoryOptions) {
    this.maxRetained = options.maxRetained;
    this.maxSummaries = options.maxSummaries ?? Number.POSITIVE_INFINITY;
  }

  /**
   * Registers a record under its id and, when it has one, its name (a name another agent
   * holds is left with that agent: a resumed agent never takes over someone's messages).
   */
  add(record: AgentRecord): void {
    this.entries.set(record.agentId, record);
    if (!record.name) return;
    this.claimed.delete(record.name);
    const holder = this.entries.get(record.name);
    if (!holder || holder.agentId === record.agentId) this.entries.set(record.name, record);
  }

  /**
   * Reserves `name` for an agent about to start, so two agents can never share a name
   * (SendMessage routes by it) and a name never hides an agent id or a task id. Throws
   * `INVALID_ARGUMENT` saying which agent holds it; `release` frees a name whose agent
   * did not start.
   */
  claimName(name: string, options: { isTaskId: (id: string) => boolean }): { release: () => void } {
    const holder = this.entries.get(name);
    if (holder && holder.agentId === name) {
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `Agent name "${name}" is the id of another agent in this session; SendMessage would not know which one you mean. Choose another name.`,
      );
    }
    if (holder || this.claimed.has(name) || this.retiredNames.has(name)) {
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `Agent name "${name}" is already taken in this session${holder ? ` by agent ${holder.agentId} (${holder.agentType})` : this.claimed.has(name) ? ' by an agent that is starting' : ' by an agent that finished long ago'}; names are unique. Choose another name, or use SendMessage to continue that agent.`,
      );
    }
    if (options.isTaskId(name)) {
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `Agent name "${name}" is the id of a task in this session. Choose another name.`,
      );
    }
    this.claimed.add(name);
    return { release: () => void this.claimed.delete(name) };
  }

  /** The entry of an id or name. */
  get(key: string): AgentEntry | undefined {
    return this.entries.get(key);
  }

  /** Names (or ids, for unnamed agents) that can be messaged, at most `limit` of them. */
  addresses(limit = 50): string[] {
    const seen = new Set<string>();
    for (const entry of this.entries.values()) {
      seen.add(entry.name ?? entry.agentId);
      if (seen.size >= limit) break;
    }
    return [...seen];
  }

  /** A run of `record` starts (a compacted record that is continued becomes whole again). */
  runStarted(record: AgentRecord): void {
    this.finished.delete(record);
    this.restore(record);
    if (this.running.has(record)) return;
    this.running.add(record);
    const parent = record.parentAgentId;
    if (parent) this.runningChildren.set(parent, (this.runningChildren.get(parent) ?? 0) + 1);
  }

  /** A run of `record` ended (once per run); compacts the oldest finished records past the limit. */
  runEnded(record: AgentRecord): void {
    if (!this.running.delete(record)) return;
    const parent = record.parentAgentId;
    if (parent) {
      const left = (this.runningChildren.get(parent) ?? 1) - 1;
      if (left > 0) this.runningChildren.set(parent, left);
      else this.runningChildren.delete(parent);
    }
    if (this.entries.get(record.agentId) !== record) return;
    this.finished.add(record);
    while (this.finished.size > this.maxRetained) {
      const oldest = this.finished.values().next().value as AgentRecord;
      this.finished.delete(oldest);
      this.compact(oldest);
    }
  }

  /** True while agents that `agentId` started are running. */
  hasRunningChildren(agentId: string): boolean {
    return this.runningChildren.has(agentId);
  }

  /** Number of finished records kept whole. */
  get retainedFinished(): number {
    return this.finished.size;
  }

  /** Number of compacted summaries kept. */
  get retainedSummaries(): number {
    return this.summaries.size;
  }

  private restore(record: AgentRecord): void {
    const entry = this.entries.get(record.agentId);
    if (entry === record) return;
    if (entry && isCompacted(entry)) this.summaries.delete(entry);
    this.entries.set(record.agentId, record);
    const named = record.name ? this.entries.get(record.name) : undefined;
    if (record.name && (!named || (isCompacted(named) && named.agentId === record.agentId)))
      this.entries.set(record.name, record);
  }

  private compact(record: AgentRecord): void {
    if (record.status === 'running') return;
    const summary = compact(record);
    this.entries.set(record.agentId, summary);
    if (record.name && this.entries.get(record.name) === record)
      this.entries.set(record.name, summary);
    this.summaries.add(summary);
    while (this.summaries.size > this.maxSummaries) {
      const oldest = this.summaries.values().next().value as CompactedAgent;
      this.summaries.delete(oldest);
      this.forget(oldest);
    }
  }

  private forget(summary: CompactedAgent): void {
    if (this.entries.get(summary.agentId) === summary) this.entries.delete(summary.agentId);
    if (summary.name && this.entries.get(summary.name) === summary) {
      this.entries.delete(summary.name);
      this.retiredNames.add(summary.name);
    }
  }
}
