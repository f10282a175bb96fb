import { access } from 'node:fs/promises';
import {
  type AgentDefinitionsResult,
  type AgentEvent,
  type CompleteUsage,
  type PermissionMode,
  type PermissionRule,
  type TaskState,
  type Tool,
  type Usage,
  completeUsage,
  getText,
} from '@delegate/core';
import { DelegateSession, type EndedTaskStatus, TranscriptStore } from '@delegate/runtime';
import { getBuiltinTools } from '@delegate/tools';

// This file is the only place that touches @delegate/runtime: a change of the runtime's
// session API (per-agent usage and cost, issue 14) is absorbed here.

type SendOptions = NonNullable<Parameters<DelegateSession['send']>[1]>;
type QueryEvent = Parameters<NonNullable<SendOptions['onEvent']>>[0];

/** A tool call of the main agent. */
export type MainToolUse = { id: string; name: string; input: unknown };

/** What a session reports while it works, in the server's terms. */
export type RunnerEvent =
  | {
      /** A sub-agent's lifecycle event from the runtime. */
      kind: 'agent';
      /** The event. */
      event: AgentEvent;
      /** Usage of the agent's current run so far, when the runtime tracks it. */
      runUsage?: CompleteUsage;
    }
  | {
      /** The main agent got a response the runtime kept (retried partial streams are not reported). */
      kind: 'main.response';
      /** Usage of that response. */
      usage: Usage;
      /** Model that answered. */
      model: string;
      /** Tool calls in it. */
      toolUses: MainToolUse[];
      /** Its text. */
      text: string;
    }
  | {
      /** Results of the main agent's tool calls arrived. */
      kind: 'main.tool_results';
    };

/** A task of the session, as plain data. */
export type RunnerTask = {
  taskId: string;
  agentId: string | null;
  type: string;
  description: string;
  status: string;
  backgrounded: boolean;
  startTime: number;
  endTime: number | null;
};

/** Everything a session needs; built by the executor from the run and the server config. */
export type SessionRunnerOptions = {
  /** Runtime session id (the run id). */
  sessionId: string;
  /** The main agent's working directory (a resolved workspace). */
  cwd: string;
  /** Directory of the JSONL transcripts. */
  transcriptDir: string;
  /** Home directory for user agents and memory. */
  homeDir?: string;
  /** API key (never logged). */
  apiKey: string;
  /** Messages API base URL (the simulator's, for `--sim`). */
  baseURL?: string;
  /** Main model. */
  model?: string;
  /** Main permission mode. */
  permissionMode?: PermissionMode;
  /** Approving rules. */
  allowRules: PermissionRule[];
  /** Refusing rules. */
  denyRules: PermissionRule[];
  /** Forking on or off. */
  forkEnabled: boolean;
  /** Replaces the main system prompt's introduction (the chosen agent's prompt). */
  customSystemPrompt?: string;
  /** The chosen agent's hooks: its PreToolUse/PostToolUse hooks run for the main agent. */
  mainAgentHooks?: Record<string, unknown>;
  /** Keeps only these base tools (by name), when given. */
  toolFilter?: (tool: Tool) => boolean;
  /** Agent definitions of the workspace. */
  agentDefinitions: AgentDefinitionsResult;
  /** Environment of shell commands (secrets removed). */
  toolEnv: NodeJS.ProcessEnv;
  /** Values replaced by `[REDACTED]` in every tool result (the token, connection passwords). */
  secrets?: string[];
  /** Where background shell output goes. */
  backgroundOutputDirectory: string;
};

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * One run's `DelegateSession`, behind the few calls the server makes: run a turn, stop or
 * background an agent, resume agents, and report what happens as `RunnerEvent`s.
 */
export class SessionRunner {
  private readonly session: DelegateSession;
  private readonly paths: TranscriptStore;
  private readonly definitions: AgentDefinitionsResult;
  private readonly listeners = new Set<(event: RunnerEvent) => void>();
  private readonly taskOfAgent = new Map<string, string>();

  private constructor(options: {
    session: DelegateSession;
    paths: TranscriptStore;
    definitions: AgentDefinitionsResult;
  }) {
    this.session = options.session;
    this.paths = options.paths;
    this.definitions = options.definitions;
    this.session.events.on((event) => this.forwardAgentEvent(event));
  }

