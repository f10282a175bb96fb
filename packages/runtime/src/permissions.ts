import { basename } from 'node:path';
import type {
  CanUseTool,
  PermissionDecision,
  PermissionMode,
  PermissionRule,
  Tool,
  ToolUseContext,
} from '@delegate/core';
import { DelegateError, TOOL_NAMES, toolMatchesName, toolMatchesRuleName } from '@delegate/core';
import type * as Tools from '@delegate/tools';

const FILE_EDIT_TOOLS: readonly string[] = [
  TOOL_NAMES.write,
  TOOL_NAMES.edit,
  TOOL_NAMES.notebookEdit,
];

// Loaded on the first Bash call, not at import: importing the runtime stays light.
let shellTools: typeof Tools | undefined;

/**
 * Loads what Bash rules need, once: the shell analysis of `@delegate/tools` and its bash
 * parser. `decideByRules` needs it for a call with a `command`; `createCanUseTool` and the
 * session's ask rules call it themselves.
 */
export async function prepareRuleChecks(): Promise<void> {
  shellTools ??= await import('@delegate/tools');
  await shellTools.loadShellParser();
}

/** True when the call carries a shell command, so its rules need `prepareRuleChecks()`. */
export function needsShellAnalysis(input: unknown): boolean {
  return commandOf(input) !== undefined;
}

function shell(): typeof Tools {
  if (shellTools === undefined || !shellTools.isShellParserLoaded()) {
    throw new DelegateError(
      'TOOL_FAILED',
      'Bash rules need the bash parser: call `await prepareRuleChecks()` before `decideByRules` for a call with a command.',
    );
  }
  return shellTools;
}

/** Asks a person (or a parent agent) about a call; resolves to their answer. */
export type AskHandler = (request: {
  tool: Tool;
  input: unknown;
  message: string;
  context: ToolUseContext;
}) => Promise<PermissionDecision>;

/**
 * The commands a shell line runs, as `program arg…` text with the program reduced to its
 * base name (`/bin/rm -rf x` → `rm -rf x`), found with the bash parser of
 * `@delegate/tools` (so also after wrappers such as `sudo` and inside `bash -c`, `$(…)`,
 * pipelines and chains). `opaque` is true when the line substitutes, redirects, or has a
 * part the parser cannot see through. The parser must be loaded (`loadShellParser()`).
 *
 * @deprecated Use `analyzeShellCommand` from `@delegate/tools`, which keeps each word.
 */
