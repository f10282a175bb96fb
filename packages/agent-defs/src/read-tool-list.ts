import { TOOL_NAMES } from '@delegate/core';
import { splitListValue } from './split-list-value.js';
import { truncateForDiagnostic } from './truncate-for-diagnostic.js';

/** How a `tools` or `disallowedTools` value was read, with the readings a user may not expect. */
export type ToolListReading = {
  /**
   * The tool names: `undefined` when the key is absent (`tools`: every tool), `['*']` when
   * `*` appears anywhere in `tools`, `[]` when a present `tools` value names nothing (no tools).
   */
  tools: string[] | undefined;
  /** Readings that differ from the obvious one, each a sentence for a warning. */
  notes: string[];
};

/** Which field is read: `tools` (what is allowed) or `disallowedTools` (what is removed). */
export type ToolListField = 'tools' | 'disallowedTools';

/**
 * Splits a tool list the way Claude Code does: on commas and on spaces outside parentheses
 * (`Read Grep` is two tools, `Bash(git add, git commit)` one), trimming each item and dropping
 * empty ones. Tabs and line breaks do not separate items.
 */
export function splitToolList(value: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let start = 0;
  for (let index = 0; index < value.length; index++) {
    const character = value.charAt(index);
    if (character === '(') depth += 1;
    else if (character === ')') depth = Math.max(0, depth - 1);
    else if ((character === ',' || character === ' ') && depth === 0) {
      items.push(value.slice(start, index));
      start = index + 1;
    }
  }
  items.push(value.slice(start));
  return items.map((item) => item.trim()).filter((item) => item.length > 0);
}

function quote(text: string): string {
  return JSON.stringify(truncateForDiagnostic(text));
}

function describeShape(value: unknown): string {
  if (value === null) return 'empty';
  if (Array.isArray(value)) return 'an empty list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string')
    return value.trim() === '' ? 'blank text' : `the text ${quote(value)}`;
  return `${typeof value} ${String(value)}`;
}

function describeItem(value: unknown): string {
  if (value === null) return 'empty';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${String(value)}`;
}

// True when a `(` is still open at the end, the way splitToolList counts them.
function leavesParenthesisOpen(text: string): boolean {
  let depth = 0;
  for (const character of text) {
    if (character === '(') depth += 1;
    else if (character === ')') depth = Math.max(0, depth - 1);
  }
  return depth > 0;
}

// Items of one string, with a note when spaces split it where commas alone would not.
function splitWithNote(
  text: string,
  field: ToolListField,
  notes: string[],
  where: string,
): string[] {
  const items = splitToolList(text);
  if (leavesParenthesisOpen(text)) {
    notes.push(
      `\`${field}\`${where} ${quote(text)} opens a parenthesis it never closes, so everything after it (commas and spaces included) is one item, as in Claude Code, and names no tool; close the parenthesis`,
    );
  }
  const byCommas = splitListValue(text);
  if (items.length > byCommas.length) {
    notes.push(
      `\`${field}\`${where} ${quote(text)} is read as ${items.length} tools (${truncateForDiagnostic(items.join(', '))}), because Claude Code splits tool lists on spaces as well as commas; separate the tools with commas so the list reads the same everywhere`,
    );
  }
  return items;
}

function readItems(value: unknown[], field: ToolListField, notes: string[]): string[] {
  const items: string[] = [];
  value.forEach((item, index) => {
    if (typeof item === 'string') {
      items.push(...splitWithNote(item, field, notes, ` item ${index + 1}`));
      return;
    }
    notes.push(
      `item ${index + 1} of \`${field}\` is ${describeItem(item)}, not a tool name; it was dropped, as Claude Code drops it — write tool names as text`,
    );
  });
  return items;
}

function unique(items: readonly string[]): string[] {
  return [...new Set(items)];
}

function readTools(value: unknown, notes: string[]): string[] {
  const items =
    typeof value === 'string'
      ? splitWithNote(value, 'tools', notes, '')
      : Array.isArray(value)
        ? readItems(value, 'tools', notes)
        : [];
  if (items.includes('*')) {
    const others = items.filter((item) => item !== '*');
    if (others.length > 0) {
      notes.push(
        `\`tools\` holds \`*\`, which allows every tool, so the other entries (${truncateForDiagnostic(others.join(', '))}) limit nothing; remove \`*\` to limit the agent to them`,
      );
    }
    return ['*'];
  }
  if (items.length === 0) {
    notes.push(
      `\`tools\` is present but ${describeShape(value)}, so the agent gets no tools at all, as in Claude Code; remove the \`tools\` line to allow every tool, or list the tools it may use`,
    );
  }
  return unique(items);
}

