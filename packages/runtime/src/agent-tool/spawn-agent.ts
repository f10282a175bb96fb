import {
  type AgentDefinition,
  type AssistantMessage,
  type Message,
  type PermissionMode,
  type Tool,
  type ToolCallExtras,
  type ToolUseContext,
  DelegateError,
  createAgentId,
  getLastAssistantMessage,
} from '@delegate/core';
import type { ForkLayout } from '@delegate/fork-cache';
import { type AgentSpec } from '../lifecycle/agent-spec.js';
import { createAgentRecord } from '../lifecycle/agent-record.js';
import { startAgentRun } from '../lifecycle/start-agent-run.js';
import {
  type RenderedRequestParts,
  getLastRequest,
  getRenderedRequestParts,
} from '../query/rendered-request.js';
import type { ToolCallHooks } from '../query/run-tools.js';
import type { AgentRuntime } from '../session/agent-runtime.js';
import { resolveAgentModel } from '../session/model-config.js';
import {
  type AgentWorktree,
  createAgentWorktree,
  removeAgentWorktree,
} from '../worktree/worktree.js';
import { agentWorktreeSlug } from '../worktree/worktree-names.js';
import { type AgentMemorySetup, allowMemoryWrites, setUpAgentMemory } from './agent-memory.js';
import { forkLayoutFor, forkMessages, freshAgentMessages } from './agent-messages.js';
import { type AgentPrompts, forkPrompts, freshAgentPrompts } from './agent-prompts.js';
import type { AgentToolInput } from './agent-tool-input.js';
import type { AgentToolOutput } from './agent-tool-output.js';
import { assembleWorkerTools } from './assemble-worker-tools.js';
import { reserveBackgroundSlot } from './background-slots.js';
import {
  type DefinitionExtras,
  type DefinitionWarning,
  readDefinitionExtras,
} from './definition-extras.js';
import { namesNotOfOwnServers } from './agent-mcp-servers.js';
import { awaitForkWarmup } from './fork-warmup.js';
import { siblingsShouldWait } from './fork-siblings.js';
import { resolveAgentCwd } from './resolve-agent-cwd.js';
import { FORK_QUERY_SOURCE, type SpawnTarget, resolveSpawnTarget } from './resolve-agent.js';
import { resolveAgentPermissionMode } from './resolve-permission-mode.js';
import { waitForRequiredMcpServers } from './wait-for-mcp-servers.js';

/** Everything decided about a spawn before anything is created. */
type SpawnPlan = {
  target: SpawnTarget;
  agentId: string;
  isBackground: boolean;
  model: string;
  permissionMode: PermissionMode;
  parentParts: RenderedRequestParts | undefined;
  parentAssistant: AssistantMessage | undefined;
  tools: Tool[];
  allowedAgentTypes: string[] | undefined;
  requestedCwd: string;
  extras: DefinitionExtras;
  /** A fork's layout (the session's, unless its call cannot be told apart). */
  forkLayout: ForkLayout | undefined;
};

/**
 * True when the spawn runs in the background: asked for by the call or the definition, or
 * forced by coordinator mode or `forkForceAsync` (while forking is on); never when
 * background tasks are disabled.
 */
export function decideBackground(
  runtime: AgentRuntime,
  input: AgentToolInput,
  target: SpawnTarget,
): boolean {
  const { options } = runtime;
  if (options.backgroundTasksDisabled) return false;
  return (
    input.run_in_background === true ||
    target.agent.background === true ||
    options.coordinatorMode ||
    (options.forkEnabled && options.forkForceAsync)
  );
}

function callingAssistant(context: ToolUseContext, extras: ToolCallExtras): AssistantMessage {
  const message = extras.assistantMessage ?? getLastAssistantMessage(context.messages);
  if (message) return message;
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `A fork needs the assistant message that called it, and ${context.agentType ? `agent ${context.agentType}` : 'the main agent'} has none. Call Agent from a model turn, or pass subagent_type to start a fresh agent.`,
  );
}