  /**
   * Creates a session; with `restore`, the main conversation is read back from its transcript,
   * with the notifications queued for the main agent that no request carried.
   */
  static async open(options: SessionRunnerOptions & { restore: boolean }): Promise<SessionRunner> {
    const tools = getBuiltinTools({
      bash: { env: options.toolEnv, backgroundOutputDirectory: options.backgroundOutputDirectory },
    }).filter(options.toolFilter ?? (() => true));
    const paths = new TranscriptStore({
      directory: options.transcriptDir,
      sessionId: options.sessionId,
    });
    // A restored session reads its conversation, and the notifications queued for the main
    // agent that no request carried, back from its transcript (they go out with the next turn).
    const resume = options.restore && (await exists(paths.sessionPath()));
    const session = await DelegateSession.create({
      cwd: options.cwd,
      apiKey: options.apiKey,
      ...(options.baseURL ? { baseURL: options.baseURL } : {}),
      ...(options.model ? { model: options.model } : {}),
      ...(options.permissionMode ? { permissionMode: options.permissionMode } : {}),
      allowRules: options.allowRules,
      denyRules: options.denyRules,
      forkEnabled: options.forkEnabled,
      ...(options.customSystemPrompt ? { customSystemPrompt: options.customSystemPrompt } : {}),
      ...(options.mainAgentHooks ? { mainAgentHooks: options.mainAgentHooks } : {}),
      tools,
      agentDefinitions: options.agentDefinitions,
      transcriptDir: options.transcriptDir,
      sessionId: options.sessionId,
      ...(options.homeDir ? { homeDir: options.homeDir } : {}),
      env: options.toolEnv,
      ...(options.secrets ? { secrets: options.secrets } : {}),
      ...(resume ? { resume: true } : {}),
    });
    return new SessionRunner({ session, paths, definitions: options.agentDefinitions });
  }

  /** Model id of the main agent. */
  get mainModel(): string {
    return this.session.context.options.model;
  }

  /** The main agent's transcript file. */
  mainTranscriptPath(): string {
    return this.paths.sessionPath();
  }

  /** A sub-agent's transcript file. */
  agentTranscriptPath(agentId: string): string {
    return this.paths.agentPath(agentId);
  }

  /** Display color of an agent type, from its definition. */
  colorOf(agentType: string): string | undefined {
    return this.definitions.activeAgents.find((agent) => agent.agentType === agentType)?.color;
  }

