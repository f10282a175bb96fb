export {
  DEFAULT_MAIN_MODEL,
  DEFAULT_SUBAGENT_MODEL,
  MODEL_ALIASES,
  createApiClient,
  resolveAgentModel,
  resolveModelAlias,
} from './model-config.js';
export type { ApiClientOptions } from './model-config.js';
export {
  enhanceSystemPromptWithEnvDetails,
  getEnvironmentDetails,
  getGitBranch,
  getMainSystemPrompt,
  isInsideGitRepo,
  renderEnvironmentDetails,
} from './system-prompt.js';
export type { EnvironmentDetails } from './system-prompt.js';
export {
  MISSING_TOOL_RESULT_TEXT,
  ensureToolResultPairing,
  toWireMessages,
} from './normalize-messages.js';
export type { WireMessage } from './normalize-messages.js';
export { DEFAULT_MAX_OUTPUT_TOKENS, buildMessagesRequest, renderContext } from './api-request.js';
export type { ApiEffort, ApiToolDefinition, BuildRequestOptions } from './api-request.js';
export { createCanUseTool, decideByRules, splitShellCommand } from './permissions.js';
export type { AskHandler } from './permissions.js';
export { query, renderUserContext } from './query.js';
export type {
  QueryEvent,
  QueryOutcome,
  QueryParams,
  RequestStartMessage,
  StreamEventMessage,
} from './query.js';
export { INTERRUPTED_TOOL_RESULT, runToolUses } from './run-tools.js';
export type { ToolRunUpdate } from './run-tools.js';
export { toolsToApiDefinitions } from './tool-schemas.js';
export { runForkedAgent } from './forked-agent.js';
export type {
  ForkedAgentCompletion,
  ForkedAgentParams,
  ForkedAgentResult,
} from './forked-agent.js';
export { TranscriptStore, readTranscript } from './transcript.js';
export type { TranscriptEntry } from './transcript.js';
export { EventBus } from './event-bus.js';
export {
  AgentToolResultSchema,
  countToolUses,
  finalizeAgentTool,
  sumUsage,
} from './finalize-agent-result.js';
export type { AgentToolResult } from './finalize-agent-result.js';
export { formatTaskNotification, parseTaskNotificationIds } from './task-notification.js';
export type { TaskNotification } from './task-notification.js';
export { TaskRegistry } from './task-registry.js';
export {
  cleanupAgentWorktree,
  createAgentWorktree,
  defaultWorktreeRoot,
  hasWorktreeChanges,
  removeAgentWorktree,
} from './worktree.js';
export type { AgentWorktree } from './worktree.js';
export {
  buildAgentListReminder,
  formatAgentLine,
  getAgentToolPrompt,
} from './agent-tool-prompt.js';
export { AgentToolInput } from './agent-tool-input.js';
export {
  FORK_QUERY_SOURCE,
  createAgentTool,
  formatAgentToolResult,
  resolveAgentPermissionMode,
  visibleAgents,
} from './agent-tool.js';
export type { AgentToolOutput } from './agent-tool.js';
export { continueAgent, startAgentRun } from './agent-lifecycle.js';
export { createTaskOutputTool, createTaskStopTool, describeTask } from './task-tools.js';
export { createSendMessageTool } from './send-message-tool.js';
export { getRenderedRequestParts } from './rendered-request.js';
export { createAgentRecord, parseAgentSpec } from './agent-record.js';
export type { AgentSpec } from './agent-record.js';
export type { RenderedRequestParts } from './rendered-request.js';
export type { AgentRecord, AgentRuntime, AgentRuntimeOptions } from './agent-runtime.js';
export { DelegateSession } from './session.js';
export type { DelegateSessionOptions, McpSource } from './session.js';
