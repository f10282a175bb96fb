import {
  AgentColor,
  AgentMemoryScope,
  PermissionMode,
  TOOL_NAMES,
  type AgentDefinition,
  type AgentEffort,
  closestKey,
} from '@delegate/core';
import { type AgentDiagnostic, type AgentDiagnosticSeverity } from './agent-diagnostic.js';
import { dropUnsafeKeys } from './drop-unsafe-keys.js';
import { isHexColor, nearestAgentColor } from './nearest-agent-color.js';
import { validateHooks } from './validate-hooks.js';
import { findMisspeltHookKeys } from './find-misspelt-hook-keys.js';
import { readToolList, type ToolListField } from './read-tool-list.js';
import { splitListValue } from './split-list-value.js';
import { truncateForDiagnostic } from './truncate-for-diagnostic.js';

/** The optional fields of a definition that a file or JSON value can set. */
export type AgentFields = Omit<
  AgentDefinition,
  'agentType' | 'whenToUse' | 'source' | 'baseDir' | 'filePath' | 'plugin' | 'getSystemPrompt'
>;

/** Where the fields came from, for diagnostics. */
export type AgentFieldsContext = {
  /** File (or label) the fields were read from. */
  filePath: string;
  /** Agent type the fields belong to. */
  agentType: string;
  /** Keys that are known besides the shared ones (`prompt` for JSON). */
  extraKeys?: readonly string[];
  /** Line of a top-level key, when the format knows it. */
  lineOf?: (key: string) => number | undefined;
  /**
   * What `hooks` of the wrong shape do: `ignore` (default) loads the agent without hooks, with
   * a warning, as Claude Code reads an agent file; `reject` refuses the agent, as Claude Code
   * reads `--agents` JSON.
   */
  invalidHooks?: 'ignore' | 'reject';
};

/** Fields read from a definition, with the notes made on the way, or the reason they are unusable. */
export type AgentFieldsResult =
  | { ok: true; fields: AgentFields; warnings: AgentDiagnostic[] }
  | { ok: false; diagnostic: AgentDiagnostic };

/**
 * Keys of the `.claude/agents` frontmatter convention plus the Delegate extensions
 * (`requiredMcpServers`, `omitClaudeMd`, and the budgets `maxTokens` and `maxCostUsd`).
 */
export const KNOWN_AGENT_KEYS: readonly string[] = [
  'name',
  'description',
  'tools',
  'disallowedTools',
  'model',
  'effort',
  'permissionMode',
  'maxTurns',
  'background',
  'memory',
  'isolation',
  'color',
  'mcpServers',
  'hooks',
  'skills',
  'initialPrompt',
  'requiredMcpServers',
  'omitClaudeMd',
  'maxTokens',
  'maxCostUsd',
];

/** Unknown keys noted one by one; the rest of them get a single note with their count. */
export const MAX_UNKNOWN_KEY_NOTES = 20;

// Claude Code's agent model aliases (2.1.328), kept lower case; any other text is a model id.
const MODEL_ALIASES = ['inherit', 'sonnet', 'opus', 'haiku', 'fable'];

// Spellings of the tool fields used by skills, commands and other tools, and the agent key each means.
const TOOL_KEY_SPELLINGS: ReadonlyMap<string, string> = new Map([
  ['allowed-tools', 'tools'],
  ['allowed_tools', 'tools'],
  ['allowedTools', 'tools'],
  ['disallowed-tools', 'disallowedTools'],
  ['disallowed_tools', 'disallowedTools'],
]);
/** What ignoring a misspelt key means for the agent, by the key that was meant. */
const IGNORED_KEY_EFFECT: Readonly<Record<string, string>> = {
  tools: ", so it does not limit the agent's tools",
  disallowedTools: ', so it removes no tools',
  permissionMode: ', so the agent keeps the default permission mode',
  maxTurns: ', so the agent has no turn limit of its own',
  model: ', so the agent uses the default model',
  mcpServers: ', so the agent gets none of those servers',
  hooks: ', so none of those hooks run',
  isolation: ', so the agent does not get a worktree',
  maxTokens: ', so no token budget bounds the agent',
  maxCostUsd: ', so no cost budget bounds the agent',
};
const EFFORT_LEVELS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;

