import { join } from 'node:path';
import {
  type AgentDefinition,
  type PermissionRule,
  type Tool,
  DelegateError,
} from '@delegate/core';
import {
  type AgentDefinitionsLoadResult,
  clearAgentDefinitionsCache,
  getAgentDefinitionsWithOverrides,
} from '@delegate/agent-defs';
import { permissionRuleValueFromString } from '@delegate/tool-filter';
import type { RunOptions } from '../http/schemas.js';
import type { RunRecord } from '../store/run-store.js';
import type { SessionRunnerOptions } from './session-runner.js';

/** Loads the agent definitions of a workspace afresh (files may have changed). */
export async function loadWorkspaceAgents(options: {
  workspace: string;
  homeDir?: string;
}): Promise<AgentDefinitionsLoadResult> {
  clearAgentDefinitionsCache(options.workspace);
  return getAgentDefinitionsWithOverrides({
    cwd: options.workspace,
    ...(options.homeDir ? { homeDir: options.homeDir } : {}),
  });
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
};

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
