import { type PermissionRuleValue, checkString } from '@delegate/core';

/** Index of the first `(` not preceded by an odd number of backslashes, or -1. */
function firstUnescapedOpen(text: string): number {
  let backslashes = 0;
  for (let index = 0; index < text.length; index++) {
    const character = text[index];
    if (character === '\\') {
      backslashes++;
      continue;
    }
    if (character === '(' && backslashes % 2 === 0) return index;
    backslashes = 0;
  }
  return -1;
}

/** True when the last character is a `)` not escaped by a backslash. */
function endsWithUnescapedClose(text: string): boolean {
  if (!text.endsWith(')')) return false;
  let backslashes = 0;
  for (let index = text.length - 2; index >= 0 && text[index] === '\\'; index--) backslashes++;
  return backslashes % 2 === 0;
}

/** Turns `\(`, `\)` and `\\` back into `(`, `)` and `\`; any other backslash stays. */
export function unescapeRuleContent(content: string): string {
  checkString('unescapeRuleContent()', 'content', content);
  return content.replace(/\\([()\\])/g, '$1');
}

/**
 * Parses a rule spec such as `Bash`, `Bash(git status)` or `Agent(worker, researcher)`.
 * The spec and the tool name are trimmed; the content is unescaped (`\(` → `(`).
 * `Tool()`, `Tool( )` and `Tool(*)` mean the whole tool (no `ruleContent`). Malformed
 * specs never throw: without a tool name before `(` or without a closing `)` at the end,
 * the whole trimmed spec becomes the tool name (so it matches no real tool).
 */
export function permissionRuleValueFromString(spec: string): PermissionRuleValue {
  checkString('permissionRuleValueFromString()', 'spec', spec);
  const trimmed = spec.trim();
  const open = firstUnescapedOpen(trimmed);
  if (open === -1) return { toolName: trimmed };
  const toolName = trimmed.slice(0, open).trim();
  if (toolName === '' || !endsWithUnescapedClose(trimmed)) {
    return { toolName: trimmed };
  }
  const rawContent = trimmed.slice(open + 1, -1);
  const ruleContent = unescapeRuleContent(rawContent);
  const meaningful = ruleContent.trim();
  if (meaningful === '' || meaningful === '*') return { toolName };
  return { toolName, ruleContent };
}
