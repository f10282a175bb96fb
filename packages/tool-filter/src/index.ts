export {
  DEFAULT_ALL_AGENT_DISALLOWED_TOOLS,
  DEFAULT_ASYNC_AGENT_ALLOWED_TOOLS,
  DEFAULT_CUSTOM_AGENT_DISALLOWED_TOOLS,
  DEFAULT_IN_PROCESS_TEAMMATE_ALLOWED_TOOLS,
} from './default-tool-sets.js';
export { resolveToolFilterPolicy } from './tool-filter-policy.js';
export type {
  ResolvedToolFilterPolicy,
  ToolFilterPolicy,
  ToolNameList,
} from './tool-filter-policy.js';
export {
  MCP_TOOL_PREFIX,
  disallowedNameRemoves,
  isAgentTool,
  isAgentToolName,
  isMcpTool,
  isMcpToolName,
  toolExemptFrom,
  toolInNameSet,
  toolMatchesSpecName,
} from './tool-name-matching.js';
export type { FilterableTool } from './tool-name-matching.js';
export { filterToolsForAgent } from './filter-tools-for-agent.js';
export type { FilterToolsForAgentOptions } from './filter-tools-for-agent.js';
export {
  AGENT_TEAMS_ENV_VAR,
  isAgentSwarmsEnabled,
  isEnvTruthy,
} from './is-agent-swarms-enabled.js';
export type { AgentSwarmsGateOptions } from './is-agent-swarms-enabled.js';
export {
  permissionRuleValueFromString,
  unescapeRuleContent,
} from './permission-rule-value-from-string.js';
export {
  escapeRuleContent,
  permissionRuleValueToString,
} from './permission-rule-value-to-string.js';
export { resolveAgentTools } from './resolve-agent-tools.js';
export type {
  AgentToolFields,
  ResolveAgentToolsOptions,
  ResolvedAgentTools,
} from './resolve-agent-tools.js';
export { getDenyRuleForAgent } from './get-deny-rule-for-agent.js';
export type { DenyRulesContext } from './get-deny-rule-for-agent.js';
export { filterDeniedAgents } from './filter-denied-agents.js';
export { formatAgentDeniedMessage } from './format-agent-denied-message.js';
export { createAgentDeniedError } from './create-agent-denied-error.js';
export { mcpServersWithTools } from './mcp-servers-with-tools.js';
export { hasRequiredMcpServers, missingMcpServers } from './has-required-mcp-servers.js';
export type { McpRequirementFields } from './has-required-mcp-servers.js';
export { filterAgentsByMcpRequirements } from './filter-agents-by-mcp-requirements.js';
