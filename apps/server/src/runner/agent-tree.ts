import { type AgentEvent, type CompleteUsage, emptyUsage } from '@delegate/core';
import type { EndedTaskStatus } from '@delegate/runtime';
import type { RunEventData } from '../http/schemas.js';
import type { AgentRecord, AgentStatus } from '../store/run-store.js';
import type { RunnerEvent } from './session-runner.js';
import { UsageLedger } from './usage-ledger.js';

/** The id of every run's main agent in the tree. */
export const MAIN_AGENT_ID = 'main';

/** Looks up facts the runtime's events do not carry. */
export type AgentFacts = {
  /** Display color of an agent type. */
  colorOf(agentType: string): string | undefined;
  /** Transcript file of a sub-agent. */
  transcriptPathOf(agentId: string): string;
};

/** What applying one event changed. */
export type TreeChange = {
  /** Agents whose record changed. */
  agents: AgentRecord[];
  /** Events to append to the run's log (in order). */
  events: RunEventData[];
};

function now(): string {
  return new Date().toISOString();
}

function toolFromActivity(activity: string | undefined): string | null {
  const match = activity?.match(/^called (\S+)$/);
  return match ? match[1]! : null;
}

/** Largest tool input kept in the event log, in characters of JSON. */
const MAX_LOGGED_INPUT = 4_000;

/** Keeps the event log small: a large tool input (a whole file to write) becomes a preview. */
function boundToolInput(event: AgentEvent): AgentEvent {
  if (event.type !== 'agent.tool_use') return event;
  const text = JSON.stringify(event.input) ?? '';
  if (text.length <= MAX_LOGGED_INPUT) return event;
  return { ...event, input: { truncated: true, preview: text.slice(0, MAX_LOGGED_INPUT) } };
}

/** The error of an agent settled by its recorded notification (none when it completed). */
function endedError(ended: EndedTaskStatus): string | null {
  switch (ended) {
    case 'completed':
      return null;
    case 'failed':
      return 'The agent had failed before its worker stopped (as its task notification records); it is not resumed.';
    case 'killed':
      return 'The agent was stopped before its worker stopped (as its task notification records); it is not resumed.';
  }
}

/**
 * A run's agent tree: the records of the main agent and every sub-agent, kept up to date
 * from the session's events, with per-agent usage and cost.
 */
export class AgentTree {
  private readonly runId: string;
  private readonly agents = new Map<string, AgentRecord>();
  private readonly ledgers = new Map<string, UsageLedger>();
  private readonly toolUsesBefore = new Map<string, number>();
  private readonly facts: AgentFacts;
  // What an agent the runtime stopped (an ABORTED failure) becomes: `cancelled` when a person
  // stopped it, `interrupted` when the server is shutting down, so a resume takes it up again.
  private abortedStatus: AgentStatus = 'cancelled';

  constructor(options: { runId: string; agents: readonly AgentRecord[]; facts: AgentFacts }) {
    this.runId = options.runId;
    this.facts = options.facts;
    for (const agent of options.agents) {
      this.agents.set(agent.agentId, { ...agent });
      this.ledgers.set(agent.agentId, new UsageLedger(agent.usage));
      this.toolUsesBefore.set(agent.agentId, agent.toolUseCount);
    }
  }

  /**
   * From now on, an agent the runtime stops is recorded `interrupted` rather than
   * `cancelled`: the server is shutting down, and resuming the run resumes it (as after a
   * crash).
   */
  stopForShutdown(): void {
    this.abortedStatus = 'interrupted';
  }

  /** Every agent, in first-seen order. */
  list(): AgentRecord[] {
    return [...this.agents.values()];
  }

  /** One agent, or undefined. */
  get(agentId: string): AgentRecord | undefined {
    return this.agents.get(agentId);
  }

  /** Starts (or restarts, for a later turn) the main agent. */
  startMain(options: {
    agentType: string;
    description: string;
    model: string;
    color: string | null;
    transcriptPath: string;
  }): TreeChange {
    const existing = this.agents.get(MAIN_AGENT_ID);
    const record: AgentRecord = existing
      ? { ...existing, status: 'running', endedAt: null, error: null, model: options.model }
      : {
          runId: this.runId,
          agentId: MAIN_AGENT_ID,
          parentAgentId: null,
          agentType: options.agentType,
          description: options.description,
          mode: 'main',
          backgrounded: false,
          model: options.model,
          color: options.color,
          status: 'running',
          currentTool: null,
          lastActivity: null,
          taskId: null,
          toolUseCount: 0,
          usage: emptyUsage(),
          costUsd: 0,
          priced: true,
          transcriptPath: options.transcriptPath,
          startedAt: now(),
          endedAt: null,
          error: null,
        };
    this.store(record);
    const started: AgentEvent = {
      type: 'agent.started',
      agentId: MAIN_AGENT_ID,
      timestamp: now(),
      agentType: record.agentType,
      description: record.description,
      mode: 'foreground',
      model: record.model,
    };
    return { agents: [record], events: [started] };
  }