async function planSpawn(options: {
  runtime: AgentRuntime;
  input: AgentToolInput;
  context: ToolUseContext;
  extras: ToolCallExtras;
  target: SpawnTarget;
  isBackground: boolean;
}): Promise<SpawnPlan> {
  const { runtime, input, context, target } = options;
  const { agent, isFork } = target;
  const agentId = createAgentId();
  const parentParts = getRenderedRequestParts(context);
  if (isFork) forkPrompts(parentParts);
  const parentAssistant = isFork ? callingAssistant(context, options.extras) : undefined;
  // A fork gets the parent's exact pool (cache-identical); a normal agent's pool is
  // assembled afresh, independent of the parent's restrictions.
  const { tools, allowedAgentTypes, invalidTools } = isFork
    ? { tools: context.options.tools, allowedAgentTypes: undefined, invalidTools: [] }
    : assembleWorkerTools(runtime, context, agent, options.isBackground);
  const extras = readDefinitionExtras({
    runtime,
    agent,
    agentId,
    mcpClients: context.getAppState().mcp.clients,
  });
  // Tools of its own servers are not there yet: they join when its run starts them.
  const unavailable = await namesNotOfOwnServers(
    invalidTools,
    Object.keys(extras.mcpServers ?? {}),
  );
  return {
    target,
    agentId,
    isBackground: options.isBackground,
    model: resolveAgentModel({
      parentModel: context.options.model,
      callModel: input.model,
      definitionModel: agent.model,
      defaultSubagentModel: runtime.options.defaultSubagentModel,
      isFork,
    }),
    permissionMode: resolveAgentPermissionMode({
      parentMode: context.getAppState().toolPermissionContext.mode,
      agent,
      isFork,
    }),
    parentParts,
    parentAssistant,
    forkLayout: parentAssistant
      ? forkLayoutFor(runtime.options.forkLayout, parentAssistant, options.extras.toolUseId)
      : undefined,
    tools,
    allowedAgentTypes,
    requestedCwd: await resolveAgentCwd(context, input.cwd),
    extras:
      unavailable.length > 0
        ? {
            ...extras,
            warnings: [...extras.warnings, unavailableToolsWarning(agent, unavailable)],
          }
        : extras,
  };
}

/** What an agent whose `tools` name tools it cannot have is told, at spawn time. */
function unavailableToolsWarning(
  agent: AgentDefinition,
  invalidTools: readonly string[],
): DefinitionWarning {
  const where = `Agent "${agent.agentType}"${agent.filePath ? ` (${agent.filePath})` : ''}`;
  return {
    code: 'TOOLS_UNAVAILABLE',
    message: `${where} lists tools that match none it can have here (${invalidTools.join(', ')}); it runs without them. Check the names against the tools of the session (an MCP tool needs its server in the session's MCP servers; background agents get no interactive tools, sub-agents no Agent tool).`,
  };
}

async function createWorktreeIfAsked(
  runtime: AgentRuntime,
  plan: SpawnPlan,
  input: AgentToolInput,
): Promise<AgentWorktree | undefined> {
  if (input.isolation !== 'worktree' && plan.target.agent.isolation !== 'worktree')
    return undefined;
  return createAgentWorktree({
    cwd: plan.requestedCwd,
    slug: agentWorktreeSlug({ agentType: plan.target.agent.agentType, agentId: plan.agentId }),
    ...(runtime.options.worktreeRoot ? { root: runtime.options.worktreeRoot } : {}),
  });
}

function buildPrompts(
  plan: SpawnPlan,
  cwd: string,
  memory: AgentMemorySetup | undefined,
): AgentPrompts {
  if (plan.target.isFork) return forkPrompts(plan.parentParts);
  return freshAgentPrompts({
    agent: plan.target.agent,
    cwd,
    model: plan.model,
    memoryPrompt: memory?.prompt,
    parentParts: plan.parentParts,
    additionalWorkingDirectories: memory?.directory ? [memory.directory] : [],
  });
}

function buildMessages(options: {
  plan: SpawnPlan;
  input: AgentToolInput;
  context: ToolUseContext;
  worktree: AgentWorktree | undefined;
  toolUseId: string | undefined;
}): Message[] {
  const { plan, input, context, worktree } = options;
  if (!plan.parentAssistant) {
    return freshAgentMessages({
      agent: plan.target.agent,
      prompt: input.prompt,
      agentId: plan.agentId,
    });
  }
  return forkMessages({
    history: context.messages,
    parentAssistant: plan.parentAssistant,
    prompt: input.prompt,
    ...(plan.forkLayout ? { layout: plan.forkLayout } : {}),
    ...(options.toolUseId ? { toolUseId: options.toolUseId } : {}),
    ...(worktree ? { worktree: { parentCwd: context.cwd, worktreeCwd: worktree.cwd } } : {}),
  });
}

