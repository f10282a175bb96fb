import { stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import {
  type AgentDefinitionsResult,
  type CanUseTool,
  type CompleteUsage,
  type Message,
  type PermissionDecision,
  type TaskState,
  type Tool,
  type ToolUseContext,
  DelegateError,
  errorMessage,
  createUserMessage,
  createUuid,
  getLastAssistantMessage,
  addUsage,
  getText,
} from '@delegate/core';
import type * as AgentDefs from '@delegate/agent-defs';
import { createRootToolUseContext } from '@delegate/context-isolation';
import { isEnvTruthy } from '@delegate/tool-filter';
import {
  type CacheSafeParams,
  DEFAULT_FORK_LAYOUT,
  createCacheSafeParamsSlot,
} from '@delegate/fork-cache';
import { createAgentTool } from '../agent-tool/agent-tool.js';
import type { AgentToolOutput } from '../agent-tool/agent-tool-output.js';
import { buildAgentListReminder, isAgentListReminder } from '../agent-tool/agent-tool-prompt.js';
import { visibleAgents } from '../agent-tool/resolve-agent.js';
import {
  type ForkedAgentParams,
  type ForkedAgentResult,
  runForkedAgent,
} from '../forked-agent/run-forked-agent.js';
import { AbortHub } from '../lifecycle/abort-hub.js';
import { AgentDirectory } from '../lifecycle/agent-directory.js';
import { type ResumeAgentOptions, resumeAgentFromTranscript } from '../lifecycle/resume-agent.js';
import {
  type InFlightToolCalls,
  type SettledToolCalls,
  checkInFlightToolCalls,
  settleInFlightToolCalls,
} from '../lifecycle/settle-in-flight-calls.js';
import { type AskHandler, createCanUseTool } from '../permissions.js';
import { RUNNABLE_HOOKS_HINT, parseAgentHooks } from '../hooks/agent-hooks.js';
import { createToolCallHooks } from '../hooks/create-tool-call-hooks.js';
import type { ToolCallHooks } from '../query/run-tools.js';
import { type QueryEvent, type QueryOutcome, query } from '../query/query.js';
import { createSendMessageTool } from '../tasks/send-message-tool.js';
import { createTaskOutputTool, createTaskStopTool } from '../tasks/task-tools.js';
import { TaskRegistry } from '../tasks/task-registry.js';
import { trackShellTasks } from '../tasks/track-shell-tasks.js';
import {
  type EndedTaskStatus,
  queuedNotificationEntry,
  restoreSessionTranscript,
} from '../transcripts/queued-notification.js';
import { readTranscript } from '../transcripts/read-transcript.js';
import { TranscriptStore } from '../transcripts/transcript-store.js';
import { loadTools } from '../util/load-tools.js';
import { createUsageGuard } from '../usage/usage-guard.js';
import { type AgentUsageNode, MAIN_AGENT_ID, UsageLedger } from '../usage/usage-ledger.js';
import { sessionQueryOptions } from '../lifecycle/drive-agent.js';
import type { AgentRuntime, AgentRuntimeOptions } from './agent-runtime.js';
import { withAskRules } from './ask-rules.js';
import { mainAgentToolList } from './main-agent-tools.js';
import { withoutCredentials } from './shell-environment.js';
import { redactOption, sessionRedactor } from '../util/redact-secrets.js';
import { EventBus } from './event-bus.js';
import { checkCallOptions, checkPrompt } from './call-options.js';
import {
  DEFAULT_MAIN_MODEL,
  DEFAULT_SUBAGENT_MODEL,
  createApiClient,
  preloadSdk,
  resolveModelAlias,
} from './model-config.js';
import {
  type DelegateSessionOptions,
  type McpSource,
  type ValidatedSessionOptions,
  checkWorktreeRoot,
  resolveHomeDirectory,
  resolveWorkingDirectory,
  validateSessionOptions,
} from './session-options.js';
import { getEnvironmentDetails, getMainSystemPrompt } from './system-prompt.js';
import { createStartGate } from '../util/start-gate.js';
import {
  type BackgroundLaunch,
  type LostAgentReport,
  backgroundLaunchesOf,
  heardFromAgent,
  reportLostAgent,
} from './lost-agents.js';

/** The last agent list the conversation holds, so a resumed session does not send it again. */
function lastAgentListOf(messages: readonly Message[]): string | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.type !== 'user' || !message.isMeta) continue;
    const content = message.message.content;
    if (typeof content === 'string' && isAgentListReminder(content)) return content;
  }
  return undefined;
}

/**
 * `ask`, its answers checked: anything but a decision (`'allow'`, `true`, nothing) denies the
 * call with a message saying what the handler returned, so the model is not told
 * "undefined" and the handler's author sees what to return.
 */
function checkedAsk(ask: AskHandler): AskHandler {
  return async (request) => {
    const answer: unknown = await ask(request);
    const behavior = (answer as { behavior?: unknown } | null | undefined)?.behavior;
    if (behavior === 'allow') return answer as PermissionDecision;
    if (
      (behavior === 'deny' || behavior === 'ask') &&
      typeof (answer as { message?: unknown }).message === 'string'
    )
      return answer as PermissionDecision;
    const shown = JSON.stringify(answer) ?? String(answer);
    return {
      behavior: 'deny',
      message: `${request.tool.name} was not allowed: the session's ask handler returned ${shown.slice(0, 200)}, not a decision such as { behavior: 'allow' } or { behavior: 'deny', message: '…' }.`,
    };
  };
}

