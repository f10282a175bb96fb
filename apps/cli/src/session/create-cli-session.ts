import type { AgentDiagnostic } from '@delegate/agent-defs';
import type { Policy, Sim } from '@delegate/api-sim';
import {
  type AgentDefinition,
  type Message,
  type PermissionRule,
  type Tool,
  DelegateError,
  createUuid,
} from '@delegate/core';
import type { DelegateSession, DelegateSessionOptions } from '@delegate/runtime';
import type { McpManager } from '@delegate/tools';
import { UsageError } from '../exit-codes.js';
import { loadTools } from '../load-tools.js';
import type { EffectiveConfig, Sourced } from '../settings/resolve-config.js';
import type { SettingOrigin } from '../settings/settings-schema.js';
import { readAgentsFlag } from './load-flag-agents.js';
import { loadMcpConfig } from './load-mcp-config.js';
import { loadPolicyModule } from './load-policy-module.js';
import { splitToolRules } from './split-tool-rules.js';

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
  /** Continue a conversation held in memory (the interactive session after Ctrl-C), under this id. */
  continueFrom?: { sessionId: string; messages: readonly Message[] };
  /** `--sim`: `true` for the echo policy, or a policy module's path. */
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
};

/** A session built from the command line, with what a renderer needs and what to close. */
export type CliSession = {
  session: DelegateSession;
  /** The session id (transcripts and `--resume` use it). */
  sessionId: string;
  /** The simulator answering this session, when it runs in-process. */
  sim?: Sim;
  /** `sim`, or the variable the API key came from. */
  apiKeySource: string;
  /** Definition the main thread runs as (`--agent`). */
  mainAgent?: AgentDefinition;
  /** MCP servers and where each stands. */
  mcpServers: () => Array<{ name: string; status: string }>;
  /** Stops MCP servers and the simulator. */
  close(): Promise<void>;
};

const RULE_SOURCES: Record<SettingOrigin, PermissionRule['source']> = {
  default: 'session',
  user: 'userSettings',
  project: 'projectSettings',
  local: 'localSettings',
  env: 'session',
  flag: 'cliArg',
};

async function toRules(
  sourced: readonly Sourced<string>[],
  behavior: PermissionRule['ruleBehavior'],
): Promise<PermissionRule[]> {
  const { permissionRuleValueFromString } = await import('@delegate/tool-filter');
  return sourced.flatMap((rule) =>
    splitToolRules([rule.value]).map((spec) => ({
      source: RULE_SOURCES[rule.origin],
      ruleBehavior: behavior,
      ruleValue: permissionRuleValueFromString(spec),
    })),
  );
}

