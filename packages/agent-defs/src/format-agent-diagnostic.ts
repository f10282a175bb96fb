import { type AgentDiagnostic } from './agent-diagnostic.js';

/** Renders a diagnostic as one line in the usual compiler form: `path:line: severity: reason`. */
export function formatAgentDiagnostic(diagnostic: AgentDiagnostic): string {
  const where =
    diagnostic.line === undefined
      ? diagnostic.filePath
      : `${diagnostic.filePath}:${diagnostic.line}`;
  return `${where}: ${diagnostic.severity}: ${diagnostic.reason}`;
}
