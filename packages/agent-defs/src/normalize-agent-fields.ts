import {
  AgentColor,
  AgentMemoryScope,
  PermissionMode,
  TOOL_NAMES,
  type AgentDefinition,
  type AgentEffort,
} from '@delegate/core';
import { type AgentDiagnostic, type AgentDiagnosticSeverity } from './agent-diagnostic.js';
import { dropUnsafeKeys } from './drop-unsafe-keys.js';
import { isHexColor, nearestAgentColor } from './nearest-agent-color.js';
import { splitListValue } from './split-list-value.js';

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
};

/** Fields read from a definition, with the notes made on the way, or the reason they are unusable. */
export type AgentFieldsResult =
  | { ok: true; fields: AgentFields; warnings: AgentDiagnostic[] }
  | { ok: false; diagnostic: AgentDiagnostic };

/** Keys of the `.claude/agents` frontmatter convention plus the two Delegate additions. */
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
];

/** Unknown keys noted one by one; the rest of them get a single note with their count. */
export const MAX_UNKNOWN_KEY_NOTES = 20;

const MODEL_ALIASES = ['inherit', 'sonnet', 'opus', 'haiku'];

// Spellings of the tool fields used by skills, commands and other tools, and the agent key each means.
const TOOL_KEY_SPELLINGS: ReadonlyMap<string, string> = new Map([
  ['allowed-tools', 'tools'],
  ['allowed_tools', 'tools'],
  ['allowedTools', 'tools'],
  ['disallowed-tools', 'disallowedTools'],
  ['disallowed_tools', 'disallowedTools'],
]);
const EFFORT_LEVELS = ['low', 'medium', 'high', 'max'] as const;

// A field outcome: a value (possibly absent), a field to drop with a warning, or a reason
// to refuse the whole agent (fields that limit what the agent may do have no safe fallback).
type Outcome<T> =
  | { kind: 'value'; value: T | undefined; note?: string; noteSeverity?: AgentDiagnosticSeverity }
  | { kind: 'drop'; reason: string }
  | { kind: 'reject'; reason: string };

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `the text ${JSON.stringify(truncateForDiagnostic(value))}`;
  return `${typeof value} ${String(value)}`;
}