/** The session's event bus and transcript store, both keeping the session's secrets out. */
function recordersOf(
  validated: ValidatedSessionOptions,
  redact: ReturnType<typeof redactOption>,
  sessionId: string,
): { events: EventBus; transcript?: TranscriptStore } {
  const events = new EventBus({
    ...(validated.onEventListenerError ? { onListenerError: validated.onEventListenerError } : {}),
    ...redact,
  });
  const directory = transcriptDirOf(validated);
  if (!directory) return { events };
  return { events, transcript: createTranscriptStore({ directory, sessionId, events, ...redact }) };
}

/** The session's transcript store; a file it cannot write is an `agent.warning` of its agent. */
function createTranscriptStore(options: {
  directory: string;
  sessionId: string;
  events: EventBus;
  redact?: (text: string) => string;
}): TranscriptStore {
  return new TranscriptStore({
    directory: options.directory,
    sessionId: options.sessionId,
    ...(options.redact ? { redact: options.redact } : {}),
    onWriteError: (failure) =>
      options.events.emit({
        type: 'agent.warning',
        agentId: failure.agentId ?? MAIN_AGENT_ID,
        timestamp: new Date().toISOString(),
        code: 'TRANSCRIPT_WRITE_FAILED',
        message: `The transcript could not be written, so it will be incomplete and the run cannot be resumed from it: ${failure.message}. Check the transcript folder (transcriptDir), or pass transcriptDir: false for none.`,
      }),
  });
}

/** Options of `session.send`. */
export type SendOptions = {
  /** Turn limit of each run. */
  maxTurns?: number;
  /** Keep going while background agents run: each notification starts another turn. */
  waitForBackground?: boolean;
  /** Called with every event of every run. */
  onEvent?: (event: QueryEvent) => void;
};

/** What `session.send` returns. */
export type SendResult = {
  /** The main agent's last text. */
  text: string;
  /** How the last run ended. */
  outcome: QueryOutcome;
  /** Usage of this call: the main agent's responses plus every sub-agent in `agents`. */
  usage: CompleteUsage;
  /** Cost of `usage` in US dollars. */
  costUsd: number;
  /** The sub-agents the main agent started during this call, each with its own subtree and figures. */
  agents: AgentUsageNode[];
};

/** Options of `session.forkAfterTurn`. */
export type ForkAfterTurnOptions = {
  /** What the fork should do (its one new user message). */
  prompt: string;
  /** Label for its id and logs (default `fork`). */
  label?: string;
  /** Query source recorded on its requests (default `post_turn_fork`). */
  querySource?: string;
} & Pick<
  ForkedAgentParams,
  'maxTurns' | 'skipTranscript' | 'skipCacheWrite' | 'onMessage' | 'onComplete'
>;

function subtractUsage(after: CompleteUsage, before: CompleteUsage): CompleteUsage {
  return {
    input_tokens: after.input_tokens - before.input_tokens,
    output_tokens: after.output_tokens - before.output_tokens,
    cache_creation_input_tokens:
      after.cache_creation_input_tokens - before.cache_creation_input_tokens,
    cache_read_input_tokens: after.cache_read_input_tokens - before.cache_read_input_tokens,
    cache_creation: {
      ephemeral_5m_input_tokens:
        after.cache_creation.ephemeral_5m_input_tokens -
        before.cache_creation.ephemeral_5m_input_tokens,
      ephemeral_1h_input_tokens:
        after.cache_creation.ephemeral_1h_input_tokens -
        before.cache_creation.ephemeral_1h_input_tokens,
    },
  };
}

function runtimeOptionsOf(
  options: ValidatedSessionOptions,
  env: NodeJS.ProcessEnv,
): AgentRuntimeOptions {
  return {
    forkEnabled: options.forkEnabled ?? false,
    forkForceAsync: options.forkForceAsync ?? false,
    coordinatorMode: options.coordinatorMode ?? false,
    backgroundTasksDisabled:
      options.backgroundTasksDisabled ?? isEnvTruthy(env['DELEGATE_DISABLE_BACKGROUND_TASKS']),
    agentListInMessages: options.agentListInMessages ?? true,
    maxBackgroundAgents: options.maxBackgroundAgents ?? 8,
    maxDepth: options.maxDepth ?? 3,
    backgroundHintMs: options.backgroundHintMs ?? 2_000,
    mcpWaitMs: options.mcpWaitMs ?? 30_000,
    mcpPollMs: options.mcpPollMs ?? 500,
    defaultSubagentModel: options.defaultSubagentModel ?? DEFAULT_SUBAGENT_MODEL,
    maxRetainedAgents: options.maxRetainedAgents ?? 100,
    streamIdleTimeoutMs: options.streamIdleTimeoutMs ?? 90_000,
    maxConsecutiveStalls: options.maxConsecutiveStalls ?? 3,
    maxAgentSummaries: options.maxAgentSummaries ?? 1_000,
    secrets: options.secrets ?? [],
    ...(options.worktreeRoot ? { worktreeRoot: options.worktreeRoot } : {}),
    ...(options.homeDir ? { homeDir: options.homeDir } : {}),
    forkLayout: options.forkLayout ?? DEFAULT_FORK_LAYOUT,
    ...debugCacheOption(options, env),
  };
}

/** The cache-diagnosis handler: the option's function, stderr lines, or none. */
function debugCacheOption(
  options: ValidatedSessionOptions,
  env: NodeJS.ProcessEnv,
): Pick<AgentRuntimeOptions, 'debugCacheDiagnosis'> {
  const option = options.debugCacheDiagnosis ?? isEnvTruthy(env['DELEGATE_DEBUG_CACHE']);
  if (typeof option === 'function') return { debugCacheDiagnosis: option };
  if (!option) return {};
  return {
    debugCacheDiagnosis: (entry) =>
      process.stderr.write(
        `[delegate:cache] ${entry.agentType} ${entry.agentId} request ${entry.turn} vs ${entry.comparedWith}: ${entry.line}\n`,
      ),
  };
}

