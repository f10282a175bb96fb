import { type AgentDiagnostic } from './agent-diagnostic.js';
import { parseFullYaml } from './parse-full-yaml.js';
import { type FrontmatterReading } from './parse-frontmatter-yaml.js';
import { parseSimpleYaml } from './parse-simple-yaml.js';
import { type QuotedLine } from './repair-like-claude-code.js';
import { truncateForDiagnostic } from './truncate-for-diagnostic.js';

/** Input of {@link describeFrontmatterReading}. */
export type DescribeFrontmatterReadingOptions = {
  /** The reading that produced the agent. */
  reading: FrontmatterReading & { ok: true };
  /** Its top-level mapping. */
  record: Record<string, unknown>;
  /** File the frontmatter is in. */
  filePath: string;
  /** Agent type the file defines. */
  agentType: string;
  /** Maps a line of the YAML text to a line of the file. */
  toFileLine: (line: number) => number;
};

// What YAML alone makes of `key: value`, when that is not the value's text (the repair's
// quotes changed its meaning); undefined when the line needed the quotes.
function meaningWithoutQuotes(quoted: QuotedLine): unknown {
  const text = `value: ${quoted.value}`;
  const simple = parseSimpleYaml(text, 'error');
  let value: unknown;
  if (simple.kind === 'mapping') value = simple.record.value;
  else if (simple.kind === 'error') return undefined;
  else {
    const full = parseFullYaml(text, 'error');
    if (!full.ok) return undefined;
    value = (full.value as Record<string, unknown> | null)?.value;
  }
  return value === quoted.value ? undefined : value;
}

function describeValue(value: unknown): string {
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `the text ${JSON.stringify(truncateForDiagnostic(value))}`;
  return `${typeof value} ${String(value)}`;
}

function repairNotes(
  options: DescribeFrontmatterReadingOptions,
): Array<Omit<AgentDiagnostic, 'filePath' | 'agentType'>> {
  const { repair } = options.reading;
  if (repair === undefined) return [];
  const { toFileLine } = options;
  const strictLine = repair.strictFailure.line;
  const notes: Array<Omit<AgentDiagnostic, 'filePath' | 'agentType'>> = [
    {
      ...(strictLine === undefined ? {} : { line: toFileLine(strictLine) }),
      severity: 'info',
      reason: `the frontmatter is not strict YAML (${repair.strictFailure.message}); it was read after the repair Claude Code makes (values that hold ': ' or special characters put in quotes, leading tabs made spaces, a repeated key's last value used) — put such values in quotes so no repair is needed`,
    },
  ];
  for (const quoted of repair.quotedLines) {
    const meaning = meaningWithoutQuotes(quoted);
    if (meaning === undefined) continue;
    notes.push({
      line: toFileLine(quoted.line),
      severity: 'warning',
      reason: `the repair reads \`${quoted.key}\` as the text ${JSON.stringify(truncateForDiagnostic(quoted.value))}, as Claude Code does, where YAML alone reads ${describeValue(meaning)}; fix the line that needs the repair so this line keeps its meaning`,
    });
  }
  for (const repeated of repair.repeatedKeys) {
    notes.push({
      line: toFileLine(repeated.lines[repeated.lines.length - 1] ?? 1),
      severity: 'warning',
      reason: `\`${truncateForDiagnostic(repeated.key)}\` is given ${repeated.lines.length} times (lines ${repeated.lines.map(toFileLine).join(', ')}); the last one is used, as Claude Code does — remove the others`,
    });
  }
  return notes;
}

function identityNotes(
  options: DescribeFrontmatterReadingOptions,
): Array<Omit<AgentDiagnostic, 'filePath' | 'agentType'>> {
  const notes: Array<Omit<AgentDiagnostic, 'filePath' | 'agentType'>> = [];
  const line = (key: string): { line?: number } => {
    const found = options.reading.keyLines.get(key);
    return found === undefined ? {} : { line: options.toFileLine(found) };
  };
  const { name, description } = options.record;
  if (typeof name === 'string' && name !== name.trim()) {
    notes.push({
      ...line('name'),
      severity: 'warning',
      reason: `\`name\` begins or ends with spaces, which are part of the agent type (as in Claude Code), so the type is ${JSON.stringify(truncateForDiagnostic(name))}; remove the spaces`,
    });
  }
  if (typeof description === 'string' && description.trim() === '') {
    notes.push({
      ...line('description'),
      severity: 'warning',
      reason:
        '`description` is blank, so the main agent cannot tell when to use this agent; say when to use it',
    });
  }
  return notes;
}

/**
 * Notes on how a frontmatter was read that a user may not expect: that Claude Code's repair
 * pass was needed, each value whose meaning that repair changed, repeated keys, a name with
 * surrounding spaces, a blank description.
 */
export function describeFrontmatterReading(
  options: DescribeFrontmatterReadingOptions,
): AgentDiagnostic[] {
  const base = { filePath: options.filePath, agentType: options.agentType };
  return [...repairNotes(options), ...identityNotes(options)].map((note) => ({ ...base, ...note }));
}
