import { type PermissionRuleValue, checkObject, checkString } from '@delegate/core';

/** Escapes `\`, `(` and `)` with a backslash so the content survives a parse. */
export function escapeRuleContent(content: string): string {
  checkString('escapeRuleContent()', 'content', content);
  return content.replace(/[()\\]/g, '\\$&');
}

/**
 * Writes a rule value back as a spec: `Tool` for a whole-tool rule, `Tool(content)`
 * otherwise, with parentheses and backslashes in the content escaped.
 */
export function permissionRuleValueToString(value: PermissionRuleValue): string {
  const where = 'permissionRuleValueToString()';
  checkObject(where, 'value', value);
  checkString(where, 'value.toolName', value.toolName);
  if (value.ruleContent !== undefined) checkString(where, 'value.ruleContent', value.ruleContent);
  if (value.ruleContent === undefined) return value.toolName;
  return `${value.toolName}(${escapeRuleContent(value.ruleContent)})`;
}