async function clientOf(
  options: ValidatedSessionOptions,
  env: NodeJS.ProcessEnv,
): Promise<Anthropic> {
  if (options.client) return options.client;
  await preloadSdk();
  return createApiClient({
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    ...(options.baseURL ? { baseURL: options.baseURL } : {}),
    ...(options.secrets ? { secrets: options.secrets } : {}),
    env,
  });
}

// Loaded with the first session: its YAML parser is not needed to import the runtime.
type AgentDefsModule = typeof AgentDefs;

type LoadedDefinitions = {
  definitions: AgentDefinitionsResult;
  explainUnknownAgentType?: (agentType: string) => string | undefined;
};

/** The definitions, and (from `failedAgents`) why a type whose file failed to load is missing. */
async function definitionsOf(
  options: ValidatedSessionOptions,
  agentDefs: AgentDefsModule,
): Promise<LoadedDefinitions> {
  const loaded: AgentDefinitionsResult & { failedAgents?: AgentDefs.FailedAgentFile[] } =
    options.agentDefinitions ??
    (await agentDefs.getAgentDefinitionsWithOverrides({
      cwd: options.cwd,
      ...(options.homeDir ? { homeDir: options.homeDir } : {}),
      ...options.agentLoading,
    }));
  const definitions = {
    activeAgents: loaded.activeAgents,
    allAgents: loaded.allAgents,
    ...(loaded.allowedAgentTypes ? { allowedAgentTypes: loaded.allowedAgentTypes } : {}),
  };
  // Given definitions may come straight from getAgentDefinitionsWithOverrides, failures included.
  const failed = Array.isArray(loaded.failedAgents) ? [...loaded.failedAgents] : [];
  if (failed.length === 0) return { definitions };
  return {
    definitions,
    explainUnknownAgentType: (agentType) => agentDefs.explainUnknownAgentType(agentType, failed),
  };
}

function transcriptDirOf(options: ValidatedSessionOptions): string | undefined {
  if (options.transcriptDir === false) return undefined;
  return options.transcriptDir ?? join(options.homeDir ?? homedir(), '.delegate', 'transcripts');
}

function rootContextOf(options: {
  validated: ValidatedSessionOptions;
  baseTools: Tool[];
  agentTools: Tool[];
  definitions: AgentDefinitionsResult;
  events: EventBus;
}): ToolUseContext {
  const { validated, definitions } = options;
  const mcpTools = validated.mcp?.getTools() ?? [];
  return createRootToolUseContext({
    cwd: validated.cwd,
    tools: mainAgentToolList({
      baseTools: options.baseTools,
      mcpTools,
      sessionTools: options.agentTools,
      lists: validated.mainAgentTools,
    }),
    model: resolveModelAlias(validated.model ?? DEFAULT_MAIN_MODEL),
    appState: {
      toolPermissionContext: {
        mode: validated.permissionMode ?? 'default',
        allowRules: validated.allowRules,
        denyRules: validated.denyRules,
        askRules: validated.askRules,
        additionalWorkingDirectories: [],
      },
      tasks: {},
      mcp: { clients: validated.mcp?.getClients() ?? [], tools: mcpTools },
    },
    options: {
      querySource: 'repl_main_thread',
      agentDefinitions: definitions,
      ...(validated.thinking ? { thinking: validated.thinking } : {}),
    },
    emit: options.events.emit,
  });
}

/**
 * The main agent's tool-call hooks from `mainAgentHooks`: PreToolUse and PostToolUse run; other
 * events get a process warning (nobody listens to the session's events yet); an entry that
 * cannot run throws, so the session does not start unguarded.
 */
function mainHooksOf(
  validated: ValidatedSessionOptions,
  runtime: AgentRuntime,
): ToolCallHooks | undefined {
  if (!validated.mainAgentHooks) return undefined;
  let parsed: ReturnType<typeof parseAgentHooks>;
  try {
    parsed = parseAgentHooks({ agentType: 'main', hooks: validated.mainAgentHooks });
  } catch (error) {
    if (!DelegateError.hasCode(error, 'INVALID_AGENT_DEFINITION')) throw error;
    const { where, reason } = error.details as { where: string; reason: string };
    const message = `options.mainAgentHooks.${where} (a hook of the definition the main thread runs as): ${reason}; ${RUNNABLE_HOOKS_HINT}`;
    throw new DelegateError('INVALID_ARGUMENT', `DelegateSession.create: ${message}.`, {
      details: {
        issues: [{ path: ['mainAgentHooks', ...where.split(/[.[\]]+/).filter(Boolean)], message }],
        // For a host that names the hook's file itself (the CLI's --agent).
        hook: { where, reason },
      },
    });
  }
  if (parsed.ignoredEvents.length > 0)
    process.emitWarning(
      `mainAgentHooks has hooks for ${parsed.ignoredEvents.join(', ')}; Delegate runs only PreToolUse and PostToolUse hooks, so those do not run.`,
      { code: 'DELEGATE_HOOKS_IGNORED' },
    );
  const transcriptPath = runtime.transcript?.sessionPath();
  return createToolCallHooks({
    hooks: parsed.hooks,
    sessionId: runtime.sessionId,
    projectDir: runtime.rootCwd,
    ...(transcriptPath ? { transcriptPath } : {}),
    emit: runtime.events.emit,
  });
}