/** Cuts a value quoted in a diagnostic to 40 characters, so diagnostics never echo a file. */
export function truncateForDiagnostic(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
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

function readToolList(value: unknown, key: string): Outcome<string[]> {
  const list = readStringList(value);
  if (list instanceof Error) {
    return {
      kind: 'reject',
      reason: `\`${key}\` ${list.message}; write it as a comma-separated string or a list of tool names (an unreadable tool list has no safe fallback)`,
    };
  }
  if (list === undefined) return { kind: 'value', value: undefined };
  if (list.length === 0 && typeof value === 'string') {
    return {
      kind: 'value',
      value: undefined,
      note: `\`${key}\` is empty and was ignored; remove it, or list tool names`,
    };
  }
  return { kind: 'value', value: unique(list) };
}

function readModel(value: unknown): Outcome<string> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  if (typeof value !== 'string') {
    return {
      kind: 'drop',
      reason: `\`model\` is ${describeType(value)}; expected inherit, sonnet, opus, haiku or a model id`,
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
    reason: `\`effort\` is ${describeType(value)}; expected low, medium, high, max or a positive token budget`,
  };
}

function readEnum<T extends string>(options: readonly T[], value: unknown): T | undefined {
  if (typeof value !== 'string') return undefined;
  const wanted = value.trim().toLowerCase();
  return options.find((option) => option.toLowerCase() === wanted);
}

function readPermissionMode(value: unknown): Outcome<PermissionMode> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  const mode = readEnum(PermissionMode.options, value);
  if (mode !== undefined) return { kind: 'value', value: mode };
  return {
    kind: 'reject',
    reason: `\`permissionMode\` is ${describeType(value)}; expected one of ${PermissionMode.options.join(', ')} (an unknown mode has no safe fallback)`,
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

function readMemory(value: unknown): Outcome<AgentMemoryScope> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  const scope = readEnum(AgentMemoryScope.options, value);
  if (scope !== undefined) return { kind: 'value', value: scope };
  return {
    kind: 'drop',
    reason: `\`memory\` is ${describeType(value)}; expected user, project or local (the agent runs without memory)`,
  };
}

function readIsolation(value: unknown): Outcome<'worktree'> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  if (typeof value === 'string' && value.trim().toLowerCase() === 'worktree')
    return { kind: 'value', value: 'worktree' };
  return {
    kind: 'reject',
    reason: `\`isolation\` is ${describeType(value)}; the only supported value is worktree (running without the requested isolation is not a safe fallback)`,
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

function readMcpServers(value: unknown): Outcome<Array<string | Record<string, unknown>>> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  if (typeof value === 'string') return { kind: 'value', value: unique(splitListValue(value)) };
  if (isPlainRecord(value)) {
    // `{ name: config, ... }` written as one mapping: one inline server per key.
    return {
      kind: 'value',
      value: Object.entries(value).map(([name, config]) => ({ [name]: config })),
    };
  }
  if (Array.isArray(value)) {
    const servers: Array<string | Record<string, unknown>> = [];
    for (const item of value) {
      if (typeof item === 'string') servers.push(...splitListValue(item));
      else if (isPlainRecord(item)) servers.push(item);
      else
        return {
          kind: 'drop',
          reason: `\`mcpServers\` has an item that is ${describeType(item)}; expected server names or { name: config } mappings`,
        };
    }
    return { kind: 'value', value: servers };
  }
  return {
    kind: 'drop',
    reason: `\`mcpServers\` is ${describeType(value)}; expected server names or { name: config } mappings`,
  };
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

function readHooks(value: unknown): Outcome<Record<string, unknown>> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  if (isPlainRecord(value)) return { kind: 'value', value };
  return {
    kind: 'reject',
    reason: `\`hooks\` is ${describeType(value)}; expected a mapping of hook events (hooks can guard tool calls, so they are not dropped silently)`,
  };
}

function readText(value: unknown, key: string): Outcome<string> {
  if (value === undefined || value === null) return { kind: 'value', value: undefined };
  if (typeof value === 'string')
    return { kind: 'value', value: value.trim().length === 0 ? undefined : value };
  return { kind: 'drop', reason: `\`${key}\` is ${describeType(value)}; expected text` };
}

/**
 * Reads the optional fields of an agent definition, leniently: case is ignored in enum
 * values, numbers may be numeric strings, lists may be comma-separated strings. A bad field
 * that has a safe fallback is dropped with a warning; a bad field that limits what the agent
 * may do (tools, disallowedTools, permissionMode, isolation, hooks) refuses the agent.
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
        if (outcome.note !== undefined)
          warnings.push({
            ...base,
            ...at(key),
            reason: outcome.note,
            severity: outcome.noteSeverity ?? 'warning',
          });
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
    () => apply('tools', readToolList(record.tools, 'tools')),
    () => apply('disallowedTools', readToolList(record.disallowedTools, 'disallowedTools')),
    () => apply('model', readModel(record.model)),
    () => apply('effort', readEffort(record.effort)),
    () => apply('permissionMode', readPermissionMode(record.permissionMode)),
    () => apply('maxTurns', readMaxTurns(record.maxTurns)),
    () => apply('background', readBoolean(record.background, 'background')),
    () => apply('memory', readMemory(record.memory)),
    () => apply('isolation', readIsolation(record.isolation)),
    () => apply('color', readColor(record.color)),
    () => apply('mcpServers', withoutUnsafeKeys(readMcpServers(record.mcpServers), 'mcpServers')),
    () =>
      apply(
        'requiredMcpServers',
        readOptionalStringList(record.requiredMcpServers, 'requiredMcpServers'),
      ),
    () => apply('hooks', withoutUnsafeKeys(readHooks(record.hooks), 'hooks')),
    () => apply('skills', readOptionalStringList(record.skills, 'skills')),
    () => apply('initialPrompt', readText(record.initialPrompt, 'initialPrompt')),
    () => apply('omitClaudeMd', readBoolean(record.omitClaudeMd, 'omitClaudeMd')),
  ];
  for (const step of steps) {
    const diagnostic = step();
    if (diagnostic !== undefined) return { ok: false, diagnostic };
  }

  // An agent with memory must be able to read and write its memory files.
  if (fields.memory !== undefined && fields.tools !== undefined && !fields.tools.includes('*')) {
    fields.tools = unique([...fields.tools, TOOL_NAMES.read, TOOL_NAMES.write, TOOL_NAMES.edit]);
  }

  const known = new Set([...KNOWN_AGENT_KEYS, ...(context.extraKeys ?? [])]);
  let unknownKeys = 0;
  for (const key of Object.keys(record)) {
    if (known.has(key)) continue;
    const meant = TOOL_KEY_SPELLINGS.get(key);
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
