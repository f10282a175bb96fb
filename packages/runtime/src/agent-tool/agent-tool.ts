import { statSync } from 'node:fs';
import {
  type AgentDefinition,
  type AgentDefinitionsResult,
  type AssistantMessage,
  type Message,
  type PermissionMode,
  type Tool,
  type ToolCallExtras,
  type ToolResult,
  type ToolUseContext,
  DelegateError,
  TOOL_NAMES,
  createAgentId,
  createUserMessage,
  getLastAssistantMessage,
} from '@delegate/core';
import { GENERAL_PURPOSE_AGENT_TYPE, ONE_SHOT_BUILTIN_AGENT_TYPES } from '@delegate/agent-defs';
import { buildForkedMessages, buildWorktreeNotice, isInForkChild } from '@delegate/fork-cache';
import { loadAgentMemoryPrompt } from '@delegate/memory';
import { resolveToolPath } from '@delegate/tools';
import {
  createAgentDeniedError,
  filterAgentsByMcpRequirements,
  filterDeniedAgents,
  getDenyRuleForAgent,
  mcpServersWithTools,
  missingMcpServers,
  resolveAgentTools,
} from '@delegate/tool-filter';
import { createAgentRecord } from '../lifecycle/agent-record.js';
import { delay } from '../util/delay.js';
import type { AgentRuntime } from '../session/agent-runtime.js';
import { AgentToolInput } from './agent-tool-input.js';
import { getAgentToolPrompt } from './agent-tool-prompt.js';
import type { AgentToolResult } from './finalize-agent-result.js';
import { resolveAgentModel } from '../session/model-config.js';
import { getRenderedRequestParts } from '../query/rendered-request.js';
import { startAgentRun } from '../lifecycle/agent-lifecycle.js';
import {
  enhanceSystemPromptWithEnvDetails,
  getEnvironmentDetails,
} from '../session/system-prompt.js';
import {
  type AgentWorktree,
  createAgentWorktree,
  removeAgentWorktree,
} from '../worktree/worktree.js';

/** The query source of fork children; a fork seeing it refuses to fork again. */
export const FORK_QUERY_SOURCE = 'agent:builtin:fork';

/** What the Agent tool returns. */
export type AgentToolOutput =
  | ({
      status: 'completed';
      partial?: string;
      worktree?: { path: string; branch: string };
    } & AgentToolResult)
  | {
      status: 'async_launched';
      agentId: string;
      taskId: string;
      agentType: string;
      description: string;
    };

/** The agents the caller may pick: allowed types, deny rules, and MCP requirements applied. */
export function visibleAgents(
  context: ToolUseContext,
  definitions: AgentDefinitionsResult,
): AgentDefinition[] {
  const state = context.getAppState();
  const allowed = definitions.allowedAgentTypes;
  const candidates = allowed
    ? definitions.activeAgents.filter((agent) => allowed.includes(agent.agentType))
    : definitions.activeAgents;
  const withMcp = filterAgentsByMcpRequirements(candidates, mcpServersWithTools(state.mcp.tools));
  return filterDeniedAgents(withMcp, state.toolPermissionContext, TOOL_NAMES.agent);
}

function selectAgent(
  context: ToolUseContext,
  definitions: AgentDefinitionsResult,
  agentType: string,
): AgentDefinition {
  const state = context.getAppState();
  const allowed = definitions.allowedAgentTypes;
  if (allowed && !allowed.includes(agentType)) {
    throw new DelegateError(
      'AGENT_NOT_ALLOWED',
      `This agent may only start these agent types: ${allowed.join(', ')}. "${agentType}" is not one of them.`,
      { details: { agentType, allowedAgentTypes: allowed } },
    );
  }
  const candidates = allowed
    ? definitions.activeAgents.filter((agent) => allowed.includes(agent.agentType))
    : definitions.activeAgents;
  const permitted = filterDeniedAgents(candidates, state.toolPermissionContext, TOOL_NAMES.agent);
  const found = permitted.find((agent) => agent.agentType === agentType);
  if (found) return found;
  if (candidates.some((agent) => agent.agentType === agentType)) {
    throw createAgentDeniedError(
      agentType,
      getDenyRuleForAgent(state.toolPermissionContext, TOOL_NAMES.agent, agentType),
    );
  }
  const names = permitted.map((agent) => agent.agentType);
  throw new DelegateError(
    'AGENT_NOT_FOUND',
    `Agent type "${agentType}" not found. Available agents: ${names.length > 0 ? names.join(', ') : 'none'}.`,
    { details: { agentType, available: names } },
  );
}

