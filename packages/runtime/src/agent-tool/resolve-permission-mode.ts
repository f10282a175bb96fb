import type { AgentDefinition, PermissionMode } from '@delegate/core';

/** The mode a sub-agent gets when its definition names none. */
export const DEFAULT_SUBAGENT_PERMISSION_MODE: PermissionMode = 'acceptEdits';

/**
 * The permission mode a sub-agent runs with: its definition's mode, else `acceptEdits`
 * (a fork's definition says `bubble`: its questions go to the parent's check). Three
 * parent modes are kept whatever the definition says: a parent in `bypassPermissions`
 * passes it on (the person chose it for the session), a parent in `plan` keeps its
 * sub-agents in `plan`, and a parent in `dontAsk` turns a mode that would ask (`default`,
 * `bubble`) into `dontAsk` (a sub-agent may approve more on its own, but it may not start
 * asking the person, or forward questions to them).
 */
export function resolveAgentPermissionMode(options: {
  /** The caller's mode. */
  parentMode: PermissionMode;
  /** The sub-agent's definition (its `permissionMode`). */
  agent: Pick<AgentDefinition, 'permissionMode'>;
  /** True for a fork (its mode is `bubble`). */
  isFork: boolean;
}): PermissionMode {
  const { parentMode, agent, isFork } = options;
  if (parentMode === 'bypassPermissions' || parentMode === 'plan') return parentMode;
  const own = isFork ? 'bubble' : (agent.permissionMode ?? DEFAULT_SUBAGENT_PERMISSION_MODE);
  if (parentMode === 'dontAsk' && (own === 'default' || own === 'bubble')) return 'dontAsk';
  return own;
}