/**
 * Records every notification queued for the main agent in its transcript, so a resumed
 * session can queue again the ones no request carried.
 */
function recordQueuedNotifications(runtime: AgentRuntime): void {
  const transcript = runtime.transcript;
  if (!transcript) return;
  runtime.tasks.recordQueuedTo((record) => {
    void transcript.append([queuedNotificationEntry(record)]);
  });
}

/** The session's usage ledger: prices, the session budget and the main model. */
function usageLedgerOf(validated: ValidatedSessionOptions): UsageLedger {
  return new UsageLedger({
    ...(validated.priceTable ? { prices: validated.priceTable } : {}),
    sessionBudget: {
      ...(validated.maxTokens !== undefined ? { maxTokens: validated.maxTokens } : {}),
      ...(validated.maxCostUsd !== undefined ? { maxCostUsd: validated.maxCostUsd } : {}),
    },
    model: resolveModelAlias(validated.model ?? DEFAULT_MAIN_MODEL),
  });
}

/** Kills a background shell if it still runs and deletes its log; a failure is a process warning. */
async function releaseShell(taskId: string): Promise<void> {
  try {
    await (await loadTools()).releaseBackgroundShell(taskId);
  } catch (error) {
    process.emitWarning(
      `DelegateSession.close: the log of background shell ${taskId} could not be deleted: ${errorMessage(error)}`,
      { code: 'DELEGATE_SHELL_LOG_LEFT' },
    );
  }
}