// A field outcome: a value (possibly absent), a field to drop with a warning, or a reason
// to refuse the whole agent (fields that limit what the agent may do have no safe fallback).
type Outcome<T> =
  | {
      kind: 'value';
      value: T | undefined;
      note?: string;
      notes?: readonly string[];
      noteSeverity?: AgentDiagnosticSeverity;
    }
  | { kind: 'drop'; reason: string }
  | { kind: 'reject'; reason: string };

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `the text ${JSON.stringify(truncateForDiagnostic(value))}`;
  return `${typeof value} ${String(value)}`;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readStringList(value: unknown): string[] | undefined | Error {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return splitListValue(value);
  if (Array.isArray(value)) {
    const items: string[] = [];
    for (const item of value) {
      if (typeof item !== 'string') return new Error(`has an item that is ${describeType(item)}`);
      items.push(...splitListValue(item));
    }
    return items;
  }
  return new Error(`is ${describeType(value)}`);
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}

// Tool lists are read exactly as Claude Code reads them; each surprising reading is a warning.
function readToolField(value: unknown, key: ToolListField): Outcome<string[]> {
  const reading = readToolList(value, key);
  return {
    kind: 'value',
    value: reading.tools,
    notes: reading.notes,
  };
}

function readModel(value: unknown): Outcome<string> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  if (typeof value !== 'string') {
    return {
      kind: 'drop',
      reason: `\`model\` is ${describeType(value)}; expected inherit, sonnet, opus, haiku, fable or a model id`,
    };
  }
  const trimmed = value.trim();
  if (trimmed.length === 0) return { kind: 'value', value: undefined };
  const lower = trimmed.toLowerCase();
  return { kind: 'value', value: MODEL_ALIASES.includes(lower) ? lower : trimmed };
}

function readPositiveInteger(value: unknown): number | undefined {
  const number = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isSafeInteger(number) && number > 0
    ? number
    : undefined;
}

function readEffort(value: unknown): Outcome<AgentEffort> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  if (typeof value === 'string') {
    const level = EFFORT_LEVELS.find((candidate) => candidate === value.trim().toLowerCase());
    if (level !== undefined) return { kind: 'value', value: level };
  }
  const budget = readPositiveInteger(value);
  if (budget !== undefined) return { kind: 'value', value: budget };
  return {
    kind: 'drop',
    reason: `\`effort\` is ${describeType(value)}; expected low, medium, high, xhigh, max or a positive token budget`,
  };
}

function readEnum<T extends string>(options: readonly T[], value: unknown): T | undefined {
  if (typeof value !== 'string') return undefined;
  const wanted = value.trim().toLowerCase();
  return options.find((option) => option.toLowerCase() === wanted);
}

// Exact spellings only: Claude Code ignores any other, and reading `BypassPermissions` as
// bypassPermissions would grant more than it does.
function readPermissionMode(value: unknown): Outcome<PermissionMode> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  const mode = PermissionMode.options.find((option) => option === value);
  if (mode !== undefined) return { kind: 'value', value: mode };
  const meant = readEnum(PermissionMode.options, value);
  return {
    kind: 'drop',
    reason:
      meant === undefined
        ? `\`permissionMode\` is ${describeType(value)}; expected one of ${PermissionMode.options.join(', ')}, and Claude Code ignores any other value, so the agent runs in the default mode`
        : `\`permissionMode\` must be spelled exactly \`${meant}\`; Claude Code ignores ${describeType(value)}, so the agent runs in the default mode`,
  };
}

function readMaxTurns(value: unknown): Outcome<number> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  const turns = readPositiveInteger(value);
  if (turns !== undefined) return { kind: 'value', value: turns };
  return {
    kind: 'drop',
    reason: `\`maxTurns\` is ${describeType(value)}; expected a positive whole number`,
  };
}

function readMaxTokens(value: unknown): Outcome<number> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  const tokens = readPositiveInteger(value);
  if (tokens !== undefined) return { kind: 'value', value: tokens };
  return {
    kind: 'drop',
    reason: `\`maxTokens\` is ${describeType(value)}; expected a positive whole number of tokens, so the agent has no token budget of its own`,
  };
}

function readMaxCostUsd(value: unknown): Outcome<number> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  const text = typeof value === 'string' ? value.trim().replace(/^\$/, '') : undefined;
  const number = text !== undefined && /^\d+(\.\d+)?$/.test(text) ? Number(text) : value;
  if (typeof number === 'number' && Number.isFinite(number) && number > 0)
    return { kind: 'value', value: number };
  return {
    kind: 'drop',
    reason: `\`maxCostUsd\` is ${describeType(value)}; expected a positive number of US dollars, so the agent has no cost budget of its own`,
  };
}