function buildSpec(options: {
  plan: SpawnPlan;
  input: AgentToolInput;
  context: ToolUseContext;
  prompts: AgentPrompts;
  cwd: string;
  worktree: AgentWorktree | undefined;
  toolUseId: string | undefined;
}): AgentSpec {
  const { plan, input, context, prompts } = options;
  const { agent, isFork } = plan.target;
  return {
    agentId: plan.agentId,
    agentType: agent.agentType,
    description: input.description,
    isFork,
    isBuiltIn: agent.source === 'built-in',
    model: plan.model,
    systemPrompt: prompts.systemPrompt,
    cwd: options.cwd,
    querySource: isFork
      ? FORK_QUERY_SOURCE
      : `agent:${agent.source === 'built-in' ? 'builtin' : 'custom'}:${agent.agentType}`,
    permissionMode: plan.permissionMode,
    ...(input.name ? { name: input.name } : {}),
    ...(prompts.userContext ? { userContext: prompts.userContext } : {}),
    ...(prompts.systemContext ? { systemContext: prompts.systemContext } : {}),
    ...(isFork && plan.parentParts
      ? { toolDefinitions: [...plan.parentParts.toolDefinitions] }
      : {}),
    ...(typeof agent.effort === 'string' ? { effort: agent.effort } : {}),
    // A numeric effort is a thinking budget.
    ...(typeof agent.effort === 'number' ? { thinkingBudget: agent.effort } : {}),
    ...(agent.maxTurns !== undefined ? { maxTurns: agent.maxTurns } : {}),
    ...ownBudget(agent, input),
    ...(context.agentId ? { parentAgentId: context.agentId } : {}),
    ...(options.toolUseId ? { parentToolUseId: options.toolUseId } : {}),
    ...(options.worktree ? { isolation: 'worktree' as const } : {}),
  };
}

function least(...values: Array<number | undefined>): number | undefined {
  const given = values.filter((value): value is number => value !== undefined);
  return given.length > 0 ? Math.min(...given) : undefined;
}

/**
 * The agent's own budget: the least of its definition's and its call's. What its parent
 * has left bounds it further at every request (see `UsageLedger`).
 */
export function ownBudget(
  agent: { maxTokens?: number | undefined; maxCostUsd?: number | undefined },
  input: AgentToolInput,
): { maxTokens?: number; maxCostUsd?: number } {
  const maxTokens = least(agent.maxTokens, input.max_tokens);
  const maxCostUsd = least(agent.maxCostUsd, input.max_cost_usd);
  return {
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(maxCostUsd !== undefined ? { maxCostUsd } : {}),
  };
}

function emitWarnings(
  runtime: AgentRuntime,
  agentId: string,
  warnings: readonly DefinitionWarning[],
): void {
  for (const warning of warnings) {
    runtime.events.emit({
      type: 'agent.warning',
      agentId,
      timestamp: new Date().toISOString(),
      code: warning.code,
      message: warning.message,
    });
  }
}

/**
 * Lets sibling forks wait for the first one's response only when what they share is worth
 * a time to first token (`siblingsShouldWait`); returns the first sibling's opener, if any.
 */
async function forkGate(
  runtime: AgentRuntime,
  plan: SpawnPlan,
  newMessages: readonly Message[],
  context: ToolUseContext,
): Promise<(() => void) | undefined> {
  const { parentAssistant, forkLayout } = plan;
  if (!parentAssistant || !forkLayout) return undefined;
  if (!siblingsShouldWait({ layout: forkLayout, parentAssistant, childMessages: newMessages }))
    return undefined;
  return awaitForkWarmup(runtime, {
    parentMessageUuid: parentAssistant.uuid,
    signal: context.abortController.signal,
  });
}

/** With cache debugging on, the parent's last request: what a fork's first request should read. */
function cacheBaseline(
  runtime: AgentRuntime,
  plan: SpawnPlan,
  context: ToolUseContext,
): { cacheBaseline?: NonNullable<ReturnType<typeof getLastRequest>> } {
  if (!runtime.options.debugCacheDiagnosis || !plan.target.isFork) return {};
  const request = getLastRequest(context);
  return request ? { cacheBaseline: request } : {};
}

/** A fork runs its parent's hooks (the main agent's); any other agent its definition's. */
function toolHooksOf(runtime: AgentRuntime, plan: SpawnPlan): { toolHooks?: ToolCallHooks } {
  const hooks = plan.target.isFork ? runtime.mainToolHooks : plan.extras.toolHooks;
  return hooks ? { toolHooks: hooks } : {};
}