  /** Applies a session event. */
  apply(event: RunnerEvent): TreeChange {
    switch (event.kind) {
      case 'main.response':
        return this.applyMainResponse(event);
      case 'main.tool_results':
        return this.update(MAIN_AGENT_ID, (agent) => ({ ...agent, currentTool: null }));
      case 'agent':
        return this.applyAgentEvent(event.event, event.runUsage);
    }
  }

  /**
   * Ends every agent still running with `status` (the run ended: cancelled, interrupted
   * or failed), and sets the main agent's final status.
   */
  finish(options: { status: AgentStatus; error?: string; mainStatus: AgentStatus }): TreeChange {
    const change: TreeChange = { agents: [], events: [] };
    for (const agent of this.agents.values()) {
      const isMain = agent.agentId === MAIN_AGENT_ID;
      if (!isMain && agent.status !== 'running') continue;
      const status = isMain ? options.mainStatus : options.status;
      if (!isMain) this.ledgers.get(agent.agentId)?.settleLive();
      const updated: AgentRecord = {
        ...this.withUsage(agent),
        status,
        currentTool: null,
        endedAt: now(),
        error: status === 'completed' ? null : (options.error ?? agent.error),
      };
      this.store(updated);
      change.agents.push(updated);
      change.events.push({
        type: 'agent.status',
        agentId: agent.agentId,
        status,
        ...(updated.error ? { error: updated.error } : {}),
      });
    }
    return change;
  }

  /**
   * Ends one interrupted agent with how its task ended (`killed`: `cancelled`): it had
   * finished before its worker stopped (its notification is in the main transcript), so it
   * is not resumed. A failed or stopped agent's error says so, in place of the takeover's
   * "interrupted" message.
   */
  settleFinished(agentId: string, ended: EndedTaskStatus): TreeChange {
    const status: AgentStatus = ended === 'killed' ? 'cancelled' : ended;
    const agent = this.agents.get(agentId);
    if (!agent || agent.status !== 'interrupted') return { agents: [], events: [] };
    const updated: AgentRecord = {
      ...this.withUsage(agent),
      status,
      currentTool: null,
      endedAt: agent.endedAt ?? now(),
      error: endedError(ended),
    };
    this.store(updated);
    return {
      agents: [updated],
      events: [
        {
          type: 'agent.status',
          agentId,
          status,
          ...(updated.error ? { error: updated.error } : {}),
        },
      ],
    };
  }

  /**
   * Ends an interrupted agent that could not be resumed as `failed`, with why: otherwise it
   * would stay interrupted in a run that goes on without it.
   */
  settleUnresumable(agentId: string, error: string): TreeChange {
    const agent = this.agents.get(agentId);
    if (!agent || agent.status !== 'interrupted') return { agents: [], events: [] };
    const updated: AgentRecord = {
      ...this.withUsage(agent),
      status: 'failed',
      currentTool: null,
      endedAt: agent.endedAt ?? now(),
      error,
    };
    this.store(updated);
    return {
      agents: [updated],
      events: [{ type: 'agent.status', agentId, status: 'failed', error }],
    };
  }

  private applyMainResponse(event: Extract<RunnerEvent, { kind: 'main.response' }>): TreeChange {
    const ledger = this.ledger(MAIN_AGENT_ID);
    ledger.settle(event.usage);
    const change = this.update(MAIN_AGENT_ID, (agent) => ({
      ...agent,
      model: event.model || agent.model,
      toolUseCount: agent.toolUseCount + event.toolUses.length,
      currentTool: event.toolUses.at(-1)?.name ?? null,
      lastActivity:
        event.toolUses.length > 0
          ? `called ${event.toolUses.at(-1)!.name}`
          : event.text.slice(0, 200) || agent.lastActivity,
    }));
    return change;
  }

