export {
  ApiMessage,
  CacheControl,
  ContentBlock,
  RedactedThinkingBlock,
  SystemBlock,
  TextBlock,
  ThinkingBlock,
  ToolResultBlock,
  ToolUseBlock,
} from './content.js';
export {
  AssistantMessage,
  Message,
  ProgressMessage,
  SystemMessage,
  UserMessage,
  createSystemMessage,
  createUserMessage,
  getLastAssistantMessage,
  getText,
  getTextBlocks,
} from './message.js';
export {
  Usage,
  addUsage,
  cacheHitRate,
  completeUsage,
  emptyUsage,
  totalInputTokens,
  totalTokens,
} from './usage.js';
export type { CompleteUsage } from './usage.js';
export {
  DEFAULT_PRICE_TABLE,
  ModelPrice,
  PRICE_TABLE_DATE,
  PriceTable,
  costOfUsage,
  findModelPrice,
} from './pricing.js';
export {
  PermissionMode,
  PermissionRule,
  PermissionRuleValue,
  SettingSource,
  ToolPermissionContext,
} from './permission.js';
export type { PermissionDecision } from './permission.js';
export { TOOL_NAMES, TOOL_NAME_PATTERN, findToolByName, toolMatchesName } from './tool.js';
export {
  PERMISSION_RULE_TOOL_NAME_PATTERN,
  permissionRuleProblem,
  ruleNameMatchesToolName,
  toolMatchesRuleName,
} from './rule-name-matching.js';
export { mcpToolNamePrefix } from './mcp-tool-name-prefix.js';
export type { CanUseTool, Tool, ToolCallExtras, ToolResult } from './tool.js';
export type {
  AppState,
  FileState,
  FileStateCache,
  McpClientState,
  QueryTracking,
  SetAppState,
  TaskState,
  TaskStatus,
  ThinkingConfig,
  ToolUseContext,
  ToolUseOptions,
} from './tool-use-context.js';
export {
  AGENT_SOURCE_PRECEDENCE,
  AgentColor,
  AgentDefinition,
  AgentEffort,
  AgentMemoryScope,
  AgentSource,
} from './agent-definition.js';
export type { AgentDefinitionsResult, SystemPromptParams } from './agent-definition.js';
export {
  AgentBackgroundedEvent,
  AgentBackgroundHintEvent,
  AgentCacheEvictableEvent,
  AgentCompletedEvent,
  AgentEvent,
  AgentFailedEvent,
  AgentMessageEvent,
  AgentNotificationEvent,
  AgentProgressEvent,
  AgentRunMode,
  AgentStartedEvent,
  AgentToolUseEvent,
  AgentCostEvent,
  AgentWarningEvent,
  BudgetRemaining,
} from './events.js';
export type { AgentEventType } from './events.js';
export { DelegateError, DelegateErrorCode, errorMessage, isAbortError } from './errors.js';
export { type ClosestKeyOptions, closestKey, editDistance } from './closest-key.js';
export { createAgentId, createTaskId, createUuid } from './ids.js';
export { MAX_TIMER_MS, timerDelay } from './timer-delay.js';
export {
  checkArray,
  checkObject,
  checkOptionalArray,
  checkOptionalObject,
  checkString,
  describeValue,
  invalidArgument,
  isObject,
} from './invalid-argument.js';
