import {
  TOOL_NAMES,
  type PermissionMode,
  checkArray,
  checkObject,
  checkOptionalObject,
} from '@delegate/core';
import { checkTool } from './check-argument.js';
import { resolveToolFilterPolicy, type ToolFilterPolicy } from './tool-filter-policy.js';
import {
  isMcpTool,
  toolExemptFrom,
  toolInNameSet,
  type FilterableTool,
} from './tool-name-matching.js';

const EXIT_PLAN_MODE_ONLY: ReadonlySet<string> = new Set([TOOL_NAMES.exitPlanMode]);

/** What `filterToolsForAgent` needs to know about the agent. */
export type FilterToolsForAgentOptions<T extends FilterableTool> = {
  /** The tool pool assembled for the agent. */
  tools: readonly T[];
  /** True for built-in agents, which skip the custom-agent deny set. */
  isBuiltIn: boolean;
  /** True for background agents, which keep only the async allow-list. */
  isAsync?: boolean | undefined;
  /** The agent's permission mode; `plan` keeps ExitPlanMode. */
  permissionMode?: PermissionMode | undefined;
  /** Replacement sets and teammate facts. */
  policy?: ToolFilterPolicy | undefined;
};

/**
 * Removes the tools a sub-agent may not use, keeping input order. Gates, in order:
 * MCP tools (see `isMcpTool`) pass; ExitPlanMode passes in `plan` mode; an in-process
 * teammate (with the agent-teams gate on) keeps its teammate set; the all-agents deny
 * set is removed; the custom-agents deny set is removed for agents that are not built
 * in; async agents keep only the async allow-list. Before every gate, a tool whose
 * `requiresUserInteraction()` is true is removed for async agents. The plan-mode and
 * teammate passes never apply to a tool that a deny set names under another of its
 * names (an alias).
 */
export function filterToolsForAgent<T extends FilterableTool>(
  options: FilterToolsForAgentOptions<T>,
): T[] {
  const where = 'filterToolsForAgent()';
  checkObject(where, 'options', options);
  checkArray(where, 'options.tools', options.tools);
  checkOptionalObject(where, 'options.policy', options.policy);
  const { tools, isBuiltIn, permissionMode } = options;
  const isAsync = options.isAsync ?? false;
  const policy = resolveToolFilterPolicy(options.policy);
  const denySets = isBuiltIn
    ? [policy.allAgentDisallowed]
    : [policy.allAgentDisallowed, policy.customAgentDisallowed];
  return tools.filter((tool, index) => {
    checkTool(where, `options.tools[${index}]`, tool);
    // Nobody can answer a question for a background agent, so this wins over every pass below.
    if (isAsync && tool.requiresUserInteraction?.() === true) return false;
    // MCP tools are governed by their server, not by these sets.
    if (isMcpTool(tool)) return true;
    // An agent in plan mode can only leave it through this tool.
    if (permissionMode === 'plan' && toolExemptFrom(tool, EXIT_PLAN_MODE_ONLY, denySets)) {
      return true;
    }
    if (toolExemptFrom(tool, policy.teammateExempt, denySets)) return true;
    if (toolInNameSet(tool, policy.allAgentDisallowed)) return false;
    if (!isBuiltIn && toolInNameSet(tool, policy.customAgentDisallowed)) return false;
    if (isAsync && !toolInNameSet(tool, policy.asyncAllowed)) return false;
    return true;
  });
}