async function waitForRequiredMcpServers(
  runtime: AgentRuntime,
  agent: AgentDefinition,
  context: ToolUseContext,
): Promise<void> {
  const required = agent.requiredMcpServers;
  if (!required?.length) return;
  const matches = (name: string): boolean =>
    required.some((pattern) => name.toLowerCase().includes(pattern.toLowerCase()));
  runtime.refreshMcp?.();
  let state = context.getAppState();
  if (state.mcp.clients.some((client) => client.type === 'pending' && matches(client.name))) {
    const deadline = Date.now() + runtime.options.mcpWaitMs;
    while (Date.now() < deadline && !context.abortController.signal.aborted) {
      await delay(runtime.options.mcpPollMs, { signal: context.abortController.signal });
      runtime.refreshMcp?.();
      state = context.getAppState();
      if (state.mcp.clients.some((client) => client.type === 'failed' && matches(client.name)))
        break;
      if (!state.mcp.clients.some((client) => client.type === 'pending' && matches(client.name)))
        break;
    }
  }
  const servers = mcpServersWithTools(state.mcp.tools);
  const missing = missingMcpServers(agent, servers);
  if (missing.length === 0) return;
  const failures = state.mcp.clients
    .filter((client) => client.type !== 'connected' && matches(client.name))
    .map((client) => `${client.name} (${client.type}${client.error ? `: ${client.error}` : ''})`);
  throw new DelegateError(
    'MCP_SERVERS_MISSING',
    `Agent "${agent.agentType}" requires MCP servers matching: ${missing.join(', ')}. MCP servers with tools: ${servers.length > 0 ? servers.join(', ') : 'none'}.` +
      (failures.length > 0 ? ` Not available: ${failures.join(', ')}.` : '') +
      ' Configure and connect the required servers, then try again.',
    { details: { missing, serversWithTools: servers } },
  );
}

/**
 * The working directory of a new agent: the caller's, or `requested` when it is an
 * existing directory inside the caller's allowed roots (a sub-agent's file tools are
 * confined to its cwd, so an outside cwd would widen what it may touch).
 */
async function resolveCwd(context: ToolUseContext, requested: string | undefined): Promise<string> {
  if (!requested) return context.cwd;
  const resolved = await resolveToolPath(requested, context);
  let isDirectory: boolean;
  try {
    isDirectory = statSync(resolved.realPath).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `The Agent tool's cwd "${requested}" is not an existing directory (resolved to ${resolved.absolutePath}). Pass an existing directory, or leave cwd out to use the caller's.`,
    );
  }
  return resolved.absolutePath;
}

/** Formats the tool result text the calling model sees. */
export function formatAgentToolResult(output: AgentToolOutput): string {
  if (output.status === 'async_launched') {
    return [
      `Started ${output.agentType} agent "${output.description}" in the background.`,
      `agentId: ${output.agentId}`,
      `taskId: ${output.taskId}`,
      'You will receive a <task-notification> when it finishes; do not poll or sleep waiting for it. Use TaskOutput only if you have nothing else to do.',
    ].join('\n');
  }
  const report =
    output.content.map((block) => block.text).join('\n') || '(the agent returned no text)';
  const body = output.partial
    ? `The agent stopped early (${output.partial}). Its last report:\n${report}`
    : report;
  const worktree = output.worktree
    ? `\nworktreePath: ${output.worktree.path}\nworktreeBranch: ${output.worktree.branch}`
    : '';
  // One-shot built-ins are never continued, so their id and usage trailer would only cost tokens.
  if (ONE_SHOT_BUILTIN_AGENT_TYPES.has(output.agentType) && !worktree) return body;
  return (
    `${body}${worktree}\n\nagentId: ${output.agentId} (use SendMessage with this id to continue the agent)\n` +
    `<usage>total_tokens: ${output.totalTokens}\ntool_uses: ${output.totalToolUseCount}\nduration_ms: ${output.totalDurationMs}</usage>`
  );
}