/** The tools the session adds to the main agent's: Agent and the task tools. */
function sessionAgentTools(runtime: AgentRuntime): Tool[] {
  return [
    createAgentTool(runtime),
    createTaskOutputTool(runtime),
    createTaskStopTool(runtime),
    createSendMessageTool(runtime),
  ];
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
  /** Tasks of the session: sub-agents and background shells (type `local_bash`), with their status. */
  readonly tasks: TaskRegistry;
  /** Transcript writer, when transcripts are on. */
  readonly transcript: TranscriptStore | undefined;
  /** The main conversation. */
  readonly messages: Message[] = [];
  /** Shared state of the agent tools (what the tool factories take). */
  readonly runtime: AgentRuntime;
  private readonly systemPrompt: string[];
  private readonly userContext: Record<string, string> | undefined;
  private readonly canUseTool: CanUseTool;
  private readonly mainAgentTools: ValidatedSessionOptions['mainAgentTools'];
  private readonly cacheSafeParams = createCacheSafeParamsSlot();
  private lastAgentList: string | undefined;
  // Every background shell any agent of the session started, released (log deleted) by close.
  private readonly shellTaskIds = new Set<string>();
  private closing: Promise<void> | undefined;
  // The call whose turn is running (send, run, settleInFlightToolCalls); one at a time.
  private turnHolder: 'send' | 'run' | 'settleInFlightToolCalls' | undefined;

  private constructor(runtime: AgentRuntime, options: ValidatedSessionOptions) {
    this.runtime = runtime;
    this.context = runtime.rootContext;
    this.events = runtime.events;
    this.tasks = runtime.tasks;
    this.transcript = runtime.transcript;
    this.userContext = options.userContext;
    this.mainAgentTools = options.mainAgentTools;
    this.systemPrompt = getMainSystemPrompt({
      environment: getEnvironmentDetails({ cwd: options.cwd, model: this.context.options.model }),
      ...(options.customSystemPrompt ? { customPrompt: options.customSystemPrompt } : {}),
      ...(options.appendSystemPrompt ? { appendPrompt: options.appendSystemPrompt } : {}),
    });
    const ask = options.ask ? checkedAsk(options.ask) : undefined;
    this.canUseTool = withAskRules(createCanUseTool(ask ? { ask } : {}), ask ? { ask } : {});
  }

  /**
   * Creates a session: validates the options (an `INVALID_ARGUMENT` error names the bad
   * field), loads agent definitions, builds the tools and the root context. With `resume`,
   * picks up session `sessionId` from its transcript: the conversation, and the
   * notifications queued for the main agent that no request carried (queued again, once).
   */
  static async create(options: DelegateSessionOptions): Promise<DelegateSession> {
    const validated = await resolveHomeDirectory(
      await resolveWorkingDirectory(validateSessionOptions(options)),
    );
    await checkWorktreeRoot(validated);
    const env = validated.env ?? process.env;
    const client = await clientOf(validated, env);
    const agentDefs = await import('@delegate/agent-defs');
    const { definitions, explainUnknownAgentType } = await definitionsOf(validated, agentDefs);
    const baseTools =
      validated.tools ??
      (await loadTools()).getBuiltinTools({ bash: { env: withoutCredentials(process.env) } });
    const runtimeOptions = runtimeOptionsOf(validated, env);
    const sessionId = validated.sessionId ?? createUuid();
    // Events, task states and transcripts all keep the session's secrets out.
    const redact = redactOption({ client, options: { secrets: validated.secrets ?? [] } });
    const { events, transcript } = recordersOf(validated, redact, sessionId);
    const runtime = {
      client,
      sessionId,
      options: runtimeOptions,
      // Finished tasks are kept as long as agent summaries, plus the agents kept whole.
      tasks: new TaskRegistry({
        maxFinished: runtimeOptions.maxRetainedAgents + runtimeOptions.maxAgentSummaries,
        ...redact,
      }),
      usage: usageLedgerOf(validated),
      events,
      ...(transcript ? { transcript } : {}),
      baseTools: () => baseTools,
      agentTools: () => agentTools,
      getAgentDefinitions: () => definitions,
      ...(explainUnknownAgentType ? { explainUnknownAgentType } : {}),
      ...(validated.ask ? { ask: validated.ask } : {}),
      agents: new AgentDirectory({
        maxRetained: runtimeOptions.maxRetainedAgents,
        maxSummaries: runtimeOptions.maxAgentSummaries,
      }),
      forkWarmups: new Map(),
      foreground: new Map(),
      forkAgent: agentDefs.FORK_AGENT,
      defaultAgentType: agentDefs.GENERAL_PURPOSE_AGENT_TYPE,
      oneShotAgentTypes: agentDefs.ONE_SHOT_BUILTIN_AGENT_TYPES,
      pendingBackgroundSpawns: 0,
      pendingRuns: new Set(),
      resumingAgents: new Set(),
      agentMcpConnections: new Set(),
      backgroundStart: createStartGate(),
      requestGate: createStartGate(),
      rootCwd: validated.cwd,
    } as Omit<AgentRuntime, 'rootContext' | 'backgroundAbort'> as AgentRuntime;
    const agentTools = sessionAgentTools(runtime);
    runtime.rootContext = rootContextOf({ validated, baseTools, agentTools, definitions, events });
    runtime.backgroundAbort = new AbortHub(runtime.rootContext.abortController.signal);
    // Nobody reads the main agent's queue after an abort.
    runtime.rootContext.abortController.signal.addEventListener(
      'abort',
      () => runtime.tasks.abandonQueued(),
      { once: true },
    );
    // Task changes are mirrored into the root state for UIs; background shells written
    // there by any agent's Bash tool become tasks of the session.
    const setRootState = runtime.rootContext.setAppStateForTasks ?? runtime.rootContext.setAppState;
    runtime.tasks.mirrorTo(setRootState);
    runtime.rootContext.setAppStateForTasks = trackShellTasks({
      tasks: runtime.tasks,
      setState: setRootState,
      signal: runtime.rootContext.abortController.signal,
      // Only a tool call starts a shell: never before the session below exists.
      onNewShell: (taskId) => session.rememberShell(taskId),
    });
    const mainToolHooks = mainHooksOf(validated, runtime);
    if (mainToolHooks) runtime.mainToolHooks = mainToolHooks;
    recordQueuedNotifications(runtime);
    const session = new DelegateSession(runtime, validated);
    const mcp = validated.mcp;
    if (mcp) runtime.refreshMcp = () => session.syncMcp(mcp);
    if (validated.resume && runtime.transcript) await session.restoreFrom(runtime.transcript);
    return session;
  }

  /** Reads the main conversation and the notifications still owed to it back from `transcript`. */
  private async restoreFrom(transcript: TranscriptStore): Promise<void> {
    const path = transcript.sessionPath();
    // The session is not returned yet, so nobody listens to its events: these are process
    // warnings (printed on stderr unless the host handles 'warning').
    const warn = (code: string) => (message: string) => process.emitWarning(message, { code });
    let entries;
    try {
      entries = await readTranscript(path, { onWarning: warn('DELEGATE_TORN_TRANSCRIPT') });
    } catch (error) {
      if (!DelegateError.hasCode(error, 'NOT_FOUND')) throw error;
      throw new DelegateError(
        'NOT_FOUND',
        `DelegateSession.create: options.resume: no transcript of session ${this.sessionId} at ${path}. Check sessionId and transcriptDir (the directory the session was recorded in).`,
        { cause: error, details: { path, sessionId: this.sessionId } },
      );
    }
    if (entries.length === 0) {
      // Empty only when it has no bytes: blank lines or a torn only line are no message either.
      const empty = (await stat(path).catch(() => undefined))?.size === 0;
      warn('DELEGATE_EMPTY_TRANSCRIPT')(
        `DelegateSession.create: options.resume: the transcript of session ${this.sessionId} at ${path} ${empty ? 'records nothing (it is empty)' : 'records no message'}, so the session starts with no conversation.`,
      );
    }
    const restored = restoreSessionTranscript(
      entries,
      path,
      warn('DELEGATE_BAD_TRANSCRIPT_RECORD'),
    );
    // One at a time: a long conversation spread as arguments could overflow the stack.
    for (const message of restored.messages) this.messages.push(message);
    this.lastAgentList = lastAgentListOf(restored.messages);
    if (restored.lastUuid) transcript.continueSessionAfter(restored.lastUuid);
    this.tasks.restoreQueued(restored.pendingNotifications);
    this.tasks.rememberNotified(restored.notifiedTasks);
  }

  /**
   * How task `taskId` ended, once it has a notification. In this process that is any ended
   * task whose notification was made, wherever it went: queued for or delivered to the main
   * agent, handed to the inbox of the agent that started it (a sub-agent or a fork), or left
   * undeliverable because the session was aborted. In a session created with `resume`, also a
   * task whose notification the transcript it picked up records. Undefined for a task still
   * running, one with no notification, or one this session does not know. A host resuming
   * interrupted agents after a crash skips these, so none of them reports twice.
   */
  notifiedTaskStatus(taskId: string): EndedTaskStatus | undefined {
    const task = this.tasks.get(taskId);
    if (task?.notification && task.status !== 'running') return task.status;
    return this.tasks.notifiedEarlierStatus(taskId);
  }

  /**
   * The background agents the main conversation's `Agent` calls started, as the calls'
   * results say, in order. After a resume, a host accounts for each: it resumes it, or tells
   * the main agent how it ended ({@link DelegateSession.reportLostAgent}).
   */
  backgroundLaunches(): BackgroundLaunch[] {
    return backgroundLaunchesOf(this.messages);
  }

  /**
   * True when the main conversation holds a notification of agent `agentId`, under any task
   * (an agent a host resumed reports under a new task), or a task of this session runs or
   * ran it.
   */
  heardFromAgent(agentId: string): boolean {
    return heardFromAgent(agentId, this.messages, this.tasks);
  }

  /**
   * Tells the main agent how a background agent that ended outside this process went: a
   * `<task-notification>` with `outcome` (its report, when it had finished but the crash cut
   * its notification, or why it is lost), queued for its next request and recorded like any
   * other, so it reaches the model once, also across later resumes. Nothing happens, and it
   * returns false, when the task already has a notification or this session knows the task.
   * Throws `INVALID_ARGUMENT` for a report that is not well formed.
   */
  reportLostAgent(report: LostAgentReport): boolean {
    return reportLostAgent(this.tasks, (taskId) => this.notifiedTaskStatus(taskId), report);
  }

  /** The session's id (its transcript file is `<transcriptDir>/<sessionId>.jsonl`). */
  get sessionId(): string {
    return this.runtime.sessionId;
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
    this.context.options.tools = mainAgentToolList({
      baseTools: this.runtime.baseTools(),
      mcpTools: tools,
      sessionTools: this.runtime.agentTools(),
      lists: this.mainAgentTools,
    });
  }

  /** True when a run would have nothing to answer: no prompt, no notification, and the model spoke last. */
  private nothingToAnswer(prompt: string): boolean {
    if (prompt.length > 0 || this.tasks.pendingNotifications > 0) return false;
    for (let index = this.messages.length - 1; index >= 0; index--) {
      const type = this.messages[index]?.type;
      if (type === 'user') return false;
      if (type === 'assistant') return true;
    }
    return true;
  }

  /** The messages a run opens with: the agent list when it changed, and the prompt. */
  private openingMessages(prompt: string): Message[] {
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
    return added;
  }

  /**
   * Runs one main-agent turn for `prompt`: yields stream events and messages until the
   * model stops calling tools. Notifications of finished background agents are added
   * before each request. An empty prompt with nothing waiting (no notification, no
   * unanswered user message) sends no request and returns `turns: 0`. A completed turn
   * saves its cache-safe parameters (see `lastCacheSafeParams`).
   */
  async *run(
    prompt: string,
    options: { maxTurns?: number } = {},
  ): AsyncGenerator<QueryEvent, QueryOutcome> {
    checkPrompt('run', prompt);
    checkCallOptions('run', options);
    const release = this.holdTurn('run');
    try {
      return yield* this.runTurn(prompt, options.maxTurns);
    } finally {
      release();
    }
  }

  /**
   * Marks a turn as running for `call` and returns what ends it. Two turns at once would both
   * append to `messages` (two answers to one conversation, in an order nobody chose), so a
   * second call while one runs is refused, before it adds anything.
   */
  private holdTurn(call: NonNullable<DelegateSession['turnHolder']>): () => void {
    if (this.turnHolder !== undefined)
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `${call}: a turn of this session is still running (started by ${this.turnHolder}()); await it before starting another, or queue the prompt and send it when the turn ends.`,
      );
    this.turnHolder = call;
    return () => {
      this.turnHolder = undefined;
    };
  }

  private async *runTurn(
    prompt: string,
    maxTurns: number | undefined,
  ): AsyncGenerator<QueryEvent, QueryOutcome> {
    if (this.nothingToAnswer(prompt)) {
      // An aborted session runs no more turns, also when there was nothing to run.
      const aborted = this.context.abortController.signal.aborted;
      return { reason: aborted ? 'aborted' : 'completed', turns: 0 };
    }
    this.runtime.refreshMcp?.();
    const added = this.openingMessages(prompt);
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
      ...(this.runtime.mainToolHooks ? { toolHooks: this.runtime.mainToolHooks } : {}),
      ...(maxTurns !== undefined ? { maxTurns } : {}),
      drainQueuedMessages: this.tasks.drainNotifications,
      usageGuard: createUsageGuard({
        runtime: this.runtime,
        agentId: MAIN_AGENT_ID,
        model: () => this.context.options.model,
      }),
      ...sessionQueryOptions(this.runtime),
    });
    let ended = false;
    try {
      for (;;) {
        const next = await generator.next();
        if (next.done) {
          ended = true;
          if (next.value.reason === 'completed') this.saveCacheSafeParams();
          return next.value;
        }
        const event = next.value;
        if (event.type !== 'stream_event' && event.type !== 'stream_request_start') {
          this.messages.push(event);
          if (event.type !== 'system') await this.transcript?.append([event]);
        }
        yield event;
      }
    } finally {
      // A consumer that stops early (a run() loop that breaks, an onEvent that throws) ends
      // the loop too: its response stream is cancelled and its timers stop.
      if (!ended) await generator.return({ reason: 'aborted', turns: 0 });
    }
  }

  private saveCacheSafeParams(): void {
    this.cacheSafeParams.save({
      systemPrompt: this.systemPrompt,
      userContext: this.userContext ?? {},
      systemContext: {},
      toolUseContext: this.context,
      forkContextMessages: this.messages,
    });
  }

  /**
   * The cache-safe parameters of the last completed turn (a snapshot: later messages do
   * not change it), or null before the first one. Work after a turn forks from them to
   * share the turn's prompt cache; `forkAfterTurn` does that for you.
   */
  lastCacheSafeParams(): CacheSafeParams | null {
    return this.cacheSafeParams.get();
  }

  /**
   * Runs work forked from the last completed turn (a summary, a suggestion, a side
   * question) with `runForkedAgent`: same system prompt, tools, model, thinking and
   * history bytes as that turn's last request, so it reads the turn's prompt cache.
   * Throws `INVALID_ARGUMENT` before any turn has completed.
   */
  async forkAfterTurn(options: ForkAfterTurnOptions): Promise<ForkedAgentResult> {
    checkCallOptions('forkAfterTurn', options);
    const params = this.cacheSafeParams.get();
    if (!params) {
      throw new DelegateError(
        'INVALID_ARGUMENT',
        'forkAfterTurn needs a completed turn to fork from, and this session has none yet. Call send() (or run()) first.',
      );
    }
    return runForkedAgent({
      client: this.runtime.client,
      promptMessages: [createUserMessage({ content: options.prompt })],
      cacheSafeParams: params,
      canUseTool: this.canUseTool,
      querySource: options.querySource ?? 'post_turn_fork',
      forkLabel: options.label ?? 'fork',
      ...(this.transcript ? { transcript: this.transcript } : {}),
      ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
      ...(options.skipTranscript ? { skipTranscript: true } : {}),
      ...(options.skipCacheWrite ? { skipCacheWrite: true } : {}),
      ...(options.onMessage ? { onMessage: options.onMessage } : {}),
      ...(options.onComplete ? { onComplete: options.onComplete } : {}),
      // It runs tools as the main agent does: with its hooks, its secrets kept out.
      ...(this.runtime.mainToolHooks ? { toolHooks: this.runtime.mainToolHooks } : {}),
      secrets: this.runtime.options.secrets,
      // Work after a turn is the main agent's: its usage and its budget.
      usageGuard: createUsageGuard({
        runtime: this.runtime,
        agentId: MAIN_AGENT_ID,
        model: () => params.toolUseContext.options.model,
      }),
    });
  }

  /**
   * The whole session's usage tree: the main agent at the root, every sub-agent under the
   * agent that started it, each with its own usage and cost, its subtree's, its budget and
   * what is left of it. A snapshot: later responses do not change it.
   */
  usage(): AgentUsageNode {
    return this.runtime.usage.tree(MAIN_AGENT_ID)!;
  }

  /**
   * Runs a turn to its end and returns the final text, with this call's usage and cost
   * and the sub-agents it started. With `waitForBackground`, keeps going while background
   * agents run: each notification starts another turn. Throws `BUDGET_EXCEEDED` when the
   * session's budget runs out (the conversation keeps what was done).
   */
  async send(prompt: string, options: SendOptions = {}): Promise<SendResult> {
    checkPrompt('send', prompt);
    checkCallOptions('send', options);
    const release = this.holdTurn('send');
    try {
      const before = {
        main: this.runtime.usage.figures(MAIN_AGENT_ID),
        agents: new Set(this.runtime.usage.descendants(MAIN_AGENT_ID)),
      };
      const { text, outcome } = await this.sendTurns(prompt, options);
      return { text, outcome, ...this.usageSince(before) };
    } finally {
      release();
    }
  }

  /** This call's figures: the main agent's growth plus the sub-agents started since `before`. */
  private usageSince(before: {
    main: { usage: CompleteUsage; costUsd: number };
    agents: ReadonlySet<string>;
  }): Pick<SendResult, 'usage' | 'costUsd' | 'agents'> {
    const main = this.runtime.usage.figures(MAIN_AGENT_ID);
    const agents = this.usage().children.filter((child) => !before.agents.has(child.agentId));
    let usage = subtractUsage(main.usage, before.main.usage);
    let costUsd = main.costUsd - before.main.costUsd;
    for (const agent of agents) {
      usage = addUsage(usage, agent.treeUsage);
      costUsd += agent.treeCostUsd;
    }
    return { usage, costUsd, agents };
  }

  private async sendTurns(
    prompt: string,
    options: SendOptions,
  ): Promise<{ text: string; outcome: QueryOutcome }> {
    // run() itself sends nothing when there is nothing to answer.
    const start = this.messages.length;
    let outcome = await this.consume(this.runTurn(prompt, options.maxTurns), options.onEvent);
    const signal = this.context.abortController.signal;
    while (options.waitForBackground) {
      // Stopped (abort, close) while background work was still owed: not a completed wait.
      if (signal.aborted) {
        outcome = { ...outcome, reason: 'aborted' };
        break;
      }
      if (this.tasks.pendingNotifications === 0) {
        if (this.tasks.runningBackgroundCount === 0) break;
        await this.tasks.waitForNotification({ timeoutMs: 600_000, signal });
        if (this.tasks.pendingNotifications === 0) continue;
      }
      outcome = await this.consume(this.runTurn('', options.maxTurns), options.onEvent);
    }
    // This call's answer only: a turn that got none (aborted, or nothing to answer) is ''.
    const last = getLastAssistantMessage(this.messages.slice(start));
    return { text: last ? getText(last.message.content) : '', outcome };
  }

  private async consume(
    generator: AsyncGenerator<QueryEvent, QueryOutcome>,
    onEvent?: (event: QueryEvent) => void,
  ): Promise<QueryOutcome> {
    for (;;) {
      const next = await generator.next();
      if (next.done) return next.value;
      try {
        onEvent?.(next.value);
      } catch (error) {
        // The handler's error is send()'s; the turn stops here rather than run on unread.
        await generator.return({ reason: 'aborted', turns: 0 });
        throw error;
      }
    }
  }

  /**
   * Resumes a sub-agent from its transcript (this session's, or `sessionId`'s in the same
   * transcript directory): its conversation is restored, the tool calls it left in flight are
   * settled (`inFlightToolCalls`, default `interrupt`), and it runs on in the background with
   * `message` (or a note that it was interrupted). Its transcript continues under this
   * session; in the session that recorded it, the same file continues without the history
   * written again. Refuses an agent still running here, and a follow-up `message` to a
   * one-shot built-in (Explore, Plan) that already gave its report; resumed without one, such
   * an agent settles on that report (its notification is sent again) without a request.
   * A session that was aborted or closed refuses with `ABORTED`.
   */
  async resumeAgent(options: ResumeAgentOptions): Promise<AgentToolOutput> {
    checkCallOptions('resumeAgent', options);
    // Started here, it would be killed at once and its notification lost: say so instead.
    if (this.context.abortController.signal.aborted)
      throw new DelegateError(
        'ABORTED',
        `resumeAgent: the session was ${this.closing ? 'closed' : 'aborted'}; it runs no more agents. Resume ${options.agentId} in a new session over the same transcript folder.`,
      );
    return resumeAgentFromTranscript(this.runtime, options);
  }

  /**
   * Settles the main agent's tool calls that were in flight when its conversation was cut
   * (restored into `messages`, it ends with an assistant message whose calls have no
   * results), as `resumeAgent` does for a sub-agent: with `interrupt` (default) every call
   * gets a result saying it was interrupted; with `rerun-read-only` the read-only calls run
   * again with the main agent's tools and permissions and the others get that result. A call
   * whose id is in `results` (an Agent call whose agent finished, its report read back from
   * its transcript, whose meta records the call as `parentToolUseId`) gets that text instead.
   * The results are added to `messages` and the transcript. Returns the names of the calls
   * run again, interrupted and recovered (all empty when nothing was in flight). Throws
   * `INVALID_ARGUMENT` for options that are not an object, an unknown key, a `mode` that is
   * neither, or `results` that are not texts by call id.
   */
  async settleInFlightToolCalls(
    options: { mode?: InFlightToolCalls; results?: Readonly<Record<string, string>> } = {},
  ): Promise<SettledToolCalls> {
    if (typeof options !== 'object' || options === null)
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `settleInFlightToolCalls: options must be an object such as { mode: 'interrupt' }, got ${JSON.stringify(options)}.`,
      );
    checkCallOptions('settleInFlightToolCalls', options);
    checkInFlightToolCalls(options.mode, 'settleInFlightToolCalls: mode');
    const known = options.results;
    if (
      known !== undefined &&
      (typeof known !== 'object' ||
        known === null ||
        Array.isArray(known) ||
        Object.values(known).some((text) => typeof text !== 'string'))
    )
      throw new DelegateError(
        'INVALID_ARGUMENT',
        'settleInFlightToolCalls: results must map tool call ids to result texts, such as { "toolu_…": "the report" }.',
      );
    const release = this.holdTurn('settleInFlightToolCalls');
    try {
      const redact = sessionRedactor(this.runtime);
      const settled = await settleInFlightToolCalls({
        messages: this.messages,
        mode: options.mode ?? 'interrupt',
        context: this.context,
        canUseTool: this.canUseTool,
        ...(this.runtime.mainToolHooks ? { hooks: this.runtime.mainToolHooks } : {}),
        ...(redact ? { redact } : {}),
        ...(options.results ? { results: options.results } : {}),
      });
      if (!settled) return { rerun: [], interrupted: [], recovered: [] };
      const { messages, ...names } = settled;
      this.messages.push(...messages);
      await this.transcript?.append(messages);
      return names;
    } finally {
      release();
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

  /** Stops a running task (throws `NOT_FOUND` for an unknown id) and returns it. */
  stopTask(taskId: string): TaskState {
    const task = this.tasks.require(taskId);
    task.kill?.();
    return task;
  }

  /**
   * Aborts the session: the main turn, every sub-agent under it, and every background
   * shell any of them started (also those of sub-agents that already finished).
   */
  abort(reason?: unknown): void {
    this.context.abortController.abort(reason);
  }

  /**
   * Ends the session for good: aborts it as `abort` does, stops the MCP servers sub-agents
   * started for themselves, waits as `flush` does, then releases every background shell any
   * of its agents started (`releaseBackgroundShell` of
   * `@delegate/tools`): one still running is killed and has ended (its task `killed`) when
   * this resolves, and their logs are deleted, so TaskOutput, which reads a finished shell's
   * output until then, no longer can. A log that cannot be deleted is a process warning
   * (`DELEGATE_SHELL_LOG_LEFT`), not an error. Calling it again waits for the first call.
   */
  close(reason?: unknown): Promise<void> {
    this.closing ??= (async () => {
      this.abort(reason);
      // Sub-agents' own MCP servers stop now, also those of a foreground run still ending.
      await Promise.allSettled(
        [...this.runtime.agentMcpConnections].map((connection) => connection.close()),
      );
      await this.flush();
      const taskIds = [...this.shellTaskIds];
      this.shellTaskIds.clear();
      await Promise.all(taskIds.map((taskId) => releaseShell(taskId)));
    })();
    return this.closing;
  }

  /** Notes a background shell of the session; one that starts after `close` is released at once. */
  private rememberShell(taskId: string): void {
    if (this.closing === undefined) this.shellTaskIds.add(taskId);
    else void releaseShell(taskId);
  }

  /** Waits for runs that are settling and for pending transcript writes. */
  async flush(): Promise<void> {
    while (this.runtime.pendingRuns.size > 0)
      await Promise.allSettled([...this.runtime.pendingRuns]);
    this.tasks.flushMirror();
    await this.transcript?.flush();
  }
}