function readDisallowedTools(value: unknown, notes: string[]): string[] {
  if (typeof value !== 'string' && !Array.isArray(value)) {
    if (value !== null) {
      notes.push(
        `\`disallowedTools\` is ${describeShape(value)}, not a list of tool names, so it removes no tools, as in Claude Code; list the tools to remove, comma-separated`,
      );
    }
    return [];
  }
  const items =
    typeof value === 'string'
      ? splitWithNote(value, 'disallowedTools', notes, '')
      : readItems(value, 'disallowedTools', notes);
  if (items.includes('*')) {
    notes.push(
      '`disallowedTools` holds `*`, which Claude Code reads as a tool named * and so removes nothing; to allow no tools, write `tools: []`',
    );
  }
  return unique(items);
}

/**
 * Reads a `tools` or `disallowedTools` value exactly as Claude Code does: text is split by
 * {@link splitToolList}; a list keeps its text items (each split the same way) and drops the
 * others; for `tools`, `*` anywhere means every tool, and a value that is present but names
 * nothing (empty, `""`, `[]`, a mapping, a number) means no tools; `disallowedTools` that is
 * not text or a list removes nothing. Each reading that differs from the obvious one comes
 * with a note.
 */
export function readToolList(value: unknown, field: ToolListField): ToolListReading {
  if (value === undefined) return { tools: undefined, notes: [] };
  const notes: string[] = [];
  const tools = field === 'tools' ? readTools(value, notes) : readDisallowedTools(value, notes);
  checkToolNames(tools, field, notes);
  return { tools, notes };
}

// Tools of Claude Code that Delegate does not name in TOOL_NAMES, which agent files still list.
const OTHER_CLAUDE_CODE_TOOLS = [
  'MultiEdit',
  'LS',
  'NotebookRead',
  'BashOutput',
  'KillShell',
  'KillBash',
  'ListMcpResourcesTool',
  'ReadMcpResourceTool',
  'SlashCommand',
  'EnterPlanMode',
];

// Tool names agent files use (Delegate's and Claude Code's), by their lower case.
const KNOWN_TOOLS: ReadonlyMap<string, string> = new Map(
  [...Object.values(TOOL_NAMES), ...OTHER_CLAUDE_CODE_TOOLS].map((name) => [
    name.toLowerCase(),
    name,
  ]),
);

/**
 * Notes for names that match no tool: one that differs from a tool's only in case (`read`:
 * names are case-sensitive, so it matches nothing), and a `tools` list in which no name is a
 * tool at all (`tools: All tools`), which leaves the agent with no tools. MCP tools
 * (`mcp__…`) cannot be known here and are never noted.
 */
function checkToolNames(tools: readonly string[], field: ToolListField, notes: string[]): void {
  const names = tools.map((spec) => {
    const open = spec.indexOf('(');
    return (open === -1 ? spec : spec.slice(0, open)).trim();
  });
  const unknown = names.filter(
    (name) =>
      name !== '*' && !name.startsWith('mcp__') && KNOWN_TOOLS.get(name.toLowerCase()) !== name,
  );
  const misCased = unknown.filter((name) => KNOWN_TOOLS.has(name.toLowerCase()));
  for (const name of misCased) {
    notes.push(
      `\`${field}\` names ${quote(name)}, which is no tool: tool names are case-sensitive, so it ${field === 'tools' ? 'allows' : 'removes'} nothing (as in Claude Code); write ${quote(KNOWN_TOOLS.get(name.toLowerCase()) ?? name)}`,
    );
  }
  if (
    field === 'tools' &&
    names.length > 0 &&
    unknown.length === names.length &&
    misCased.length === 0
  ) {
    notes.push(
      `none of the names in \`tools\` (${truncateForDiagnostic(names.join(', '))}) is a known tool, so unless the session adds tools by those names the agent gets none; list tool names such as Read, Grep, Bash`,
    );
  }
}
