import { basename } from 'node:path';
import { type FailedAgentFile } from './agent-diagnostic.js';
import { formatAgentDiagnostic } from './format-agent-diagnostic.js';

// A failed file with no name to go by (too large to read, no `name:` line) that is named after
// the agent type: `reviewer.md` for `reviewer`, `plugin:reviewer` for a plugin's.
function namedAfter(entry: FailedAgentFile, agentType: string): boolean {
  if (entry.agentType !== undefined || !entry.filePath.toLowerCase().endsWith('.md')) return false;
  const stem = basename(entry.filePath).slice(0, -3);
  return agentType === stem || agentType.endsWith(`:${stem}`);
}

/**
 * Explains why an agent type that was asked for does not exist when a file meant to define it
 * failed to load: `Agent type "x" is not available because its definition failed to load:
 * path:line: error: reason`, naming each such file (the highest-precedence one last). A file
 * whose name could not be read at all counts when it is named after the type (`x.md`), said as
 * a file that may have defined it. Returns `undefined` when no failed file would have defined
 * that type, so the caller's usual "not found" message applies.
 */
export function explainUnknownAgentType(
  agentType: string,
  failedAgents: readonly FailedAgentFile[],
): string | undefined {
  const failed = failedAgents.filter((entry) => entry.agentType === agentType);
  if (failed.length > 0) {
    const files = failed.map((entry) => formatAgentDiagnostic(entry.diagnostic));
    const what = failed.length === 1 ? 'its definition' : `its ${failed.length} definitions`;
    return `Agent type ${JSON.stringify(agentType)} is not available because ${what} failed to load: ${files.join('; ')}. Fix the file and reload the agents.`;
  }
  const likely = failedAgents.filter((entry) => namedAfter(entry, agentType));
  if (likely.length === 0) return undefined;
  const files = likely.map((entry) => formatAgentDiagnostic(entry.diagnostic));
  const which =
    likely.length === 1 ? 'a file named after it' : `${likely.length} files named after it`;
  return `Agent type ${JSON.stringify(agentType)} is not available; ${which}, which may have defined it, failed to load: ${files.join('; ')}. Fix the file and reload the agents.`;
}