/** Creates the `Agent` tool (legacy alias `Task`) bound to a runtime. */
export function createAgentTool(runtime: AgentRuntime): Tool<AgentToolInput, AgentToolOutput> {
  return {
    name: TOOL_NAMES.agent,
    aliases: [TOOL_NAMES.agentLegacy],
    inputSchema: AgentToolInput,
    description(context) {
      const definitions = context?.options.agentDefinitions ?? runtime.getAgentDefinitions();
      const agents = context ? visibleAgents(context, definitions) : definitions.activeAgents;
      return getAgentToolPrompt({
        agents,
        forkEnabled: runtime.options.forkEnabled,
        listInMessages: runtime.options.agentListInMessages,
      });
    },
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    requiresUserInteraction: () => false,
    async call(input, context, extras): Promise<ToolResult<AgentToolOutput>> {
      const output = await spawnAgent(runtime, input, context, extras);
      return { content: formatAgentToolResult(output), data: output };
    },
  };
}

async function spawnAgent(
  runtime: AgentRuntime,
  input: AgentToolInput,
  context: ToolUseContext,
  extras: ToolCallExtras,
): Promise<AgentToolOutput> {
  const definitions = context.options.agentDefinitions ?? runtime.getAgentDefinitions();
  const isFork =
    runtime.options.forkEnabled &&
    (input.subagent_type === undefined || input.subagent_type === 'fork');
  const depth = (context.queryTracking?.depth ?? -1) + 1;
  if (depth >= runtime.options.maxDepth) {
    throw new DelegateError(
      'LIMIT_EXCEEDED',
      `Sub-agents may nest ${runtime.options.maxDepth} levels deep; this one would be level ${depth + 1}. Do the work directly.`,
    );
  }

  let agent: AgentDefinition;
  if (isFork) {
    // The fork keeps the Agent tool (its tool list must match the parent's for the cache),
    // so recursion is refused here: by query source first, by scanning messages as a fallback.
    if (context.options.querySource === FORK_QUERY_SOURCE || isInForkChild(context.messages)) {
      throw new DelegateError(
        'FORK_IN_FORK',
        'A forked worker cannot fork again. Complete your task directly with your tools.',
      );
    }
    agent = runtime.forkAgent;
  } else {
    agent = selectAgent(context, definitions, input.subagent_type ?? GENERAL_PURPOSE_AGENT_TYPE);
  }
  await waitForRequiredMcpServers(runtime, agent, context);

  const isAsync =
    (input.run_in_background === true ||
      agent.background === true ||
      runtime.options.coordinatorMode ||
      (isFork && runtime.options.forkForceAsync)) &&
    !runtime.options.backgroundTasksDisabled;
  if (isAsync) {
    // Several Agent calls of one message run in parallel: count the ones still being set
    // up too, so the limit holds.
    if (
      runtime.tasks.runningBackground().length + runtime.pendingBackgroundSpawns >=
      runtime.options.maxBackgroundAgents
    ) {
      throw new DelegateError(
        'LIMIT_EXCEEDED',
        `${runtime.options.maxBackgroundAgents} background agents are already running, the most allowed at once. Wait for a <task-notification>, or run this agent in the foreground.`,
      );
    }
    runtime.pendingBackgroundSpawns++;
  }
  let reserved = isAsync;
  const release = (): void => {
    if (reserved) runtime.pendingBackgroundSpawns--;
    reserved = false;
  };

  let worktree: AgentWorktree | undefined;
  try {
    const model = resolveAgentModel({
      parentModel: context.options.model,
      callModel: input.model,
      definitionModel: agent.model,
      defaultSubagentModel: runtime.options.defaultSubagentModel,
      isFork,
    });
    const permissionMode = resolveAgentPermissionMode({
      parentMode: context.getAppState().toolPermissionContext.mode,
      agent,
      isFork,
    });
    const agentId = createAgentId();
    const parentParts = getRenderedRequestParts(context);
    let parentAssistant: AssistantMessage | undefined;
    if (isFork) {
      parentAssistant = extras.assistantMessage ?? getLastAssistantMessage(context.messages);
      if (!parentAssistant)
        throw new DelegateError(
          'INVALID_ARGUMENT',
          `A fork needs the assistant message that called it, and ${context.agentType ? `agent ${context.agentType}` : 'the main agent'} has none. Call Agent from a model turn, or pass subagent_type to start a fresh agent.`,
        );
    }

    // Tools: a fork gets the parent's exact pool and definitions (cache-identical); a
    // normal agent's pool is assembled afresh, independent of the parent's restrictions.
    const { tools, allowedAgentTypes } = isFork
      ? { tools: context.options.tools, allowedAgentTypes: undefined }
      : assembleWorkerTools(runtime, context, agent, isAsync);

    // The worktree comes last but one: anything that fails after it must remove it.
    const requestedCwd = await resolveCwd(context, input.cwd);
    if (input.isolation === 'worktree' || agent.isolation === 'worktree') {
      worktree = await createAgentWorktree({
        cwd: requestedCwd,
        slug: `agent-${agentId.slice(1, 13)}`,
        ...(runtime.options.worktreeRoot ? { root: runtime.options.worktreeRoot } : {}),
      });
    }
    const cwd = worktree ? worktree.cwd : requestedCwd;

    let systemPrompt: string[];
    let userContext: Record<string, string> | undefined;
    let systemContext: Record<string, string> | undefined;
    if (isFork) {
      // Without the parent's rendered request there is no prefix to share, and rebuilding
      // it could differ byte for byte: refuse rather than fork with a different prompt.
      if (!parentParts) {
        throw new DelegateError(
          'CACHE_UNSAFE',
          'A fork needs the request its parent last sent, and this agent has not sent one yet. Name a subagent_type instead.',
        );
      }
      systemPrompt = parentParts.systemPrompt;
      if (parentParts?.userContext) userContext = { ...parentParts.userContext };
      if (parentParts?.systemContext) systemContext = { ...parentParts.systemContext };
    } else {
      let prompt = agent.getSystemPrompt({ cwd });
      if (agent.memory) {
        const memoryPrompt = loadAgentMemoryPrompt(agent.agentType, agent.memory, {
          cwd,
          ...(runtime.options.homeDir ? { homeDir: runtime.options.homeDir } : {}),
        });
        prompt = `${prompt}\n\n${memoryPrompt}`;
      }
      systemPrompt = enhanceSystemPromptWithEnvDetails(
        [prompt],
        getEnvironmentDetails({ cwd, model }),
      );
      if (parentParts?.userContext) {
        userContext = { ...parentParts.userContext };
        // Read-only agents skip project instructions: the caller interprets their findings.
        if (agent.omitClaudeMd) delete userContext['projectInstructions'];
        if (Object.keys(userContext).length === 0) userContext = undefined;
      }
    }

    let newMessages: Message[];
    if (parentAssistant) {
      const assistantUuid = parentAssistant.uuid;
      const history = context.messages.filter((message) => message.uuid !== assistantUuid);
      // The worktree notice joins the directive (the one block that differs per sibling),
      // so the placeholders before it stay a shared, cacheable prefix.
      const directive = worktree
        ? `${input.prompt}\n\n${buildWorktreeNotice(context.cwd, worktree.cwd)}`
        : input.prompt;
      newMessages = [...history, ...buildForkedMessages(directive, parentAssistant)];
    } else {
      const text = agent.initialPrompt ? `${agent.initialPrompt}\n\n${input.prompt}` : input.prompt;
      newMessages = [createUserMessage({ content: text, agentId })];
    }

    const querySource = isFork
      ? FORK_QUERY_SOURCE
      : `agent:${agent.source === 'built-in' ? 'builtin' : 'custom'}:${agent.agentType}`;
    const record = createAgentRecord({
      runtime,
      parent: context,
      spec: {
        agentId,
        agentType: agent.agentType,
        description: input.description,
        isFork,
        isBuiltIn: agent.source === 'built-in',
        model,
        systemPrompt,
        cwd,
        querySource,
        permissionMode,
        ...(input.name ? { name: input.name } : {}),
        ...(userContext ? { userContext } : {}),
        ...(systemContext ? { systemContext } : {}),
        ...(isFork && parentParts ? { toolDefinitions: [...parentParts.toolDefinitions] } : {}),
        ...(typeof agent.effort === 'string' ? { effort: agent.effort } : {}),
        // A numeric effort is a thinking budget.
        ...(typeof agent.effort === 'number' ? { thinkingBudget: agent.effort } : {}),
        ...(agent.maxTurns !== undefined ? { maxTurns: agent.maxTurns } : {}),
        ...(context.agentId ? { parentAgentId: context.agentId } : {}),
        ...(worktree ? { isolation: 'worktree' as const } : {}),
      },
      tools,
      definitions: { ...definitions, ...(allowedAgentTypes ? { allowedAgentTypes } : {}) },
      isBackground: isAsync,
      ...(extras.canUseTool ? { parentCanUseTool: extras.canUseTool } : {}),
      ...(worktree ? { worktree } : {}),
    });

    // Sibling forks of one assistant message share everything but the directive. The
    // first sibling goes ahead; the others wait until its response has begun, because a
    // cache entry becomes readable only then, so they read the prefix it wrote.
    let onFirstResponse: (() => void) | undefined;
    if (parentAssistant) {
      const key = parentAssistant.uuid;
      const gate = runtime.forkWarmups.get(key);
      if (gate) {
        await delay(15_000, { signal: context.abortController.signal, until: gate });
      } else {
        let open!: () => void;
        runtime.forkWarmups.set(key, new Promise<void>((resolveGate) => (open = resolveGate)));
        onFirstResponse = () => open();
        setTimeout(() => runtime.forkWarmups.delete(key), 60_000).unref();
      }
    }

    // startAgentRun registers the task before its first await, so the reservation can go.
    const run = startAgentRun(runtime, record, {
      newMessages,
      ...(isFork ? { mode: 'fork' as const } : {}),
      ...(onFirstResponse ? { onFirstResponse } : {}),
    });
    worktree = undefined;
    release();
    return await run;
  } catch (error) {
    if (worktree) await removeAgentWorktree(worktree).catch(() => undefined);
    throw error;
  } finally {
    release();
  }
}