function readBoolean(value: unknown, key: string): Outcome<boolean> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  if (typeof value === 'boolean') return { kind: 'value', value };
  if (typeof value === 'string') {
    const lower = value.trim().toLowerCase();
    if (lower === 'true' || lower === 'yes') return { kind: 'value', value: true };
    if (lower === 'false' || lower === 'no') return { kind: 'value', value: false };
  }
  return { kind: 'drop', reason: `\`${key}\` is ${describeType(value)}; expected true or false` };
}

// Exactly as Claude Code reads it: only `true` (or the text "true") starts the agent in the
// background, so `yes` or `True` in quotes must not either.
function readBackground(value: unknown): Outcome<boolean> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  if (value === true || value === 'true') return { kind: 'value', value: true };
  if (value === false || value === 'false') return { kind: 'value', value: false };
  return {
    kind: 'drop',
    reason: `\`background\` is ${describeType(value)}; Claude Code runs an agent in the background only for true (or the text "true") and ignores any other value, so the agent runs in the foreground — write true or false`,
  };
}

// Exact spellings only: memory adds Read, Write and Edit to the agent's tools, and Claude Code
// does that only for these three values.
function readMemory(value: unknown): Outcome<AgentMemoryScope> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  const scope = AgentMemoryScope.options.find((option) => option === value);
  if (scope !== undefined) return { kind: 'value', value: scope };
  return {
    kind: 'drop',
    reason: `\`memory\` is ${describeType(value)}; expected exactly user, project or local, as Claude Code does (the agent runs without memory)`,
  };
}

// Exact spelling only, as Claude Code reads it: `WORKTREE` gives no worktree there either.
function readIsolation(value: unknown): Outcome<'worktree'> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  if (value === 'worktree') return { kind: 'value', value: 'worktree' };
  const meant = typeof value === 'string' && value.trim().toLowerCase() === 'worktree';
  return {
    kind: 'drop',
    reason: meant
      ? `\`isolation\` must be spelled exactly \`worktree\`; Claude Code ignores ${describeType(value)}, so the agent runs without isolation`
      : `\`isolation\` is ${describeType(value)}; the only supported value is worktree, and Claude Code ignores any other, so the agent runs without isolation`,
  };
}

function readColor(value: unknown): Outcome<AgentColor> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  const color = readEnum(AgentColor.options, value);
  if (color !== undefined) return { kind: 'value', value: color };
  // Other tools take CSS hex colors; the color is cosmetic, so the nearest one is a safe fallback.
  if (typeof value === 'string' && isHexColor(value)) {
    const nearest = nearestAgentColor(value);
    return {
      kind: 'value',
      value: nearest,
      noteSeverity: 'info',
      note:
        nearest === undefined
          ? `\`color\` ${value.trim()} is a grey that no agent color matches; the agent is shown without a color`
          : `\`color\` ${value.trim()} is shown as the nearest agent color, ${nearest}`,
    };
  }
  return {
    kind: 'drop',
    reason: `\`color\` is ${describeType(value)}; expected one of ${AgentColor.options.join(', ')}`,
  };
}

// Leaves out keys such as `__proto__` from a mapping the definition keeps, with a note.
function withoutUnsafeKeys<T>(outcome: Outcome<T>, key: string): Outcome<T> {
  if (outcome.kind !== 'value' || outcome.value === undefined) return outcome;
  const { value, dropped } = dropUnsafeKeys(outcome.value);
  if (dropped === 0) return outcome;
  return {
    kind: 'value',
    value,
    note: `\`${key}\` holds ${dropped} key(s) named __proto__, constructor or prototype, which were left out; they are never valid there`,
  };
}

const MCP_SERVERS_AS_LIST =
  'write each server as an item of a YAML list (`- github`, or `- name: { command: … }` for one defined here)';