  private applyAgentEvent(original: AgentEvent, runUsage: CompleteUsage | undefined): TreeChange {
    const event = boundToolInput(original);
    const change: TreeChange = { agents: [], events: [event] };
    const merge = (inner: TreeChange): TreeChange => ({
      agents: inner.agents,
      events: [event, ...inner.events],
    });
    switch (event.type) {
      case 'agent.started':
        return merge(this.startSubAgent(event));
      case 'agent.progress':
        if (runUsage) this.ledger(event.agentId).setLive(runUsage);
        return merge(
          this.update(event.agentId, (agent) => ({
            ...agent,
            toolUseCount: (this.toolUsesBefore.get(event.agentId) ?? 0) + event.toolUseCount,
            lastActivity: event.lastActivity ?? agent.lastActivity,
            currentTool: toolFromActivity(event.lastActivity),
          })),
        );
      case 'agent.tool_use':
        return merge(
          this.update(event.agentId, (agent) => ({ ...agent, currentTool: event.toolName })),
        );
      case 'agent.backgrounded':
        return merge(
          this.update(event.agentId, (agent) => ({
            ...agent,
            backgrounded: true,
            taskId: event.taskId,
          })),
        );
      case 'agent.completed':
        this.ledger(event.agentId).settle(event.usage);
        this.toolUsesBefore.set(
          event.agentId,
          (this.toolUsesBefore.get(event.agentId) ?? 0) + event.toolUseCount,
        );
        return merge(
          this.update(event.agentId, (agent) => ({
            ...agent,
            status: 'completed',
            currentTool: null,
            toolUseCount: this.toolUsesBefore.get(event.agentId) ?? agent.toolUseCount,
            lastActivity: event.result.slice(0, 200) || agent.lastActivity,
            endedAt: event.timestamp,
            error: null,
          })),
        );
      case 'agent.failed':
        if (runUsage) this.ledger(event.agentId).setLive(runUsage);
        this.ledger(event.agentId).settleLive();
        this.toolUsesBefore.set(event.agentId, this.agents.get(event.agentId)?.toolUseCount ?? 0);
        return merge(
          this.update(event.agentId, (agent) => ({
            ...agent,
            status: event.code === 'ABORTED' ? this.abortedStatus : 'failed',
            currentTool: null,
            endedAt: event.timestamp,
            error: event.error,
          })),
        );
      case 'agent.cost':
        // The runtime's per-agent figures, budget left included; logged as it came.
        this.ledger(event.agentId).setRuntimeTotal(event.totalUsage);
        return merge(this.update(event.agentId, (agent) => agent));
      case 'agent.background_hint':
      case 'agent.notification':
      case 'agent.warning':
      case 'agent.cache_evictable':
        return change;
      case 'agent.message':
        // Sub-agent messages are in the transcripts; the event log keeps lifecycle steps.
        return { agents: [], events: [] };
    }
  }

  private startSubAgent(event: Extract<AgentEvent, { type: 'agent.started' }>): TreeChange {
    const existing = this.agents.get(event.agentId);
    const record: AgentRecord = existing
      ? {
          ...existing,
          status: 'running',
          taskId: event.taskId ?? existing.taskId,
          backgrounded: existing.backgrounded || event.mode === 'background',
          endedAt: null,
          error: null,
        }
      : {
          runId: this.runId,
          agentId: event.agentId,
          parentAgentId: event.parentAgentId ?? MAIN_AGENT_ID,
          agentType: event.agentType,
          description: event.description,
          mode: event.mode,
          backgrounded: event.mode === 'background',
          model: event.model,
          color: this.facts.colorOf(event.agentType) ?? null,
          status: 'running',
          currentTool: null,
          lastActivity: null,
          taskId: event.taskId ?? null,
          toolUseCount: 0,
          usage: emptyUsage(),
          costUsd: 0,
          priced: true,
          transcriptPath: this.facts.transcriptPathOf(event.agentId),
          startedAt: event.timestamp,
          endedAt: null,
          error: null,
        };
    this.store(this.withUsage(record));
    return { agents: [this.agents.get(event.agentId)!], events: [] };
  }

  private ledger(agentId: string): UsageLedger {
    let ledger = this.ledgers.get(agentId);
    if (!ledger) {
      ledger = new UsageLedger();
      this.ledgers.set(agentId, ledger);
    }
    return ledger;
  }

  private withUsage(agent: AgentRecord): AgentRecord {
    const ledger = this.ledger(agent.agentId);
    const { costUsd, priced } = ledger.cost(agent.model);
    return { ...agent, usage: ledger.total, costUsd, priced };
  }

  private store(agent: AgentRecord): void {
    this.agents.set(agent.agentId, agent);
  }

  /** Updates a known agent, refreshes its usage and reports a usage event when it changed. */
  private update(agentId: string, change: (agent: AgentRecord) => AgentRecord): TreeChange {
    const agent = this.agents.get(agentId);
    if (!agent) return { agents: [], events: [] };
    const updated = this.withUsage(change(agent));
    this.store(updated);
    const events: RunEventData[] = [];
    if (JSON.stringify(updated.usage) !== JSON.stringify(agent.usage)) {
      events.push({
        type: 'agent.usage',
        agentId,
        model: updated.model,
        usage: updated.usage,
        costUsd: updated.costUsd,
        priced: updated.priced,
      });
    }
    return { agents: [updated], events };
  }
}
