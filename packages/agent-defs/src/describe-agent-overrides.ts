import { type AgentDefinition } from '@delegate/core';
import { type AgentDiagnostic } from './agent-diagnostic.js';
import { agentNameSkeleton } from './agent-name-skeleton.js';

function where(agent: AgentDefinition): string {
  return agent.filePath ?? (agent.source === 'built-in' ? 'built-in' : agent.baseDir);
}

/**
 * Explains what precedence did, so a definition that changes another is never silent: a note
 * for each active definition that replaced one from a lower source (a warning when a project
 * file replaces a built-in, since a cloned repository can do that), and a warning for each
 * active non-built-in agent whose name differs from another active agent's only in letter
 * case, accents or lookalike characters, or that is named `plugin:name` for a plugin that
 * is not loaded.
 */
export function describeAgentOverrides(
  allAgents: readonly AgentDefinition[],
  activeAgents: readonly AgentDefinition[],
): AgentDiagnostic[] {
  const diagnostics: AgentDiagnostic[] = [];
  const byType = new Map<string, AgentDefinition[]>();
  for (const agent of allAgents) {
    const group = byType.get(agent.agentType);
    if (group === undefined) byType.set(agent.agentType, [agent]);
    else group.push(agent);
  }
  for (const winner of activeAgents) {
    const replaced = (byType.get(winner.agentType) ?? []).filter(
      (agent) => agent !== winner && agent.source !== winner.source,
    );
    for (const loser of replaced) {
      const replacesBuiltIn = loser.source === 'built-in';
      // A cloned repository is the one source a user did not choose to trust.
      const fromRepository =
        winner.source === 'projectSettings' && (replacesBuiltIn || loser.source === 'plugin');
      diagnostics.push({
        filePath: where(winner),
        agentType: winner.agentType,
        severity: fromRepository ? 'warning' : 'info',
        reason: `agent "${winner.agentType}" from ${winner.source} replaces the ${
          replacesBuiltIn ? 'built-in agent' : `${loser.source} definition in ${where(loser)}`
        }${replacesBuiltIn ? '; remove or rename this file to use the built-in' : ''}`,
      });
    }
  }

  const plugins = new Set(
    allAgents.flatMap((agent) => (agent.plugin === undefined ? [] : [agent.plugin])),
  );
  for (const agent of activeAgents) {
    if (agent.source === 'plugin' || agent.source === 'built-in') continue;
    const separator = agent.agentType.indexOf(':');
    if (separator === -1) continue;
    const plugin = agent.agentType.slice(0, separator);
    if (plugins.has(plugin)) continue;
    diagnostics.push({
      filePath: where(agent),
      agentType: agent.agentType,
      severity: 'warning',
      reason: `agent ${JSON.stringify(agent.agentType)} is named like an agent of plugin ${JSON.stringify(plugin)}, but no such plugin is loaded; it is not a plugin agent — drop the "${plugin}:" prefix`,
    });
  }

  const bySkeleton = new Map<string, AgentDefinition[]>();
  for (const agent of activeAgents) {
    const skeleton = agentNameSkeleton(agent.agentType);
    const group = bySkeleton.get(skeleton);
    if (group === undefined) bySkeleton.set(skeleton, [agent]);
    else group.push(agent);
  }
  for (const group of bySkeleton.values()) {
    if (group.length < 2) continue;
    for (const agent of group) {
      if (agent.source === 'built-in') continue;
      const others = group
        .filter((other) => other !== agent)
        .map((other) => JSON.stringify(other.agentType));
      diagnostics.push({
        filePath: where(agent),
        agentType: agent.agentType,
        severity: 'warning',
        reason: `agent ${JSON.stringify(agent.agentType)} looks like ${others.join(', ')} (the names differ only in letter case, accents or lookalike characters), so one is easily picked for the other; rename it`,
      });
    }
  }
  return diagnostics;
}