// Only a YAML list, as Claude Code reads it: a mapping or a comma-separated text adds no
// server there, so it must not add one here. Each item is a server name, as written, or a
// `{ name: config }` mapping; an item of another kind is left out, as Claude Code leaves it out.
function readMcpServers(value: unknown): Outcome<Array<string | Record<string, unknown>>> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  if (!Array.isArray(value)) {
    return {
      kind: 'drop',
      reason: `\`mcpServers\` is ${describeType(value)}; Claude Code reads mcpServers only as a YAML list and ignores any other value, so the agent gets no MCP servers of its own — ${MCP_SERVERS_AS_LIST}`,
    };
  }
  const servers: Array<string | Record<string, unknown>> = [];
  const notes: string[] = [];
  value.forEach((item: unknown, index) => {
    if (typeof item === 'string' && item.trim().length > 0) {
      servers.push(item);
      if (item.includes(','))
        notes.push(
          `item ${index + 1} of \`mcpServers\`, ${describeType(item)}, is one server name, as Claude Code reads it, not several; ${MCP_SERVERS_AS_LIST}`,
        );
    } else if (isPlainRecord(item)) servers.push(item);
    else
      notes.push(
        `item ${index + 1} of \`mcpServers\` is ${describeType(item)}, which Claude Code leaves out, and so does Delegate; expected a server name or a { name: config } mapping`,
      );
  });
  return { kind: 'value', value: servers.length === 0 ? undefined : servers, notes };
}

function readOptionalStringList(value: unknown, key: string): Outcome<string[]> {
  const list = readStringList(value);
  if (list instanceof Error) {
    return {
      kind: 'drop',
      reason: `\`${key}\` ${list.message}; expected a comma-separated string or a list of names`,
    };
  }
  return { kind: 'value', value: list === undefined ? undefined : unique(list) };
}

// Claude Code loads an agent file whose hooks do not have the right shape without its hooks
// (it rejects such `--agents` JSON); the agent never gets hooks it would not run there.
function readHooks(value: unknown, invalid: 'ignore' | 'reject'): Outcome<Record<string, unknown>> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  const problem = validateHooks(value);
  if (problem === undefined && isPlainRecord(value))
    return { kind: 'value', value, notes: findMisspeltHookKeys(value) };
  const shape = `\`hooks\` does not have the shape Claude Code requires (${problem ?? 'expected a mapping'})`;
  const fix =
    'write each event as a list of { matcher, hooks: [{ type: command, command }] } entries';
  return invalid === 'reject'
    ? { kind: 'reject', reason: `${shape}; ${fix}` }
    : {
        kind: 'drop',
        reason: `${shape}, so Claude Code runs none of them and neither does Delegate; ${fix}`,
      };
}

function readText(value: unknown, key: string): Outcome<string> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  if (typeof value === 'string')
    return { kind: 'value', value: value.trim().length === 0 ? undefined : value };
  return { kind: 'drop', reason: `\`${key}\` is ${describeType(value)}; expected text` };
}

/**
 * Reads the optional fields of an agent definition. Where a looser reading cannot give the
 * agent more than Claude Code gives it, it is lenient: case is ignored in model, effort and
 * color values, numbers may be numeric strings, skills may be a comma-separated string. Fields
 * that change what the agent does (`permissionMode`, `memory`, `isolation`, `background`,
 * `mcpServers`, `hooks`, `tools`, `disallowedTools`) are read exactly as Claude Code reads
 * them. A bad field is dropped with a warning; the agent is refused only where Claude Code
 * refuses it too (hooks of the wrong shape in `--agents` JSON, see `invalidHooks`).
 */
