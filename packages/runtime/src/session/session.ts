import { stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import {
  type AgentDefinitionsResult,
  type CanUseTool,
  type McpClientState,
  type Message,
  type PermissionMode,
  type PermissionRule,
  type TaskState,
  type ThinkingConfig,
  type Tool,
  type ToolUseContext,
  DelegateError,
  createUserMessage,
  createUuid,
  getLastAssistantMessage,
  getText,
} from '@delegate/core';
import {
  FORK_AGENT,
  getAgentDefinitionsWithOverrides,
  type AgentDefinitionsOptions,
} from '@delegate/agent-defs';
import { createRootToolUseContext } from '@delegate/context-isolation';
import { getBuiltinTools, resolveToolPath } from '@delegate/tools';
import { startAgentRun } from '../lifecycle/agent-lifecycle.js';
import { createAgentRecord, parseAgentSpec } from '../lifecycle/agent-record.js';
import type { AgentRuntime, AgentRuntimeOptions } from './agent-runtime.js';
import {
  type AgentToolOutput,
  assembleWorkerTools,
  createAgentTool,
  resolveAgentPermissionMode,
  visibleAgents,
} from '../agent-tool/agent-tool.js';
import { buildAgentListReminder } from '../agent-tool/agent-tool-prompt.js';
import { EventBus } from './event-bus.js';
import {
  DEFAULT_MAIN_MODEL,
  DEFAULT_SUBAGENT_MODEL,
  createApiClient,
  resolveModelAlias,
} from './model-config.js';
import { type AskHandler, createCanUseTool } from '../permissions.js';
import { type QueryEvent, type QueryOutcome, query } from '../query/query.js';
import { createSendMessageTool } from '../tasks/send-message-tool.js';
import { getEnvironmentDetails, getMainSystemPrompt } from './system-prompt.js';
import { createTaskOutputTool, createTaskStopTool } from '../tasks/task-tools.js';
import { TaskRegistry } from '../tasks/task-registry.js';
import { TranscriptStore, readTranscript } from '../transcripts/transcript-store.js';

/** MCP servers as the session sees them (the `@delegate/tools` MCP manager fits). */
export type McpSource = {
  getClients(): McpClientState[];
  getTools(): Tool[];
};

/** Options of `DelegateSession.create`. */
export type DelegateSessionOptions = Partial<AgentRuntimeOptions> & {
  /** Working directory of the main agent. */
  cwd: string;
  /** SDK client; default one from `apiKey`/`baseURL` or the environment. */
  client?: Anthropic;
  /** API key when no client is given. */
  apiKey?: string;
  /** Base URL when no client is given (the simulator's URL, for example). */
  baseURL?: string;
  /** Main model (alias or id). */
  model?: string;
  /** Base tools of the main agent and of sub-agent pools; default the built-in tools. */
  tools?: Tool[];
  /** Agent definitions; default loaded from disk for `cwd`. */
  agentDefinitions?: AgentDefinitionsResult;
  /** Options for loading definitions from disk. */
  agentLoading?: Partial<AgentDefinitionsOptions>;
  /** Main agent's permission mode (default `default`). */
  permissionMode?: PermissionMode;
  /** Rules that approve calls. */
  allowRules?: PermissionRule[];
  /** Rules that refuse calls and hide agent types. */
  denyRules?: PermissionRule[];
  /** Asks the person at the terminal; without it, a question is a denial. */
  ask?: AskHandler;
  /** Where transcripts go; `false` for none (default `~/.delegate/transcripts`). */
  transcriptDir?: string | false;
  /** Session id (default a new uuid). */
  sessionId?: string;
  /** Replaces the main system prompt's introduction. */
  customSystemPrompt?: string;
  /** Appended to the main system prompt. */
  appendSystemPrompt?: string;
  /** Context prepended to the conversation (project instructions and the like). */
  userContext?: Record<string, string>;
  /** Thinking configuration of the main agent (inherited by forks). */
  thinking?: ThinkingConfig;
  /** MCP servers whose tools join the pools. */
  mcp?: McpSource;
  /** Environment to read switches from (`DELEGATE_DISABLE_BACKGROUND_TASKS`). */
  env?: NodeJS.ProcessEnv;
};

function envFlag(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = env[name]?.trim().toLowerCase();
  return value === '1' || value === 'true' || value === 'yes' || value === 'on';
}

/**
 * A main agent with the Agent tool: it runs turns against the Messages API, spawns
 * foreground, background and fork sub-agents, queues their notifications into its next
 * request, writes transcripts, and emits lifecycle events.
 */
export class DelegateSession {
  /** The main agent's context. */
  readonly context: ToolUseContext;
  /** Lifecycle events of every agent in the session. */
  readonly events: EventBus;
  /** Tasks (sub-agents and background shells) of the session. */
  readonly tasks: TaskRegistry;
  /** Transcript writer, when transcripts are on. */
  readonly transcript: TranscriptStore | undefined;
  /** The main conversation. */
  readonly messages: Message[] = [];
  /** Shared state of the agent tools. */
  readonly runtime: AgentRuntime;
  private readonly systemPrompt: string[];
  private readonly userContext: Record<string, string> | undefined;
  private readonly canUseTool: CanUseTool;
  private lastAgentList: string | undefined;

  private constructor(
    runtime: AgentRuntime,
    context: ToolUseContext,
    options: DelegateSessionOptions,
  ) {
    this.runtime = runtime;
    this.context = context;
    this.events = runtime.events;
    this.tasks = runtime.tasks;
    this.transcript = runtime.transcript;
    this.userContext = options.userContext;
    this.systemPrompt = getMainSystemPrompt({
      environment: getEnvironmentDetails({ cwd: options.cwd, model: context.options.model }),
      ...(options.customSystemPrompt ? { customPrompt: options.customSystemPrompt } : {}),
      ...(options.appendSystemPrompt ? { appendPrompt: options.appendSystemPrompt } : {}),
    });
    this.canUseTool = createCanUseTool(options.ask ? { ask: options.ask } : {});
  }

  /** Creates a session: loads agent definitions, builds the tools and the root context. */
  static async create(options: DelegateSessionOptions): Promise<DelegateSession> {
    const env = options.env ?? process.env;
    const client =
      options.client ??
      createApiClient({
        ...(options.apiKey ? { apiKey: options.apiKey } : {}),
        ...(options.baseURL ? { baseURL: options.baseURL } : {}),
        env,
      });
    const definitions =
      options.agentDefinitions ??
      (await getAgentDefinitionsWithOverrides({
        cwd: options.cwd,
        ...(options.homeDir ? { homeDir: options.homeDir } : {}),
        ...options.agentLoading,
      }));
    const agentDefinitions: AgentDefinitionsResult = {
      activeAgents: definitions.activeAgents,
      allAgents: definitions.allAgents,
      ...(definitions.allowedAgentTypes
        ? { allowedAgentTypes: definitions.allowedAgentTypes }
        : {}),
    };
    const baseTools = options.tools ?? getBuiltinTools();
    const events = new EventBus();
    const runtimeOptions: AgentRuntimeOptions = {
      forkEnabled: options.forkEnabled ?? false,
      forkForceAsync: options.forkForceAsync ?? false,
      coordinatorMode: options.coordinatorMode ?? false,
      backgroundTasksDisabled:
        options.backgroundTasksDisabled ?? envFlag(env, 'DELEGATE_DISABLE_BACKGROUND_TASKS'),
      agentListInMessages: options.agentListInMessages ?? true,
      maxBackgroundAgents: options.maxBackgroundAgents ?? 8,
      maxDepth: options.maxDepth ?? 3,
      backgroundHintMs: options.backgroundHintMs ?? 2_000,
      mcpWaitMs: options.mcpWaitMs ?? 30_000,
      mcpPollMs: options.mcpPollMs ?? 500,
      defaultSubagentModel: options.defaultSubagentModel ?? DEFAULT_SUBAGENT_MODEL,
      ...(options.worktreeRoot ? { worktreeRoot: options.worktreeRoot } : {}),
      ...(options.homeDir ? { homeDir: options.homeDir } : {}),
    };
    const transcriptDir =
      options.transcriptDir === false
        ? undefined
        : (options.transcriptDir ?? join(options.homeDir ?? homedir(), '.delegate', 'transcripts'));
    const sessionId = options.sessionId ?? createUuid();
    let agentTools: Tool[] = [];
    const runtime: AgentRuntime = {
      client,
      options: runtimeOptions,
      tasks: new TaskRegistry(),
      events,
      ...(transcriptDir
        ? { transcript: new TranscriptStore({ directory: transcriptDir, sessionId }) }
        : {}),
      baseTools: () => baseTools,
      agentTools: () => agentTools,
      getAgentDefinitions: () => agentDefinitions,
      ...(options.ask ? { ask: options.ask } : {}),
      agents: new Map(),
      forkWarmups: new Map(),
      foreground: new Map(),
      forkAgent: FORK_AGENT,
      pendingBackgroundSpawns: 0,
      pendingRuns: new Set(),
      // Replaced below by the root context's controller.
      rootAbortController: new AbortController(),
      rootCwd: options.cwd,
    };
    agentTools = [
      createAgentTool(runtime),
      createTaskOutputTool(runtime),
      createTaskStopTool(runtime),
      createSendMessageTool(runtime),
    ];
    const mcpTools = options.mcp?.getTools() ?? [];
    const context = createRootToolUseContext({
      cwd: options.cwd,
      tools: [...baseTools, ...mcpTools, ...agentTools],
      model: resolveModelAlias(options.model ?? DEFAULT_MAIN_MODEL),
      appState: {
        toolPermissionContext: {
          mode: options.permissionMode ?? 'default',
          allowRules: options.allowRules ?? [],
          denyRules: options.denyRules ?? [],
          askRules: [],
          additionalWorkingDirectories: [],
        },
        tasks: {},
        mcp: { clients: options.mcp?.getClients() ?? [], tools: mcpTools },
      },
      options: {
        querySource: 'repl_main_thread',
        agentDefinitions,
        ...(options.thinking ? { thinking: options.thinking } : {}),
      },
      emit: events.emit,
    });
    // Task changes are mirrored into the root state for UIs.
    runtime.tasks.mirrorTo(context.setAppStateForTasks ?? context.setAppState);
    runtime.rootAbortController = context.abortController;
    const mcp = options.mcp;
    const session = new DelegateSession(runtime, context, options);
    if (mcp) runtime.refreshMcp = () => session.syncMcp(mcp);
    return session;
  }

  /**
   * Refreshes MCP clients and tools in the root state and the main agent's tools. The
   * session does this on its own before each turn and while an agent waits for its
   * servers; call it when servers change between those points.
   */
  syncMcp(mcp: McpSource): void {
    const tools = mcp.getTools();
    const clients = mcp.getClients();
    const previous = this.context.getAppState().mcp;
    const unchanged =
      previous.tools.length === tools.length &&
      previous.tools.every((tool, index) => tool === tools[index]) &&
      JSON.stringify(previous.clients) === JSON.stringify(clients);
    // Leave the tool list alone when nothing changed: it is part of the prompt-cache key.
    if (unchanged) return;
    this.context.setAppState((state) => ({ ...state, mcp: { clients, tools } }));
    this.context.options.tools = [
      ...this.runtime.baseTools(),
      ...tools,
      ...this.runtime.agentTools(),
    ];
  }

  /**
   * Runs one main-agent turn for `prompt`: yields stream events and messages until the
   * model stops calling tools. Notifications of finished background agents are added
   * before each request. An empty prompt with nothing waiting (no notification, no
   * unanswered user message) sends no request and returns `turns: 0`.
   */
  async *run(
    prompt: string,
    options: { maxTurns?: number } = {},
  ): AsyncGenerator<QueryEvent, QueryOutcome> {
    // Nothing new to answer (no prompt, no notification, and the model spoke last): a
    // request would end with the assistant's own message, so none is sent.
    const last = this.messages
      .filter((message) => message.type === 'user' || message.type === 'assistant')
      .at(-1);
    if (prompt.length === 0 && this.tasks.pendingNotifications === 0 && last?.type !== 'user')
      return { reason: 'completed', turns: 0 };
    this.runtime.refreshMcp?.();
    const added: Message[] = [];
    if (this.runtime.options.agentListInMessages) {
      const reminder = buildAgentListReminder(
        visibleAgents(this.context, this.runtime.getAgentDefinitions()),
      );
      if (reminder !== this.lastAgentList) {
        this.lastAgentList = reminder;
        added.push(createUserMessage({ content: reminder, isMeta: true }));
      }
    }
    if (prompt.length > 0) added.push(createUserMessage({ content: prompt }));
    this.messages.push(...added);
    await this.transcript?.append(added);
    const generator = query({
      client: this.runtime.client,
      messages: [...this.messages],
      systemPrompt: this.systemPrompt,
      ...(this.userContext ? { userContext: this.userContext } : {}),
      toolUseContext: this.context,
      canUseTool: this.canUseTool,
      querySource: 'repl_main_thread',
      ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
      drainQueuedMessages: this.tasks.drainNotifications,
    });
    for (;;) {
      const next = await generator.next();
      if (next.done) return next.value;
      const event = next.value;
      if (event.type !== 'stream_event' && event.type !== 'stream_request_start') {
        this.messages.push(event);
        if (event.type !== 'system') await this.transcript?.append([event]);
      }
      yield event;
    }
  }

  /**
   * Runs a turn to its end and returns the final text. With `waitForBackground`, keeps
   * going while background agents run: each notification starts another turn.
   */
  async send(
    prompt: string,
    options: {
      maxTurns?: number;
      waitForBackground?: boolean;
      onEvent?: (event: QueryEvent) => void;
    } = {},
  ): Promise<{ text: string; outcome: QueryOutcome }> {
    // run() itself sends nothing when there is nothing to answer.
    let outcome = await this.consume(this.run(prompt, options), options.onEvent);
    while (options.waitForBackground && !this.context.abortController.signal.aborted) {
      if (this.tasks.pendingNotifications === 0) {
        if (this.tasks.runningBackground().length === 0) break;
        await this.tasks.waitForNotification({
          timeoutMs: 600_000,
          signal: this.context.abortController.signal,
        });
        if (this.tasks.pendingNotifications === 0) continue;
      }
      outcome = await this.consume(this.run('', options), options.onEvent);
    }
    const last = getLastAssistantMessage(this.messages);
    return { text: last ? getText(last.message.content) : '', outcome };
  }

  private async consume(
    generator: AsyncGenerator<QueryEvent, QueryOutcome>,
    onEvent?: (event: QueryEvent) => void,
  ): Promise<QueryOutcome> {
    for (;;) {
      const next = await generator.next();
      if (next.done) return next.value;
      onEvent?.(next.value);
    }
  }

  /**
   * Resumes a sub-agent from its transcript (this session's, or `sessionId`'s in the same
   * transcript directory): its conversation is restored, dangling tool calls are repaired,
   * and it runs on in the background with `message` (or a note that it was interrupted).
   * Its transcript continues under this session.
   */
  async resumeAgent(options: {
    agentId: string;
    sessionId?: string;
    message?: string;
  }): Promise<AgentToolOutput> {
    const store = this.transcript;
    if (!store)
      throw new DelegateError(
        'INVALID_ARGUMENT',
        'Resuming needs transcripts, and this session was created with transcriptDir: false. Create the session with a transcriptDir (the one the agent was recorded in).',
      );
    const running = this.runtime.agents.get(options.agentId);
    if (running?.status === 'running') {
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `Agent ${options.agentId} is still running in this session; send it a message with SendMessage instead of resuming it.`,
      );
    }
    const source = options.sessionId
      ? new TranscriptStore({ directory: store.directory, sessionId: options.sessionId })
      : store;
    // Resuming in the same session continues the same file: the history is already there.
    const sameFile = source.agentPath(options.agentId) === store.agentPath(options.agentId);
    const spec = parseAgentSpec(
      await source.readAgentMeta(options.agentId),
      source.agentMetaPath(options.agentId),
    );
    const entries = await readTranscript(source.agentPath(options.agentId));
    const history: Message[] = entries.map((entry) => {
      const {
        sessionId: _session,
        parentUuid: _parent,
        isSidechain: _side,
        parentAgentId: _agent,
        ...message
      } = entry;
      return message as Message;
    });
    const definitions = this.runtime.getAgentDefinitions();
    let tools: Tool[];
    let resumeDefinitions: AgentDefinitionsResult = definitions;
    if (spec.isFork) {
      tools = this.context.options.tools;
    } else {
      const definition = definitions.activeAgents.find(
        (agent) => agent.agentType === spec.agentType,
      );
      if (!definition) {
        throw new DelegateError(
          'AGENT_NOT_FOUND',
          `Cannot resume ${spec.agentId}: agent type "${spec.agentType}" is no longer defined. Restore its definition file, or start a new agent.`,
        );
      }
      const assembled = assembleWorkerTools(this.runtime, this.context, definition, true);
      tools = assembled.tools;
      if (assembled.allowedAgentTypes) {
        resumeDefinitions = { ...definitions, allowedAgentTypes: assembled.allowedAgentTypes };
      }
    }
    // What the old session allowed does not carry over: the mode comes from this session,
    // and the agent's directory must exist and lie inside this session's roots.
    const definition = definitions.activeAgents.find((agent) => agent.agentType === spec.agentType);
    spec.permissionMode = resolveAgentPermissionMode({
      parentMode: this.context.getAppState().toolPermissionContext.mode,
      agent: definition ?? {},
      isFork: spec.isFork,
    });
    spec.cwd = await this.resumableCwd(spec.cwd);
    const isBackground = !this.runtime.options.backgroundTasksDisabled;
    const record = createAgentRecord({
      runtime: this.runtime,
      parent: this.context,
      spec,
      tools,
      definitions: resumeDefinitions,
      isBackground,
    });
    const note = createUserMessage({
      content:
        options.message ??
        'Your previous run was interrupted. Continue the task from where you left off, then give your report.',
      agentId: spec.agentId,
    });
    const lastWritten = history.filter((message) => message.type !== 'progress').at(-1);
    if (sameFile && lastWritten) store.continueAfter(options.agentId, lastWritten.uuid);
    return startAgentRun(this.runtime, record, {
      newMessages: [...history, note],
      ...(sameFile ? { alreadyRecorded: history.length } : {}),
    });
  }

  private async resumableCwd(cwd: string): Promise<string> {
    try {
      const resolved = await resolveToolPath(cwd, this.context);
      if ((await stat(resolved.realPath)).isDirectory()) return resolved.absolutePath;
      return this.context.cwd;
    } catch {
      // A removed worktree or a directory outside this session: work from the session's cwd.
      return this.context.cwd;
    }
  }

  /** Moves a running foreground agent to the background; false when it cannot be. */
  backgroundAgent(agentId: string): boolean {
    return this.runtime.foreground.get(agentId)?.background() ?? false;
  }

  /** Ids of foreground agents running now. */
  foregroundAgents(): string[] {
    return [...this.runtime.foreground.keys()];
  }

  /** Stops a running task. */
  stopTask(taskId: string): TaskState {
    const task = this.tasks.require(taskId);
    task.kill?.();
    return task;
  }

  /** Aborts the session: the main turn and every sub-agent under it. */
  abort(reason?: unknown): void {
    this.context.abortController.abort(reason);
  }

  /** Waits for runs that are settling and for pending transcript writes. */
  async flush(): Promise<void> {
    while (this.runtime.pendingRuns.size > 0)
      await Promise.allSettled([...this.runtime.pendingRuns]);
    await this.transcript?.flush();
  }
}
