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
import { permissionRuleValueFromString } from '@delegate/tool-filter';
import type { RunOptions } from '../http/schemas.js';
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
  /** Fields of the workspace's agent files the server left out, each as a note for the run. */
  ignoredFields: string[];
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
  const definitions = await loadWorkspaceAgents({
    workspace: run.workspace,
    ...(defaults.homeDir ? { homeDir: defaults.homeDir } : {}),
    trustAgentFiles: defaults.trustWorkspaceAgents,
  });
  const main = runOptions.agent ? findMainAgent(definitions, runOptions.agent) : undefined;
  const model =
    runOptions.model ?? (main?.model && main.model !== 'inherit' ? main.model : undefined);
  const permissionMode =
    runOptions.permissionMode ??
    (main?.permissionMode && main.permissionMode !== 'bubble' ? main.permissionMode : undefined);
  const toolFilter = main ? definitionToolFilter(main) : undefined;
  return {
    mainAgentType: main?.agentType ?? 'main',
    mainColor: main?.color ?? null,
    ignoredFields: activeIgnored(definitions).map(
      (entry) => `${entry.where}: ${ignoredFieldNote(entry)}.`,
    ),
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
      ...(main?.hooks && Object.keys(main.hooks).length > 0 ? { mainAgentHooks: main.hooks } : {}),
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
