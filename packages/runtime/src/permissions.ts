import { basename } from 'node:path';
import type {
  CanUseTool,
  PermissionDecision,
  PermissionMode,
  PermissionRule,
  Tool,
  ToolUseContext,
} from '@delegate/core';
import { TOOL_NAMES, toolMatchesName } from '@delegate/core';

const FILE_EDIT_TOOLS: readonly string[] = [
  TOOL_NAMES.write,
  TOOL_NAMES.edit,
  TOOL_NAMES.notebookEdit,
];

/** Asks a person (or a parent agent) about a call; resolves to their answer. */
export type AskHandler = (request: {
  tool: Tool;
  input: unknown;
  message: string;
  context: ToolUseContext;
}) => Promise<PermissionDecision>;

/**
 * Splits a shell command into the commands it runs (on `;`, `&&`, `||`, `|`, `&` and new
 * lines), with the program of each reduced to its base name (`/bin/rm` → `rm`). `opaque`
 * is true when the command substitutes or redirects, which a prefix rule cannot judge.
 */
export function splitShellCommand(command: string): { parts: string[]; opaque: boolean } {
  const opaque = /\$\(|`|[<>]/.test(command);
  const parts = command
    .split(/&&|\|\||[;|&\n]/)
    .map((part) => part.trim().replace(/\s+/g, ' '))
    .filter((part) => part.length > 0)
    .map((part) => {
      const [program = '', ...rest] = part.split(' ');
      return [basename(program), ...rest].join(' ');
    });
  return { parts, opaque };
}

/** `prefix:*` matches the prefix alone or followed by arguments; anything else matches exactly. */
function contentMatches(content: string, value: string): boolean {
  if (!content.endsWith(':*')) return value === content;
  const prefix = content.slice(0, -2);
  return value === prefix || value.startsWith(`${prefix} `);
}

function ruleMatches(
  rule: PermissionRule,
  tool: Tool,
  input: unknown,
  behavior: 'allow' | 'deny',
): boolean {
  if (!toolMatchesName(tool, rule.ruleValue.toolName)) return false;
  const content = rule.ruleValue.ruleContent;
  if (content === undefined || content === '' || content === '*') return true;
  const record =
    typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  const command = record['command'];
  if (typeof command === 'string') {
    // A rule about one command must hold for every command a chained line runs: a deny
    // rule matches when any part matches, an allow rule only when all parts do.
    const { parts, opaque } = splitShellCommand(command);
    if (behavior === 'deny') return parts.some((part) => contentMatches(content, part));
    return !opaque && parts.length > 0 && parts.every((part) => contentMatches(content, part));
  }
  const path = record['file_path'];
  if (typeof path !== 'string') return false;
  return contentMatches(content, path);
}

/**
 * The permission decision of a mode and rule set, before anyone is asked: deny rules
 * first, then allow rules, then the mode (`bypassPermissions` allows everything,
 * `acceptEdits` allows reads and file edits, `plan` and `default` allow reads).
 */
export function decideByRules(options: {
  tool: Tool;
  input: unknown;
  mode: PermissionMode;
  allowRules?: readonly PermissionRule[];
  denyRules?: readonly PermissionRule[];
}): PermissionDecision {
  const { tool, input, mode } = options;
  const deny = options.denyRules?.find((rule) => ruleMatches(rule, tool, input, 'deny'));
  if (deny) {
    return {
      behavior: 'deny',
      message: `${tool.name} is denied by the rule ${deny.ruleValue.toolName}${deny.ruleValue.ruleContent ? `(${deny.ruleValue.ruleContent})` : ''} from ${deny.source}.`,
    };
  }
  if (options.allowRules?.some((rule) => ruleMatches(rule, tool, input, 'allow')))
    return { behavior: 'allow' };
  if (mode === 'bypassPermissions') return { behavior: 'allow' };
  if (tool.isReadOnly(input)) return { behavior: 'allow' };
  if (mode === 'acceptEdits' && FILE_EDIT_TOOLS.some((name) => toolMatchesName(tool, name))) {
    return { behavior: 'allow' };
  }
  if (mode === 'plan') {
    return {
      behavior: 'deny',
      message: `${tool.name} changes things, and plan mode only reads. Finish the plan first.`,
    };
  }
  return { behavior: 'ask', message: `${tool.name} needs approval.` };
}

/**
 * Creates a `canUseTool` for a permission mode. Questions go to `ask`; when nobody can
 * answer (no handler, `dontAsk`, or `shouldAvoidPermissionPrompts` — background agents)
 * a question becomes a denial. In `bubble` mode questions go to the parent's handler.
 */
export function createCanUseTool(
  options: {
    ask?: AskHandler;
    parentCanUseTool?: CanUseTool;
  } = {},
): CanUseTool {
  return async (tool, input, context, assistantMessage, toolUseId) => {
    const permission = context.getAppState().toolPermissionContext;
    if (tool.checkPermissions) {
      const own = await tool.checkPermissions(input, context);
      if (own.behavior === 'deny') return own;
    }
    const decision = decideByRules({
      tool,
      input,
      mode: permission.mode,
      allowRules: permission.allowRules,
      denyRules: permission.denyRules,
    });
    if (decision.behavior !== 'ask') return decision;
    if (permission.mode === 'bubble' && options.parentCanUseTool) {
      return options.parentCanUseTool(tool, input, context, assistantMessage, toolUseId);
    }
    if (permission.mode === 'dontAsk' || permission.shouldAvoidPermissionPrompts || !options.ask) {
      return {
        behavior: 'deny',
        message: `${tool.name} needs approval and no one can be asked here (permission mode ${permission.mode}). Use a tool that does not need approval, or report what you would have done.`,
      };
    }
    return options.ask({ tool, input, message: decision.message, context });
  };
}