export function splitShellCommand(command: string): { parts: string[]; opaque: boolean } {
  const analysis = shell().analyzeShellCommandSync(command);
  const parts = analysis.commands.map((each) =>
    [basename(each.program), ...each.args.map((word) => word.value ?? word.text)].join(' '),
  );
  const substitutes =
    analysis.commands.some((each) => each.origin !== 'line') || /\$\(|`/.test(command);
  const redirects = analysis.writtenFiles.length > 0 || analysis.readFiles.length > 0;
  return { parts, opaque: analysis.opaque || substitutes || redirects };
}

function commandOf(input: unknown): string | undefined {
  const record =
    typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  const command = record['command'];
  return typeof command === 'string' ? command : undefined;
}

function isWholeToolRule(rule: PermissionRule): boolean {
  const content = rule.ruleValue.ruleContent;
  return content === undefined || content === '' || content === '*';
}

/** `prefix:*` matches the prefix alone or followed by arguments; anything else matches exactly (file paths). */
function pathMatches(content: string, value: string): boolean {
  if (!content.endsWith(':*')) return value === content;
  const prefix = content.slice(0, -2);
  return value === prefix || value.startsWith(`${prefix} `);
}

/**
 * Does a deny rule match the call? The rule's tool name names the tool as `disallowedTools`
 * names do (`toolMatchesRuleName`: its name, an alias, or its whole MCP server as
 * `mcp__server` or `mcp__server__*`). A rule about a command matches when any command the
 * line would run matches it (after wrappers, inside `bash -c`, `$(…)`, …), and whenever
 * the line has a part the parser cannot see through.
 */
function denyRuleMatches(rule: PermissionRule, tool: Tool, input: unknown): boolean {
  if (!toolMatchesRuleName(tool, rule.ruleValue.toolName)) return false;
  if (isWholeToolRule(rule)) return true;
  const content = rule.ruleValue.ruleContent ?? '';
  const command = commandOf(input);
  if (command !== undefined) {
    const tools = shell();
    return tools.deniedByShellRule({
      analysis: tools.analyzeShellCommandSync(command),
      ruleContent: content,
    });
  }
  const path = (input as Record<string, unknown> | null)?.['file_path'];
  return typeof path === 'string' && pathMatches(content, path);
}

/**
 * Do the allow rules cover the call? Rules name tools as deny rules do (a whole MCP server
 * too). A command line is allowed only when it is fully
 * seen through, writes no file by redirection, and each of its commands matches one of
 * the rules exactly (see `allowedByShellRules`).
 */
function allowRulesMatch(rules: readonly PermissionRule[], tool: Tool, input: unknown): boolean {
  const forTool = rules.filter((rule) => toolMatchesRuleName(tool, rule.ruleValue.toolName));
  if (forTool.some(isWholeToolRule)) return true;
  const contents = forTool.map((rule) => rule.ruleValue.ruleContent ?? '');
  if (contents.length === 0) return false;
  const command = commandOf(input);
  if (command !== undefined) {
    const tools = shell();
    return tools.allowedByShellRules({
      analysis: tools.analyzeShellCommandSync(command),
      ruleContents: contents,
    });
  }
  const path = (input as Record<string, unknown> | null)?.['file_path'];
  return typeof path === 'string' && contents.some((content) => pathMatches(content, path));
}

function describeRule(rule: PermissionRule): string {
  const content = rule.ruleValue.ruleContent;
  return `${rule.ruleValue.toolName}${content ? `(${content})` : ''}`;
}

/**
 * Whether a read-only Bash line may run without asking: only when every path it names
 * resolves inside the context's allowed directories (`assessReadOnlyCommand`). Without a
 * context the paths cannot be checked, so it may not.
 */
function readOnlyBashDecision(
  command: string,
  context: ToolUseContext | undefined,
): PermissionDecision | undefined {
  if (context === undefined) return undefined;
  const tools = shell();
  const assessment = tools.assessReadOnlyCommand({
    command,
    cwd: context.cwd,
    roots: tools.getAllowedRoots(context),
  });
  if (assessment.insideRoots) return { behavior: 'allow' };
  if (!assessment.readOnly) return undefined;
  return {
    behavior: 'ask',
    message: `Bash needs approval: the command only reads, but ${assessment.reason ?? 'it reads outside the allowed directories'}.`,
  };
}

/**
 * The permission decision of a mode and rule set, before anyone is asked: deny rules
 * first, then allow rules, then the mode (`bypassPermissions` allows everything,
 * `acceptEdits` allows reads and file edits, `plan` and `default` allow reads). A Bash
 * line counts as a read only when it is read-only and every path it names lies inside
 * `context`'s allowed directories; without `context` no Bash line does.
 *
 * Bash calls need the shell analysis: call `await prepareRuleChecks()` first;
 * `createCanUseTool` does. Without it a Bash call throws a DelegateError.
 */
export function decideByRules(options: {
  tool: Tool;
  input: unknown;
  mode: PermissionMode;
  allowRules?: readonly PermissionRule[];
  denyRules?: readonly PermissionRule[];
  /** The calling agent's context: its cwd and allowed directories bound read-only Bash lines. */
  context?: ToolUseContext;
}): PermissionDecision {
  const { tool, input, mode } = options;
  const deny = options.denyRules?.find((rule) => denyRuleMatches(rule, tool, input));
  if (deny) {
    return {
      behavior: 'deny',
      message: `${tool.name} is denied by the rule ${describeRule(deny)} from ${deny.source}.`,
    };
  }
  if (options.allowRules !== undefined && allowRulesMatch(options.allowRules, tool, input)) {
    return { behavior: 'allow' };
  }
  if (mode === 'bypassPermissions') return { behavior: 'allow' };
  const command = commandOf(input);
  if (toolMatchesName(tool, TOOL_NAMES.bash) && command !== undefined) {
    const readOnly = readOnlyBashDecision(command, options.context);
    if (readOnly !== undefined) return readOnly;
  } else if (tool.isReadOnly(input)) {
    return { behavior: 'allow' };
  }
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
    if (needsShellAnalysis(input)) await prepareRuleChecks();
    const decision = decideByRules({
      tool,
      input,
      mode: permission.mode,
      allowRules: permission.allowRules,
      denyRules: permission.denyRules,
      context,
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
