import type { AgentDefinitionsLoadResult, AgentDiagnostic } from '@delegate/agent-defs';
import type { Policy, Sim } from '@delegate/api-sim';
import {
  type AgentDefinition,
  type Message,
  type Tool,
  DelegateError,
  createUuid,
  errorMessage,
} from '@delegate/core';
import type { DelegateSession, DelegateSessionOptions } from '@delegate/runtime';
import type { McpManager } from '@delegate/tools';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { UsageError } from '../exit-codes.js';
import { loadTools } from '../load-tools.js';
import type { EffectiveConfig } from '../settings/resolve-config.js';
import { defaultSimPolicy } from './default-sim-policy.js';
import { STOPPING_NOTE, holdStopSignals } from './hold-stop-signals.js';
import { readAgentsFlag } from './load-flag-agents.js';
import { type StdioServer, loadMcpConfig } from './load-mcp-config.js';
import {
  type MainAgentMcp,
  checkMainAgentMcp,
  describeMainAgent,
  mainAgentToolHooks,
  readMainAgentMcp,
} from './main-agent-extras.js';
import { loadPolicyModule } from './load-policy-module.js';
import { type OutputRedaction, outputRedaction } from './output-redaction.js';
import { toPermissionRules } from './permission-rules.js';
import { lockSession } from './session-lock.js';
import { settleEarlierAgents } from './settle-earlier-agents.js';
import { checkTranscriptFolder } from './check-transcript-folder.js';
import { checkModels } from './check-models.js';

/** Options of `createCliSession` that are not settings. */
export type CliSessionOptions = {
  /** Effective settings of the run. */
  config: EffectiveConfig;
  /** `--agent`: the main thread runs as this agent's definition. */
  agent?: string;
  /** `--agents`: JSON text or a file of flag-source definitions. */
  agents?: string;
  /** `--resume`: continue this session's main conversation. */
  resume?: string;
  /**
   * Continue a conversation held in memory (the interactive session after Ctrl-C), under
   * this id. With `transcriptComplete` (every line of it reached the transcript), the new
   * session reads the conversation and the notifications still owed to it back from the
   * transcript instead.
   */
  continueFrom?: { sessionId: string; messages: readonly Message[]; transcriptComplete?: boolean };
  /** `--sim`: `true` for the default policy, or a policy module's path. */
  sim?: string | true;
  /** A simulator policy given in code (the demo), instead of `sim`. */
  simPolicy?: Policy;
  /** Simulator latency (the demo's pacing). */
  simPacing?: { timeToFirstTokenMs: number; msPerToken: number };
  /** The directory relative paths on the command line are taken from. */
  processCwd: string;
  /** Asks the person at the terminal; without it a question is a denial. */
  ask?: DelegateSessionOptions['ask'];
  /** Agent-file problems are reported here. */
  onDiagnostics?: (diagnostics: AgentDiagnostic[]) => void;
  /** Other problems worth telling the person (an MCP server that did not connect). */
  onWarning?: (message: string) => void;
  /** Extra session options (the demo's). */
  session?: Partial<DelegateSessionOptions>;
  /**
   * Aborted by a stop signal while the session is set up: waiting for MCP servers ends, what
   * was started is closed, and `createCliSession` rejects with the signal's reason.
   */
  signal?: AbortSignal;
};

/** A session built from the command line, with what a renderer needs and what to close. */
export type CliSession = {
  session: DelegateSession;
  /** The session id (transcripts and `--resume` use it). */
  sessionId: string;
  /** `sim`, or the variable the API key came from. */
  apiKeySource: string;
  /** MCP servers and where each stands. */
  mcpServers: () => Array<{ name: string; status: string }>;
  /** Applied to everything the CLI prints of the run: the session's secrets removed. */
  redact: OutputRedaction;
  /** Stops MCP servers and the simulator. */
  close(): Promise<void>;
};

/** What a session talks to: the API, or a simulator started in this process. */
type ApiConnection = { apiKey: string; baseURL?: string; source: string; sim?: Sim };

