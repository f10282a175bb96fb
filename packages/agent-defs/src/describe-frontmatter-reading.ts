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

type Note = Omit<AgentDiagnostic, 'filePath' | 'agentType'>;

// The speakers of the `<example>` dialogues in descriptions. Written at the start of a line,
// `user: "…"` and `assistant: "…"` are read as keys of their own.
const EXAMPLE_KEYS = new Set(['user', 'assistant']);

// Example dialogue lines below `description` that YAML read as keys: the keys and their lines.
function findExampleKeys(
  options: DescribeFrontmatterReadingOptions,
): { keys: string[]; lines: number[]; descriptionLine: number } | undefined {
  const { record, reading } = options;
  const descriptionLine = reading.keyLines.get('description');
  if (descriptionLine === undefined || typeof record.description !== 'string') return undefined;
  const keys = Object.keys(record).filter(
    (key) => EXAMPLE_KEYS.has(key.toLowerCase()) && typeof record[key] === 'string',
  );
  const lines = keys
    .flatMap((key) => {
      const repeated = reading.repair?.repeatedKeys.find((entry) => entry.key === key);
      return repeated?.lines ?? [reading.keyLines.get(key) ?? 0];
    })
    .filter((line) => line > descriptionLine)
    .sort((left, right) => left - right);
  return lines.length === 0 ? undefined : { keys, lines, descriptionLine };
}

function exampleKeyNote(
  found: NonNullable<ReturnType<typeof findExampleKeys>>,
  toFileLine: (line: number) => number,
): Note {
  const names = found.keys.map((key) => `\`${key}:\``).join(' and ');
  const first = toFileLine(found.lines[0] ?? 1);
  const last = toFileLine(found.lines[found.lines.length - 1] ?? 1);
  const where =
    found.lines.length === 1
      ? `line (line ${first}) looks like an example of \`description\` (line ${toFileLine(found.descriptionLine)}), but YAML reads it as a key of its own, so it is ignored and the description ends above it`
      : `lines (lines ${first}-${last}) look like examples of \`description\` (line ${toFileLine(found.descriptionLine)}), but YAML reads them as keys of their own, so they are ignored and the description ends above them`;
  return {
    line: first,
    severity: 'warning',
    reason: `the ${names} ${where}, as in Claude Code; write the description as a block scalar (\`description: |\` with every line of the text indented below it), or on one line with \\n for the line breaks`,
  };
}

function repairNotes(
  options: DescribeFrontmatterReadingOptions,
  exampleKeys: readonly string[],
): Note[] {
  const { repair } = options.reading;
  if (repair === undefined) return [];
  const { toFileLine } = options;
  const strictLine = repair.strictFailure.line;
  const notes: Note[] = [
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
    // Said by the example note: removing the repeats is not the fix.
    if (exampleKeys.includes(repeated.key)) continue;
    notes.push({
      line: toFileLine(repeated.lines[repeated.lines.length - 1] ?? 1),
      severity: 'warning',
      reason: `\`${truncateForDiagnostic(repeated.key)}\` is given ${repeated.lines.length} times (lines ${repeated.lines.map(toFileLine).join(', ')}); the last one is used, as Claude Code does — remove the others`,
    });
  }
  return notes;
}

function identityNotes(options: DescribeFrontmatterReadingOptions): Note[] {
  const notes: Note[] = [];
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
 * pass was needed, each value whose meaning that repair changed, repeated keys, example
 * dialogue lines read as keys instead of as part of the description, a name with surrounding
 * spaces, a blank description.
 */
export function describeFrontmatterReading(
  options: DescribeFrontmatterReadingOptions,
): AgentDiagnostic[] {
  const base = { filePath: options.filePath, agentType: options.agentType };
  const examples = findExampleKeys(options);
  return [
    ...repairNotes(options, examples?.keys ?? []),
    ...(examples === undefined ? [] : [exampleKeyNote(examples, options.toFileLine)]),
    ...identityNotes(options),
  ].map((note) => ({ ...base, ...note }));
}