export function normalizeAgentFields(
  record: Record<string, unknown>,
  context: AgentFieldsContext,
): AgentFieldsResult {
  const warnings: AgentDiagnostic[] = [];
  const fields: AgentFields = {};
  const at = (key: string): { line?: number } => {
    const line = context.lineOf?.(key);
    return line === undefined ? {} : { line };
  };
  const base = { filePath: context.filePath, agentType: context.agentType };

  const apply = <K extends keyof AgentFields>(
    key: K,
    outcome: Outcome<NonNullable<AgentFields[K]>>,
  ): AgentDiagnostic | undefined => {
    switch (outcome.kind) {
      case 'value':
        if (outcome.value !== undefined) fields[key] = outcome.value;
        for (const note of [
          ...(outcome.note === undefined ? [] : [outcome.note]),
          ...(outcome.notes ?? []),
        ]) {
          warnings.push({
            ...base,
            ...at(key),
            reason: note,
            severity: outcome.noteSeverity ?? 'warning',
          });
        }
        return undefined;
      case 'drop':
        warnings.push({
          ...base,
          ...at(key),
          reason: `${outcome.reason}; the field was ignored`,
          severity: 'warning',
        });
        return undefined;
      case 'reject':
        return { ...base, ...at(key), reason: outcome.reason, severity: 'error' };
    }
  };

  const steps: Array<() => AgentDiagnostic | undefined> = [
    () => apply('tools', readToolField(record.tools, 'tools')),
    () => apply('disallowedTools', readToolField(record.disallowedTools, 'disallowedTools')),
    () => apply('model', readModel(record.model)),
    () => apply('effort', readEffort(record.effort)),
    () => apply('permissionMode', readPermissionMode(record.permissionMode)),
    () => apply('maxTurns', readMaxTurns(record.maxTurns)),
    () => apply('maxTokens', readMaxTokens(record.maxTokens)),
    () => apply('maxCostUsd', readMaxCostUsd(record.maxCostUsd)),
    () => apply('background', readBackground(record.background)),
    () => apply('memory', readMemory(record.memory)),
    () => apply('isolation', readIsolation(record.isolation)),
    () => apply('color', readColor(record.color)),
    () => apply('mcpServers', withoutUnsafeKeys(readMcpServers(record.mcpServers), 'mcpServers')),
    () =>
      apply(
        'requiredMcpServers',
        readOptionalStringList(record.requiredMcpServers, 'requiredMcpServers'),
      ),
    () =>
      apply(
        'hooks',
        withoutUnsafeKeys(readHooks(record.hooks, context.invalidHooks ?? 'ignore'), 'hooks'),
      ),
    () => apply('skills', readOptionalStringList(record.skills, 'skills')),
    () => apply('initialPrompt', readText(record.initialPrompt, 'initialPrompt')),
    () => apply('omitClaudeMd', readBoolean(record.omitClaudeMd, 'omitClaudeMd')),
  ];
  for (const step of steps) {
    const diagnostic = step();
    if (diagnostic !== undefined) return { ok: false, diagnostic };
  }

  // An agent with memory must be able to read and write its memory files; Claude Code adds
  // these three to any explicit list, an empty one included.
  if (fields.memory !== undefined && fields.tools !== undefined && !fields.tools.includes('*')) {
    fields.tools = unique([...fields.tools, TOOL_NAMES.write, TOOL_NAMES.edit, TOOL_NAMES.read]);
  }

  const known = new Set([...KNOWN_AGENT_KEYS, ...(context.extraKeys ?? [])]);
  let unknownKeys = 0;
  for (const key of Object.keys(record)) {
    if (known.has(key)) continue;
    const meant = TOOL_KEY_SPELLINGS.get(key);
    const cased = KNOWN_AGENT_KEYS.find((known) => known.toLowerCase() === key.toLowerCase());
    if (meant === undefined && cased !== undefined) {
      // `Tools:`, `Model:`: keys are case-sensitive, and Claude Code ignores these too.
      warnings.push({
        ...base,
        ...at(key),
        reason: `\`${key}\` is not read, because keys are case-sensitive (Claude Code ignores it too)${cased === 'tools' ? ", so it does not limit the agent's tools" : cased === 'disallowedTools' ? ', so it removes no tools' : ''}; write \`${cased}\``,
        severity: 'warning',
      });
      continue;
    }
    if (meant !== undefined) {
      // Skills and commands spell it this way; an agent ignores it, which widens what it may use.
      warnings.push({
        ...base,
        ...at(key),
        reason: `\`${key}\` is not an agent key and was ignored, so it does not limit the agent's tools; agent files call it \`${meant}\``,
        severity: 'warning',
      });
      continue;
    }
    const close = closestKey(key, KNOWN_AGENT_KEYS, { mode: 'strict' });
    if (close !== undefined) {
      // `tool:`, `desciption:`: Claude Code ignores these too, often widening what the agent may do.
      warnings.push({
        ...base,
        ...at(key),
        reason: `\`${truncateForDiagnostic(key)}\` is not an agent key and was ignored (Claude Code ignores it too)${IGNORED_KEY_EFFECT[close] ?? ''}; did you mean \`${close}\`?`,
        severity: 'warning',
      });
      continue;
    }
    unknownKeys += 1;
    if (unknownKeys > MAX_UNKNOWN_KEY_NOTES) continue;
    warnings.push({
      ...base,
      ...at(key),
      reason: `unknown key \`${truncateForDiagnostic(key)}\` was ignored`,
      severity: 'info',
    });
  }
  if (unknownKeys > MAX_UNKNOWN_KEY_NOTES) {
    warnings.push({
      ...base,
      reason: `${unknownKeys - MAX_UNKNOWN_KEY_NOTES} more unknown keys were ignored`,
      severity: 'info',
    });
  }
  return { ok: true, fields, warnings };
}
