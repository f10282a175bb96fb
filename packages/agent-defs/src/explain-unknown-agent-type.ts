import { type FailedAgentFile } from './agent-diagnostic.js';
import { formatAgentDiagnostic } from './format-agent-diagnostic.js';

/**
 * Explains why an agent type that was asked for does not exist when a file meant to define it
 * failed to load: `Agent type "x" is not available because its definition failed to load:
 * path:line: error: reason`, naming each such file (the highest-precedence one last). Returns
 * `undefined` when no failed file would have defined that type, so the caller's usual
 * "not found" message applies.
 */
export function explainUnknownAgentType(
  agentType: string,
  failedAgents: readonly FailedAgentFile[],
): string | undefined {
  const failed = failedAgents.filter((entry) => entry.agentType === agentType);
  if (failed.length === 0) return undefined;
  const files = failed.map((entry) => formatAgentDiagnostic(entry.diagnostic));
  const what = failed.length === 1 ? 'its definition' : `its ${failed.length} definitions`;
  return `Agent type ${JSON.stringify(agentType)} is not available because ${what} failed to load: ${files.join('; ')}. Fix the file and reload the agents.`;
}