  /** Receives every `RunnerEvent`; returns an unsubscribe function. */
  onEvent(listener: (event: RunnerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Runs the main agent on `text` and keeps going while background agents work (each
   * notification starts another turn). `aborted` when `abort()` was called.
   */
  async runTurn(text: string): Promise<{ outcome: 'completed' | 'aborted'; text: string }> {
    const result = await this.session.send(text, {
      waitForBackground: true,
      onEvent: (event) => this.forwardMainEvent(event),
    });
    await this.session.flush();
    const aborted =
      result.outcome.reason === 'aborted' || this.session.context.abortController.signal.aborted;
    return { outcome: aborted ? 'aborted' : 'completed', text: result.text };
  }

  /**
   * After a takeover: the main agent's tool calls that were in flight (the last message is
   * the assistant's, with no results) are settled by the runtime. Read-only ones run again;
   * the others get a result saying they were interrupted, so the model decides whether to do
   * them again. Returns the names of the calls run again and of those interrupted.
   */
  settleInFlightCalls(): Promise<{ rerun: string[]; interrupted: string[] }> {
    return this.session.settleInFlightToolCalls({ mode: 'rerun-read-only' });
  }

  /** True when a user message of the main conversation contains `text`. */
  holdsUserText(text: string): boolean {
    return this.session.messages.some((message) => {
      if (message.type !== 'user') return false;
      const content = message.message.content;
      if (typeof content === 'string') return content.includes(text);
      return content.some((block) => block.type === 'text' && block.text.includes(text));
    });
  }

  /**
   * Continues a sub-agent from its transcript, in the background. With `afterTakeover`, its
   * read-only tool calls that were in flight run again (the others get a result saying they
   * were interrupted), as the main agent's do.
   */
  async resumeAgent(agentId: string, options: { afterTakeover?: boolean } = {}): Promise<void> {
    await this.session.resumeAgent({
      agentId,
      inFlightToolCalls: options.afterTakeover ? 'rerun-read-only' : 'interrupt',
    });
  }

  /**
   * Tells the main agent, with a failed `<task-notification>` at its next request, that the
   * background agent of task `taskId` could not be resumed after the restart (once: nothing
   * is queued for a task that already notified). The main agent had been told it would hear
   * from the agent.
   */
  reportUnresumable(options: {
    taskId: string;
    agentId: string;
    description: string;
    /** Why resuming it failed, as the error said. */
    reason: string;
  }): void {
    const { taskId, agentId, description } = options;
    const error = `The server stopped while this agent worked, and it could not be resumed (${options.reason}). Start it again if its work is still needed.`;
    this.session.reportLostAgent({
      taskId,
      agentId,
      description,
      outcome: { status: 'failed', error },
    });
  }

  /**
   * How the agent task `taskId` ended, when its notification reached the main agent's
   * transcript (delivered or queued): such an agent had finished before its worker stopped,
   * even if the store still says running, and resuming it would make it report twice.
   */
  notifiedTaskStatus(taskId: string): EndedTaskStatus | undefined {
    return this.session.notifiedTaskStatus(taskId);
  }

  /** Stops a running sub-agent; false when it is not running. */
  stopAgent(agentId: string): boolean {
    const taskId = this.taskOfAgent.get(agentId);
    const task = taskId ? this.session.tasks.get(taskId) : undefined;
    if (!task || task.status !== 'running') return false;
    this.session.stopTask(task.id);
    return true;
  }

  /** Moves a running foreground sub-agent to the background; false when it cannot be. */
  backgroundAgent(agentId: string): boolean {
    return this.session.backgroundAgent(agentId);
  }

  /** True when the sub-agent runs in the foreground now. */
  isForeground(agentId: string): boolean {
    return this.session.foregroundAgents().includes(agentId);
  }

  /** The session's tasks: sub-agent runs and background shell commands. */
  tasks(): RunnerTask[] {
    // The registry holds agent tasks; shells register in the root state, which also mirrors
    // the registry, so the union by id covers both.
    const byId = new Map<string, TaskState>();
    for (const task of Object.values(this.session.context.getAppState().tasks))
      byId.set(task.id, task);
    for (const task of this.session.tasks.list()) byId.set(task.id, task);
    return [...byId.values()].map((task) => ({
      taskId: task.id,
      agentId: task.agentId ?? null,
      type: task.type,
      description: task.description,
      status: task.status,
      backgrounded: task.isBackgrounded === true,
      startTime: task.startTime,
      endTime: task.endTime ?? null,
    }));
  }

  /** Stops the main agent and every sub-agent; the session cannot run again afterwards. */
  abort(reason: unknown): void {
    this.session.abort(reason);
  }

  /** True once `abort` was called. */
  get aborted(): boolean {
    return this.session.context.abortController.signal.aborted;
  }

  /** Waits for settling agents and transcript writes. */
  async flush(): Promise<void> {
    await this.session.flush();
  }

  /**
   * Ends the session for good: aborts it, flushes, and deletes the logs of its background
   * shells (after this, TaskOutput cannot read them).
   */
  async close(): Promise<void> {
    await this.session.close();
  }

  private emit(event: RunnerEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  private forwardAgentEvent(event: AgentEvent): void {
    if ('taskId' in event && event.taskId) this.taskOfAgent.set(event.agentId, event.taskId);
    const taskId = this.taskOfAgent.get(event.agentId);
    const usage = taskId ? this.session.tasks.get(taskId)?.usage : undefined;
    this.emit({ kind: 'agent', event, ...(usage ? { runUsage: completeUsage(usage) } : {}) });
  }

  private forwardMainEvent(event: QueryEvent): void {
    if (event.type === 'assistant') {
      const toolUses: MainToolUse[] = [];
      for (const block of event.message.content)
        if (block.type === 'tool_use')
          toolUses.push({ id: block.id, name: block.name, input: block.input });
      this.emit({
        kind: 'main.response',
        usage: event.message.usage,
        model: event.message.model,
        toolUses,
        text: getText(event.message.content),
      });
    } else if (event.type === 'user') {
      const content = event.message.content;
      if (Array.isArray(content) && content.some((block) => block.type === 'tool_result'))
        this.emit({ kind: 'main.tool_results' });
    }
  }
}