/**
 * A sub-agent's tools, assembled independently of its caller's: the base tools, the MCP
 * tools and the Agent tool (so `Agent(type, …)` specs resolve; the gates decide whether it
 * stays), resolved against the definition. TaskOutput, TaskStop and SendMessage are the
 * main thread's and never offered.
 */
export function assembleWorkerTools(
  runtime: AgentRuntime,
  context: ToolUseContext,
  agent: AgentDefinition,
  isAsync: boolean,
): { tools: Tool[]; allowedAgentTypes: string[] | undefined } {
  const agentTool = runtime.agentTools().filter((tool) => tool.name === TOOL_NAMES.agent);
  const pool = [...runtime.baseTools(), ...context.getAppState().mcp.tools, ...agentTool];
  const resolved = resolveAgentTools(agent, pool, { isAsync, isMainThread: false });
  return { tools: resolved.resolvedTools, allowedAgentTypes: resolved.allowedAgentTypes };
}

/**
 * The permission mode a sub-agent runs with: a parent that bypasses permissions or
 * accepts edits passes that on (the person chose it for the session); a fork bubbles its
 * questions up (to the parent's check, judged by the parent's mode); a parent in plan mode
 * keeps its sub-agents in plan mode; a parent in `dontAsk` keeps any sub-agent that would
 * ask in `dontAsk`; otherwise the definition's mode, else the parent's.
 */
export function resolveAgentPermissionMode(options: {
  parentMode: PermissionMode;
  agent: Pick<AgentDefinition, 'permissionMode'>;
  isFork: boolean;
}): PermissionMode {
  const { parentMode, agent, isFork } = options;
  if (parentMode === 'bypassPermissions' || parentMode === 'acceptEdits') return parentMode;
  if (isFork) return 'bubble';
  if (parentMode === 'plan') return 'plan';
  const own = agent.permissionMode ?? parentMode;
  // The person chose not to be asked: a sub-agent may approve more on its own, but it may
  // not start asking (`default`) or forward questions up to them (`bubble`).
  if (parentMode === 'dontAsk' && (own === 'default' || own === 'bubble')) return 'dontAsk';
  return own;
}