// A session id becomes a file name in the transcript folder.
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** The credentials of the environment long enough to redact (the runtime's minimum: 8). */
function secretsOf(config: EffectiveConfig): { secrets?: string[] } {
  const key = config.apiKey.value;
  return key !== undefined && key.length >= 8 ? { secrets: [key] } : {};
}

async function connectApi(options: CliSessionOptions): Promise<ApiConnection> {
  if (options.sim !== undefined || options.simPolicy) {
    const { startSim } = await import('@delegate/api-sim');
    const policy =
      options.simPolicy ??
      (options.sim === true || options.sim === undefined
        ? await defaultSimPolicy()
        : await loadPolicyModule({
            path: options.sim,
            processCwd: options.processCwd,
            flag: '--sim',
          }));
    const sim = await startSim({
      policy,
      ...(options.simPacing ? { pacing: options.simPacing } : {}),
    });
    return { apiKey: 'sim', baseURL: sim.url, source: 'sim', sim };
  }
  const apiKey = options.config.apiKey.value;
  if (!apiKey) {
    throw new UsageError(
      'No API key: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a proxy or gateway), or add --sim to run on the bundled simulator.',
    );
  }
  const baseURL = options.config.baseURL.value;
  if (baseURL) {
    const { checkApiBaseUrl } = await import('@delegate/runtime');
    try {
      checkApiBaseUrl(baseURL, 'ANTHROPIC_BASE_URL');
    } catch (error) {
      throw new UsageError(errorMessage(error));
    }
  }
  return { apiKey, ...(baseURL ? { baseURL } : {}), source: 'ANTHROPIC_API_KEY' };
}

function findMainAgent(name: string, agents: readonly AgentDefinition[]): AgentDefinition {
  const found = agents.find((agent) => agent.agentType === name);
  if (found) return found;
  const available = agents.map((agent) => agent.agentType).join(', ');
  throw new UsageError(
    `--agent ${name}: no such agent. Available: ${available}. \`delegate agents list\` shows where each comes from.`,
  );
}

/**
 * Checks a `--resume` id, that transcripts are on (the session reads its transcript back) and
 * that its transcript holds a message, before anything is connected.
 */
async function checkResume(transcriptDir: string | false, sessionId: string): Promise<void> {
  if (!SESSION_ID.test(sessionId)) {
    throw new UsageError(
      `--resume ${sessionId}: not a session id (letters, digits, "-" and "_"). \`delegate transcripts list\` shows them.`,
    );
  }
  if (transcriptDir === false) {
    throw new UsageError(
      '--resume needs transcripts, and they are off (transcriptDir: false). Remove that setting or pass --transcript-dir.',
    );
  }
  // A transcript with no complete message (a session that crashed before its first line, or
  // while writing it) has no conversation to continue: refused like a missing one, rather
  // than running the prompt with no context. A file that cannot be read (missing, not a
  // regular file, a corrupt line) is left to the session, which says why.
  const path = join(transcriptDir, `${sessionId}.jsonl`);
  const { readTranscript } = await import('@delegate/runtime');
  let torn = false;
  let entries;
  try {
    // Only its first message: the session reads the whole file itself.
    entries = await readTranscript(path, { onWarning: () => (torn = true), limit: 1 });
  } catch {
    return;
  }
  if (entries.length > 0) return;
  const what = torn
    ? 'holds no complete message (its only line is cut short, as a crash leaves it)'
    : 'records no message';
  throw new UsageError(
    `--resume ${sessionId}: the transcript at ${path} ${what}, so there is no conversation to continue. Run without --resume to start a new session; \`delegate transcripts list\` shows the others.`,
  );
}

/** Agent definitions of the project and user, plus `--agents`, with problems reported. */
async function loadDefinitions(options: CliSessionOptions): Promise<AgentDefinitionsLoadResult> {
  const flagAgents =
    options.agents === undefined ? undefined : readAgentsFlag(options.agents, options.processCwd);
  const { getAgentDefinitionsWithOverrides, restrictProjectAgents } =
    await import('@delegate/agent-defs');
  const definitions = await getAgentDefinitionsWithOverrides({
    cwd: options.config.cwd,
    homeDir: options.config.homeDir,
    ...(flagAgents ? { flagAgents } : {}),
  });
  options.onDiagnostics?.(definitions.diagnostics);
  if (options.config.projectTrusted) return definitions;
  const restricted = restrictProjectAgents(definitions);
  for (const entry of restricted.ignored) {
    options.onWarning?.(`ignored ${entry.field} in ${entry.where}: ${entry.reason}.`);
  }
  if (restricted.ignored.length > 0) {
    options.onWarning?.(
      `${options.config.projectRoot} is not a trusted project, so its agent files cannot loosen permissions or run programs. Add it to "trustedProjects" in ~/.delegate/settings.json, or pass --trust-project.`,
    );
  }
  return restricted.definitions;
}

/**
 * The servers' states once each has connected or failed; a stop (`signal`) before then closes
 * them (their processes end) and rejects with its reason.
 */
async function settledUnlessStopped(
  manager: McpManager,
  signal: AbortSignal | undefined,
): Promise<Awaited<ReturnType<McpManager['whenSettled']>>> {
  if (!signal) return manager.whenSettled();
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([manager.whenSettled(), stopped]);
  } catch (error) {
    await manager.close();
    throw error;
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Starts the MCP servers of `--mcp-config` and those the `--agent` file defines, and waits
 * until each has connected or failed. A name in both runs the `--mcp-config` server.
 */
async function connectMcpServers(
  options: CliSessionOptions,
  mainAgent: { where: string; mcp: MainAgentMcp } | undefined,
): Promise<McpManager | undefined> {
  const path = options.config.mcpConfig.value;
  const servers: Record<string, StdioServer> = path ? loadMcpConfig(path) : {};
  const where = mainAgent?.where ?? '--agent';
  for (const [name, server] of Object.entries(mainAgent?.mcp.inline ?? {})) {
    if (name in servers) {
      options.onWarning?.(
        `${where}: mcpServers defines "${name}", which --mcp-config also has; the --mcp-config server runs.`,
      );
      continue;
    }
    servers[name] = server;
  }
  if (Object.keys(servers).length === 0) return undefined;
  const { createMcpManager } = await loadTools();
  options.signal?.throwIfAborted();
  const manager = createMcpManager({ servers });
  // The first request should offer the servers' tools.
  for (const state of await settledUnlessStopped(manager, options.signal)) {
    if (state.type === 'failed')
      options.onWarning?.(
        `MCP server "${state.name}" did not connect: ${state.error ?? 'unknown error'}`,
      );
  }
  return manager;
}

/** What the main thread runs as: its tools, model, mode and prompt (`--agent` changes them). */
async function mainThreadOptions(
  config: EffectiveConfig,
  mainAgent: AgentDefinition | undefined,
  onWarning: (message: string) => void,
): Promise<
  Pick<
    DelegateSessionOptions,
    | 'tools'
    | 'model'
    | 'permissionMode'
    | 'customSystemPrompt'
    | 'mainAgentHooks'
    | 'mainAgentTools'
  >
> {
  const [{ getBuiltinTools }, { withoutCredentials }] = await Promise.all([
    loadTools(),
    import('@delegate/runtime'),
  ]);
  // Commands the agents run never see the API key: a model that runs `env` (or a hook of a
  // cloned repository's agent file) cannot read it into a transcript or send it away.
  const tools: Tool[] = getBuiltinTools({ bash: { env: withoutCredentials(process.env) } });
  if (!mainAgent)
    return { tools, model: config.model.value, permissionMode: config.permissionMode.value };
  // The session applies the file's lists to the built-in tools and to the MCP tools (also of
  // servers that connect later); the Agent and task tools stay.
  const mainAgentTools = {
    ...(mainAgent.tools ? { tools: mainAgent.tools } : {}),
    ...(mainAgent.disallowedTools ? { disallowedTools: mainAgent.disallowedTools } : {}),
  };
  // A flag or setting still wins over the definition.
  const ownModel = mainAgent.model && mainAgent.model !== 'inherit' ? mainAgent.model : undefined;
  const ownMode =
    mainAgent.permissionMode && mainAgent.permissionMode !== 'bubble'
      ? mainAgent.permissionMode
      : undefined;
  // An untrusted project's file lost its hooks before this point.
  const hooks = await mainAgentToolHooks(mainAgent);
  for (const warning of hooks.warnings) onWarning(warning);
  return {
    tools,
    mainAgentTools,
    model: config.model.origin === 'default' && ownModel ? ownModel : config.model.value,
    permissionMode:
      config.permissionMode.origin === 'default' && ownMode ? ownMode : config.permissionMode.value,
    customSystemPrompt: mainAgent.getSystemPrompt({ cwd: config.cwd }),
    ...(hooks.hooks ? { mainAgentHooks: hooks.hooks } : {}),
  };
}

/** Extra directories go into the root's permission context (the session has no option for them). */
function addWorkingDirectories(session: DelegateSession, directories: readonly string[]): void {
  if (directories.length === 0) return;
  session.context.setAppState((state) => ({
    ...state,
    toolPermissionContext: {
      ...state.toolPermissionContext,
      additionalWorkingDirectories: [
        ...state.toolPermissionContext.additionalWorkingDirectories,
        ...directories,
      ],
    },
  }));
}

/**
 * `DelegateSession.create`, with a `--resume` transcript that is missing or not a regular file
 * reported as a usage error.
 */
async function createSession(
  delegateSession: typeof DelegateSession,
  resume: string | undefined,
  options: DelegateSessionOptions,
  mainAgent: AgentDefinition | undefined,
): Promise<DelegateSession> {
  try {
    return await delegateSession.create(options);
  } catch (error) {
    // A hook of the --agent file that cannot run: named by the flag and the file.
    const hook = DelegateError.hasCode(error, 'INVALID_ARGUMENT')
      ? (error.details?.['hook'] as { where: string; reason: string } | undefined)
      : undefined;
    if (mainAgent && hook) {
      const { RUNNABLE_HOOKS_HINT } = await import('@delegate/runtime');
      throw new UsageError(
        `${describeMainAgent(mainAgent)}: hooks.${hook.where}: ${hook.reason}; ${RUNNABLE_HOOKS_HINT}.`,
      );
    }
    if (resume === undefined) throw error;
    // Only the transcript of the session asked for being missing, or not a regular file (a
    // FIFO, a directory), is a usage error.
    if (DelegateError.hasCode(error, 'NOT_FOUND') && error.details?.['sessionId'] === resume) {
      const path = (error.details['path'] as string | undefined) ?? 'the transcript folder';
      throw new UsageError(
        `--resume ${resume}: no transcript at ${path}. \`delegate transcripts list\` shows the sessions there.`,
      );
    }
    const details = DelegateError.hasCode(error, 'INVALID_ARGUMENT') ? error.details : undefined;
    const path = details?.['path'];
    // A transcript that cannot be read, or holds a line that is no message: nothing ran, and
    // the message names the file and the line.
    const unreadable =
      DelegateError.hasCode(error, 'FILE_SYSTEM_ERROR') &&
      typeof error.details?.['path'] === 'string' &&
      basename(error.details['path']) === `${resume}.jsonl`;
    const badLine =
      typeof path === 'string' &&
      basename(path) === `${resume}.jsonl` &&
      typeof details?.['line'] === 'number';
    if (unreadable || badLine) throw new UsageError(`--resume ${resume}: ${errorMessage(error)}`);
    if (
      typeof path === 'string' &&
      basename(path) === `${resume}.jsonl` &&
      details?.['line'] === undefined
    ) {
      throw new UsageError(
        `--resume ${resume}: ${path} is not a regular file (a FIFO, a device, a socket or a directory), so it is not a transcript to continue. Remove it, or run without --resume to start a new session.`,
      );
    }
    throw error;
  }
}

/**
 * Builds a session from the command line: the API (or an in-process simulator), agent
 * definitions (with `--agents`), the main agent's definition (`--agent`), permission rules,
 * extra directories, MCP servers and a resumed conversation.
 */
export async function createCliSession(options: CliSessionOptions): Promise<CliSession> {
  const { config } = options;
  checkModels(config);
  const definitions = await loadDefinitions(options);
  const mainAgent =
    options.agent === undefined
      ? undefined
      : findMainAgent(options.agent, definitions.activeAgents);
  // Its MCP servers are read (and refused when malformed) before anything starts.
  const mainAgentMcp = mainAgent ? readMainAgentMcp(mainAgent, config.cwd) : undefined;
  // A resumed session reads its conversation and its undelivered notifications back itself.
  // So does the fresh session that goes on after Ctrl-C stopped a turn, when its transcript
  // exists: notifications the stop left undelivered are owed to it too.
  const continued = options.continueFrom;
  const continueFromTranscript =
    continued?.transcriptComplete === true &&
    config.transcriptDir.value !== false &&
    existsSync(join(config.transcriptDir.value, `${continued.sessionId}.jsonl`));
  const history = continued && !continueFromTranscript ? [...continued.messages] : [];
  const resume = continued
    ? continueFromTranscript
      ? continued.sessionId
      : undefined
    : options.resume;
  if (config.transcriptDir.value !== false)
    checkTranscriptFolder(config.transcriptDir.value, config.transcriptDir.where);
  if (resume !== undefined && !continued) await checkResume(config.transcriptDir.value, resume);
  const sessionId = options.continueFrom?.sessionId ?? options.resume ?? createUuid();
  // Refused before anything starts when another process runs this session.
  const unlock =
    config.transcriptDir.value === false
      ? async () => undefined
      : await lockSession({ transcriptDir: config.transcriptDir.value, sessionId });
  // Shell commands an earlier Delegate process left running when it was killed (SIGKILL, a
  // crash: no exit hook ran) are stopped now; those of a live process are left alone.
  const { reapOrphanedShells } = await import('@delegate/tools');
  await reapOrphanedShells().catch(() => undefined);
  let api: Awaited<ReturnType<typeof connectApi>>;
  try {
    api = await connectApi(options);
  } catch (error) {
    await unlock();
    throw error;
  }
  let mcp: McpManager | undefined;
  // A stop signal while the servers stop waits for them (see holdStopSignals), rather than
  // leaving one that ignores its closed stdin running after the CLI has gone.
  const close = (): Promise<void> =>
    holdStopSignals(
      async () => {
        await mcp?.close();
        await api.sim?.close();
        await unlock();
      },
      () => options.onWarning?.(STOPPING_NOTE),
    );
  try {
    mcp = await connectMcpServers(
      options,
      mainAgent && mainAgentMcp
        ? { where: describeMainAgent(mainAgent), mcp: mainAgentMcp }
        : undefined,
    );
    if (mainAgent && mainAgentMcp) {
      const warnings = await checkMainAgentMcp({
        agent: mainAgent,
        named: mainAgentMcp.named,
        configured: (mcp?.getClients() ?? []).map((client) => client.name),
        tools: mcp?.getTools() ?? [],
      });
      for (const warning of warnings) options.onWarning?.(warning);
    }
    const { DelegateSession } = await import('@delegate/runtime');
    const session = await createSession(
      DelegateSession,
      continued ? undefined : resume,
      {
        cwd: config.cwd,
        apiKey: api.apiKey,
        ...(api.baseURL ? { baseURL: api.baseURL } : {}),
        ...(await mainThreadOptions(config, mainAgent, options.onWarning ?? (() => undefined))),
        agentDefinitions: definitions,
        allowRules: await toPermissionRules(config.allowRules, 'allow', options.onWarning),
        denyRules: await toPermissionRules(config.denyRules, 'deny', options.onWarning),
        askRules: await toPermissionRules(config.askRules, 'ask', options.onWarning),
        transcriptDir: config.transcriptDir.value,
        homeDir: config.homeDir,
        forkEnabled: config.fork.value,
        // The runtime prices each agent with the same table the CLI shows costs with.
        priceTable: config.prices.value,
        ...(config.subagentModel.value ? { defaultSubagentModel: config.subagentModel.value } : {}),
        sessionId,
        // The key in the environment is redacted from tool results also when the session does
        // not use it (the simulator runs with its own): a file or a command may still show it.
        ...secretsOf(config),
        ...(options.ask ? { ask: options.ask } : {}),
        ...(mcp ? { mcp } : {}),
        ...options.session,
        ...(resume !== undefined ? { resume: true } : {}),
      },
      mainAgent,
    );
    addWorkingDirectories(
      session,
      config.additionalDirectories.map((directory) => directory.value),
    );
    session.messages.push(...history);
    if (resume !== undefined && !continued && config.transcriptDir.value !== false) {
      await settleEarlierAgents({
        session,
        transcriptDir: config.transcriptDir.value,
        onWarning: options.onWarning ?? (() => undefined),
      });
    }
    // A stop signal during setup closes what was started (below) instead of running.
    if (options.signal?.aborted) {
      await session.close();
      options.signal.throwIfAborted();
    }
    const manager = mcp;
    return {
      session,
      sessionId,
      apiKeySource: api.source,
      redact: outputRedaction([api.apiKey, config.apiKey.value]),
      mcpServers: () =>
        (manager?.getClients() ?? []).map((client) => ({ name: client.name, status: client.type })),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