async function connectApi(options: CliSessionOptions): Promise<{
  apiKey: string;
  baseURL?: string;
  source: string;
  sim?: Sim;
}> {
  if (options.sim !== undefined || options.simPolicy) {
    const { echo, startSim } = await import('@delegate/api-sim');
    // Without a module, answer with the prompt itself (the last text block: the agent list
    // reminder Delegate adds before it is not part of what the person typed).
    const echoPrompt: Policy = (request) => request.lastTextBlock ?? echo(request);
    const policy =
      options.simPolicy ??
      (options.sim === true || options.sim === undefined
        ? echoPrompt
        : await loadPolicyModule(options.sim, options.processCwd));
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

async function restoreMessages(
  transcriptDir: string | false,
  sessionId: string,
): Promise<Message[]> {
  if (transcriptDir === false) {
    throw new UsageError(
      '--resume needs transcripts, and they are off (transcriptDir: false). Remove that setting or pass --transcript-dir.',
    );
  }
  const { join } = await import('node:path');
  const { readTranscript } = await import('@delegate/runtime');
  const path = join(transcriptDir, `${sessionId}.jsonl`);
  let entries;
  try {
    entries = await readTranscript(path);
  } catch (error) {
    if (DelegateError.hasCode(error, 'NOT_FOUND')) {
      throw new UsageError(
        `--resume ${sessionId}: no transcript at ${path}. \`delegate transcripts list\` shows the sessions there.`,
      );
    }
    throw error;
  }
  return entries.map((entry) => {
    const {
      sessionId: _session,
      parentUuid: _parent,
      isSidechain: _side,
      parentAgentId: _agent,
      ...message
    } = entry;
    return message as Message;
  });
}

/**
 * Builds a session from the command line: the API (or an in-process simulator), agent
 * definitions (with `--agents`), the main agent's definition (`--agent`), permission rules,
 * extra directories, MCP servers and a resumed conversation.
 */
export async function createCliSession(options: CliSessionOptions): Promise<CliSession> {
  const { config } = options;
  const flagAgents =
    options.agents === undefined ? undefined : readAgentsFlag(options.agents, options.processCwd);
  const mcpServers = config.mcpConfig.value ? loadMcpConfig(config.mcpConfig.value) : undefined;
  const [{ DelegateSession }, { getAgentDefinitionsWithOverrides }, { getBuiltinTools }] =
    await Promise.all([import('@delegate/runtime'), import('@delegate/agent-defs'), loadTools()]);
  const definitions = await getAgentDefinitionsWithOverrides({
    cwd: config.cwd,
    homeDir: config.homeDir,
    ...(flagAgents ? { flagAgents } : {}),
  });
  options.onDiagnostics?.(definitions.diagnostics);
  const mainAgent =
    options.agent === undefined
      ? undefined
      : findMainAgent(options.agent, definitions.activeAgents);
  const history = options.continueFrom
    ? [...options.continueFrom.messages]
    : options.resume
      ? await restoreMessages(config.transcriptDir.value, options.resume)
      : [];

  const api = await connectApi(options);
  let mcp: McpManager | undefined;
  try {
    if (mcpServers && Object.keys(mcpServers).length > 0) {
      const { createMcpManager } = await loadTools();
      mcp = createMcpManager({ servers: mcpServers });
      // The first request should offer the servers' tools: wait until each has connected or failed.
      const states = await mcp.whenSettled();
      for (const state of states) {
        if (state.type === 'failed')
          options.onWarning?.(
            `MCP server "${state.name}" did not connect: ${state.error ?? 'unknown error'}`,
          );
      }
    }
    let tools: Tool[] = getBuiltinTools();
    if (mainAgent) {
      const { resolveAgentTools } = await import('@delegate/tool-filter');
      tools = resolveAgentTools(mainAgent, tools, { isMainThread: true }).resolvedTools;
    }
    const model =
      config.model.origin === 'default' && mainAgent?.model && mainAgent.model !== 'inherit'
        ? mainAgent.model
        : config.model.value;
    const permissionMode =
      config.permissionMode.origin === 'default' &&
      mainAgent?.permissionMode &&
      mainAgent.permissionMode !== 'bubble'
        ? mainAgent.permissionMode
        : config.permissionMode.value;
    const sessionId = options.continueFrom?.sessionId ?? options.resume ?? createUuid();
    const session = await DelegateSession.create({
      cwd: config.cwd,
      apiKey: api.apiKey,
      ...(api.baseURL ? { baseURL: api.baseURL } : {}),
      model,
      tools,
      agentDefinitions: definitions,
      permissionMode,
      allowRules: await toRules(config.allowRules, 'allow'),
      denyRules: await toRules(config.denyRules, 'deny'),
      transcriptDir: config.transcriptDir.value,
      homeDir: config.homeDir,
      forkEnabled: config.fork.value,
      ...(config.subagentModel.value ? { defaultSubagentModel: config.subagentModel.value } : {}),
      sessionId,
      ...(mainAgent ? { customSystemPrompt: mainAgent.getSystemPrompt({ cwd: config.cwd }) } : {}),
      ...(options.ask ? { ask: options.ask } : {}),
      ...(mcp ? { mcp } : {}),
      ...options.session,
    });
    const askRules = await toRules(config.askRules, 'ask');
    const directories = config.additionalDirectories.map((directory) => directory.value);
    if (askRules.length > 0 || directories.length > 0) {
      session.context.setAppState((state) => ({
        ...state,
        toolPermissionContext: {
          ...state.toolPermissionContext,
          askRules: [...state.toolPermissionContext.askRules, ...askRules],
          additionalWorkingDirectories: [
            ...state.toolPermissionContext.additionalWorkingDirectories,
            ...directories,
          ],
        },
      }));
    }
    session.messages.push(...history);
    const manager = mcp;
    return {
      session,
      sessionId,
      ...(api.sim ? { sim: api.sim } : {}),
      apiKeySource: api.source,
      ...(mainAgent ? { mainAgent } : {}),
      mcpServers: () =>
        (manager?.getClients() ?? []).map((client) => ({ name: client.name, status: client.type })),
      close: async () => {
        await manager?.close();
        await api.sim?.close();
      },
    };
  } catch (error) {
    await mcp?.close();
    await api.sim?.close();
    throw error;
  }
}