/** Creates the worktree, memory, prompts, messages and record of a planned spawn, and starts it. */
async function launch(options: {
  runtime: AgentRuntime;
  plan: SpawnPlan;
  input: AgentToolInput;
  context: ToolUseContext;
  extras: ToolCallExtras;
  onWorktree: (worktree: AgentWorktree) => void;
}): Promise<{ run: Promise<AgentToolOutput> }> {
  const { runtime, plan, input, context } = options;
  const worktree = await createWorktreeIfAsked(runtime, plan, input);
  if (worktree) options.onWorktree(worktree);
  const cwd = worktree ? worktree.cwd : plan.requestedCwd;
  const memory = plan.target.isFork
    ? undefined
    : await setUpAgentMemory(runtime, plan.target.agent);
  const prompts = buildPrompts(plan, cwd, memory);
  const newMessages = buildMessages({
    plan,
    input,
    context,
    worktree,
    toolUseId: options.extras.toolUseId,
  });
  const memoryDirectory = memory?.directory;
  const record = createAgentRecord({
    runtime,
    parent: context,
    spec: buildSpec({
      plan,
      input,
      context,
      prompts,
      cwd,
      worktree,
      toolUseId: options.extras.toolUseId,
    }),
    tools: plan.tools,
    definitions: {
      ...plan.target.definitions,
      ...(plan.allowedAgentTypes ? { allowedAgentTypes: plan.allowedAgentTypes } : {}),
    },
    isBackground: plan.isBackground,
    ...(options.extras.canUseTool ? { parentCanUseTool: options.extras.canUseTool } : {}),
    ...(worktree ? { worktree } : {}),
    ...(memoryDirectory
      ? { memoryDirectory, wrapCanUseTool: (check) => allowMemoryWrites(check, memoryDirectory) }
      : {}),
    ...toolHooksOf(runtime, plan),
    ...(plan.extras.mcpServers
      ? {
          mcpServers: plan.extras.mcpServers,
          ...(plan.target.agent.disallowedTools
            ? { mcpDisallowedTools: plan.target.agent.disallowedTools }
            : {}),
        }
      : {}),
    ...(plan.target.agent.color ? { color: plan.target.agent.color } : {}),
  });
  const onFirstResponse = await forkGate(runtime, plan, newMessages, context);
  // startAgentRun registers the task before its first await: the caller may release the slot.
  const run = startAgentRun(runtime, record, {
    newMessages,
    ...(plan.target.isFork ? { mode: 'fork' as const } : {}),
    ...(onFirstResponse ? { onFirstResponse } : {}),
    ...(plan.forkLayout ? { forkLayout: plan.forkLayout } : {}),
    ...cacheBaseline(runtime, plan, context),
    toolUseId: options.extras.toolUseId,
    ...(options.extras.onProgress ? { onForegroundProgress: options.extras.onProgress } : {}),
  });
  const warnings = memory?.warning
    ? [...plan.extras.warnings, { code: 'MEMORY_UNAVAILABLE', message: memory.warning }]
    : plan.extras.warnings;
  emitWarnings(runtime, record.agentId, warnings);
  // Wrapped: returning the promise itself would make the caller wait for the whole run.
  return { run };
}

/**
 * The Agent tool's work: resolve what to start, wait for its MCP servers, reserve a
 * background place, plan (model, mode, tools, cwd, hooks), then create and start it. A
 * worktree made for a spawn that fails before it starts is removed again; once the run
 * has started, the run owns it.
 */
export async function spawnAgent(
  runtime: AgentRuntime,
  input: AgentToolInput,
  context: ToolUseContext,
  extras: ToolCallExtras,
): Promise<AgentToolOutput> {
  const target = resolveSpawnTarget(runtime, input, context);
  const name = input.name
    ? runtime.agents.claimName(input.name, {
        isTaskId: (id) => runtime.tasks.get(id) !== undefined,
      })
    : undefined;
  let worktree: AgentWorktree | undefined;
  let started: { run: Promise<AgentToolOutput> };
  let slot: { release: () => void } | undefined;
  try {
    await waitForRequiredMcpServers(runtime, target.agent, context);
    const isBackground = decideBackground(runtime, input, target);
    slot = reserveBackgroundSlot(runtime, isBackground);
    const plan = await planSpawn({ runtime, input, context, extras, target, isBackground });
    started = await launch({
      runtime,
      plan,
      input,
      context,
      extras,
      onWorktree: (made) => (worktree = made),
    });
  } catch (error) {
    name?.release();
    if (worktree) await removeAgentWorktree(worktree).catch(() => undefined);
    throw error;
  } finally {
    slot?.release();
  }
  return started.run;
}
