import { type AgentDiagnostic, FLAG_AGENTS_LABEL } from '@delegate/agent-defs';
import { printable } from '../terminal/format.js';

/**
 * `path:line: severity: message`, the form editors and CI logs link. File names and what the
 * message quotes come from the files (a cloned repository's): a control character in them (an
 * escape sequence, a line break that would forge another diagnostic) shows as `?`.
 */
export function formatDiagnostic(diagnostic: AgentDiagnostic): string {
  const where =
    diagnostic.line === undefined
      ? diagnostic.filePath
      : `${diagnostic.filePath}:${diagnostic.line}`;
  return printable(`${where}: ${diagnostic.severity}: ${diagnostic.reason}`);
}

/**
 * Tells the person, before a run, about agent files that did not load (each with its line)
 * and how many warnings the others have; notes (`info`) are left to `delegate agents validate`.
 */
export function reportLoadDiagnostics(
  diagnostics: readonly AgentDiagnostic[],
  write: (line: string) => void,
): void {
  const errors = diagnostics.filter((diagnostic) => diagnostic.severity === 'error');
  const warnings = diagnostics.filter((diagnostic) => diagnostic.severity === 'warning');
  for (const error of errors) write(formatDiagnostic(error));
  const warned = `${warnings.length} warning${warnings.length === 1 ? '' : 's'}`;
  // Problems of `--agents` definitions are found again only when validate is given them too.
  const fromFlag = [...errors, ...warnings].some(
    (diagnostic) => diagnostic.filePath === FLAG_AGENTS_LABEL,
  );
  const validate = fromFlag
    ? '`delegate agents validate` with the same `--agents`'
    : '`delegate agents validate`';
  if (errors.length > 0) {
    write(
      `${errors.length} agent file${errors.length === 1 ? '' : 's'} not loaded${warnings.length > 0 ? `, ${warned}` : ''}; ${validate} lists every problem.`,
    );
  } else if (warnings.length > 0) {
    write(`Agent files loaded with ${warned}; ${validate} lists every problem.`);
  }
}
