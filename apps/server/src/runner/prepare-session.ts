import { join } from 'node:path';
import {
  type AgentDefinition,
  type PermissionRule,
  type Tool,
  DelegateError,
} from '@delegate/core';
import {
  type AgentDefinitionsLoadResult,
  type IgnoredAgentField,
  clearAgentDefinitionsCache,
  getAgentDefinitionsWithOverrides,
  restrictProjectAgents,
} from '@delegate/agent-defs';
import { RUNNABLE_HOOKS_HINT, splitToolHooks } from '@delegate/runtime';
import { permissionRuleValueFromString } from '@delegate/tool-filter';
import type { RunOptions } from '../http/schemas.js';
import { checkRunWorkspace } from '../workspace/resolve-workspace.js';
import type { RunRecord } from '../store/run-store.js';
import type { SessionRunnerOptions } from './session-runner.js';

/** What the server did not apply of a workspace's agent files, and why. */
export type WorkspaceAgents = AgentDefinitionsLoadResult & {
  /** Fields of the workspace's own agent files left out (the server does not trust them). */
  ignored: IgnoredAgentField[];
};

/** The hint that ends every note about an agent file field the server left out. */
const TRUST_HINT =
  'start the server with --trust-workspace-agents (DELEGATE_TRUST_WORKSPACE_AGENTS=1) to apply it';

/**
 * Loads the agent definitions of a workspace afresh (files may have changed). Unless
 * `trustAgentFiles`, the workspace's own agent files (`.claude/agents`, `.delegate/agents`:
 * what any clone or branch holds) keep what only restricts and lose what would loosen
 * permissions or run programs on the server, as in the CLI for an untrusted project: each
 * field left out is in `ignored` and, as a warning, in `diagnostics`.
 */
export async function loadWorkspaceAgents(options: {
  workspace: string;
  homeDir?: string;
  /** Apply the workspace's agent files as written (default false). */
  trustAgentFiles?: boolean;
}): Promise<WorkspaceAgents> {
  clearAgentDefinitionsCache(options.workspace);
  const loaded = await getAgentDefinitionsWithOverrides({
    cwd: options.workspace,
    ...(options.homeDir ? { homeDir: options.homeDir } : {}),
  });
  if (options.trustAgentFiles === true) return { ...loaded, ignored: [] };
  const { definitions, ignored } = restrictProjectAgents(loaded);
  return {
    ...definitions,
    diagnostics: [
      ...definitions.diagnostics,
      ...ignored.map((entry) => ({
        filePath: entry.where,
        reason: ignoredFieldNote(entry),
        severity: 'warning' as const,
      })),
    ],
    ignored,
  };
}

/** One line about a field the server left out: what, why, and how to apply it. */
function ignoredFieldNote(entry: IgnoredAgentField): string {
  return `${entry.field} not applied: ${entry.reason}, and this server does not trust workspace agent files (${TRUST_HINT})`;
}

/** The definition a run's main agent runs as, or a NOT_FOUND error listing the choices. */
export function findMainAgent(
  definitions: AgentDefinitionsLoadResult,
  agentType: string,
): AgentDefinition {
  const found = definitions.activeAgents.find((agent) => agent.agentType === agentType);
  if (found) return found;
  const known = definitions.activeAgents.map((agent) => agent.agentType).join(', ');
  throw new DelegateError(
    'AGENT_NOT_FOUND',
    `agent: no agent type "${agentType.slice(0, 80)}" in this workspace. Available: ${known}.`,
    { details: { field: 'agent' } },
  );
}

/** How messages name the definition a run's main thread runs as: its type and its file. */
function describeMainAgent(agent: AgentDefinition): string {
  return `agent "${agent.agentType}" (${agent.filePath ?? agent.source})`;
}

/**
 * Refuses a main agent that requires MCP servers (`requiredMcpServers`): the server starts
 * none, so the agent would run without what it was written to need, as a sub-agent of that
 * type is refused. An MCP_SERVERS_MISSING error naming the field `agent`.
 */
export function checkMainAgentRuns(agent: AgentDefinition): AgentDefinition {
  const required = agent.requiredMcpServers ?? [];
  if (required.length === 0) return agent;
  throw new DelegateError(
    'MCP_SERVERS_MISSING',
    `agent: ${describeMainAgent(agent)} requires MCP servers matching ${required.join(', ')}; this server starts no MCP servers, so it cannot run this agent as the main thread.`,
    { details: { field: 'agent' } },
  );
}

/** A note for each part of the main agent's definition the server does not run. */
function mainAgentNotes(agent: AgentDefinition): string[] {
  const where = describeMainAgent(agent);
  const notes: string[] = [];
  if (agent.mcpServers?.length)
    notes.push(
      `${where}: mcpServers not applied: this server starts no MCP servers, so the main agent runs without their tools.`,
    );
  if (agent.skills?.length)
    notes.push(
      `${where}: skills not applied: Delegate does not load skills (${agent.skills.join(', ')}).`,
    );
  const { otherEvents } = splitToolHooks(agent.hooks);
  if (otherEvents.length > 0)
    notes.push(
      `${where}: hooks for ${otherEvents.join(', ')} not applied: Delegate runs only PreToolUse and PostToolUse hooks.`,
    );
  return notes;
}

/**
 * The error a run's turn fails with when its session could not open: a hook of the main
 * agent's file that cannot run is named by the agent and the file rather than by the
 * session option it was passed as. Other errors are returned as they are.
 */
export function explainSessionError(
  error: unknown,
  prepared: PreparedSession | undefined,
): unknown {
  if (!prepared?.mainAgentWhere || !DelegateError.hasCode(error, 'INVALID_ARGUMENT')) return error;
  const hook = error.details?.['hook'] as { where: string; reason: string } | undefined;
  if (!hook) return error;
  return new DelegateError(
    'INVALID_AGENT_DEFINITION',
    `${prepared.mainAgentWhere}: hooks.${hook.where}: ${hook.reason}; ${RUNNABLE_HOOKS_HINT}.`,
    { details: { field: 'agent', hook } },
  );
}

function toolName(spec: string): string {
  const open = spec.indexOf('(');
  return (open === -1 ? spec : spec.slice(0, open)).trim();
}

/** Keeps the base tools the definition's `tools`/`disallowedTools` lists allow. */
function definitionToolFilter(definition: AgentDefinition): ((tool: Tool) => boolean) | undefined {
  const allowed = definition.tools?.map(toolName);
  const denied = new Set(definition.disallowedTools?.map(toolName) ?? []);
  if ((allowed === undefined || allowed.includes('*')) && denied.size === 0) return undefined;
  return (tool) =>
    !denied.has(tool.name) &&
    (allowed === undefined || allowed.includes('*') || allowed.includes(tool.name));
}

function rules(specs: readonly string[] | undefined, behavior: 'allow' | 'deny'): PermissionRule[] {
  return (specs ?? []).map((spec) => ({
    source: 'session',
    ruleBehavior: behavior,
    ruleValue: permissionRuleValueFromString(spec),
  }));
}

/** Server-wide facts every session shares. */
export type SessionDefaults = {
  dataDir: string;
  apiKey: string;
  baseURL?: string;
  homeDir?: string;
  /** Apply workspace agent files as written (`--trust-workspace-agents`). */
  trustWorkspaceAgents: boolean;
  /** The workspace roots (real paths): every turn checks its run's workspace is still inside. */
  workspaceRoots: readonly string[];
  toolEnv: NodeJS.ProcessEnv;
  /** The server's secrets (token, connection passwords), removed from every tool result. */
  secrets: string[];
};

/** What the executor needs to open a run's session and to show its main agent. */
export type PreparedSession = {
  options: SessionRunnerOptions;
  /** Type shown for the main agent (`main`, or the chosen agent). */
  mainAgentType: string;
  /** Color of the chosen agent, if any. */
  mainColor: string | null;
  /**
   * Fields of the workspace's agent files the server left out, and parts of the main agent's
   * definition it does not run, each as a note for the run.
   */
  ignoredFields: string[];
  /** How errors name the chosen main agent (`agent "type" (file)`), when there is one. */
  mainAgentWhere?: string;
};

/** The fields left out of the agents a run can use (an overridden file's are in `GET /v1/agents`). */
function activeIgnored(definitions: WorkspaceAgents): IgnoredAgentField[] {
  const active = new Set(definitions.activeAgents.map((agent) => agent.filePath ?? agent.baseDir));
  return definitions.ignored.filter((entry) => active.has(entry.where));
}

/** Builds a run's session options from its stored options and the workspace's agents. */
export async function prepareSession(options: {
  run: RunRecord;
  defaults: SessionDefaults;
}): Promise<PreparedSession> {
  const { run, defaults } = options;
  const runOptions: RunOptions = run.options;
  await checkRunWorkspace(run.workspace, defaults.workspaceRoots);
  const definitions = await loadWorkspaceAgents({
    workspace: run.workspace,
    ...(defaults.homeDir ? { homeDir: defaults.homeDir } : {}),
    trustAgentFiles: defaults.trustWorkspaceAgents,
  });
  const main = runOptions.agent
    ? checkMainAgentRuns(findMainAgent(definitions, runOptions.agent))
    : undefined;
  const mainHooks = main ? splitToolHooks(main.hooks).toolHooks : undefined;
  const model =
    runOptions.model ?? (main?.model && main.model !== 'inherit' ? main.model : undefined);
  const permissionMode =
    runOptions.permissionMode ??
    (main?.permissionMode && main.permissionMode !== 'bubble' ? main.permissionMode : undefined);
  const toolFilter = main ? definitionToolFilter(main) : undefined;
  return {
    mainAgentType: main?.agentType ?? 'main',
    mainColor: main?.color ?? null,
    ignoredFields: [
      ...activeIgnored(definitions).map((entry) => `${entry.where}: ${ignoredFieldNote(entry)}.`),
      ...(main ? mainAgentNotes(main) : []),
    ],
    ...(main ? { mainAgentWhere: describeMainAgent(main) } : {}),
    options: {
      sessionId: run.sessionId,
      cwd: run.workspace,
      // This worker's own folder: the store holds the transcripts every worker restores from.
      transcriptDir: join(defaults.dataDir, 'transcripts'),
      apiKey: defaults.apiKey,
      ...(defaults.baseURL ? { baseURL: defaults.baseURL } : {}),
      ...(defaults.homeDir ? { homeDir: defaults.homeDir } : {}),
      ...(model ? { model } : {}),
      ...(permissionMode ? { permissionMode } : {}),
      allowRules: rules(runOptions.allowedTools, 'allow'),
      denyRules: rules(runOptions.disallowedTools, 'deny'),
      forkEnabled: runOptions.fork ?? false,
      ...(main ? { customSystemPrompt: main.getSystemPrompt({ cwd: run.workspace }) } : {}),
      // Left out by the trust rule above when the workspace's files are not trusted.
      ...(mainHooks ? { mainAgentHooks: mainHooks } : {}),
      ...(toolFilter ? { toolFilter } : {}),
      agentDefinitions: {
        activeAgents: definitions.activeAgents,
        allAgents: definitions.allAgents,
      },
      toolEnv: defaults.toolEnv,
      secrets: defaults.secrets,
      backgroundOutputDirectory: join(defaults.dataDir, 'task-output', run.id),
    },
  };
}
