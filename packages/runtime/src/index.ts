export {
  DEFAULT_MAIN_MODEL,
  DEFAULT_SUBAGENT_MODEL,
  MODEL_ALIASES,
  createApiClient,
  resolveAgentModel,
  resolveModelAlias,
} from './session/model-config.js';
export type { ApiClientOptions } from './session/model-config.js';
export {
  enhanceSystemPromptWithEnvDetails,
  getEnvironmentDetails,
  getGitBranch,
  getMainSystemPrompt,
  isInsideGitRepo,
  renderEnvironmentDetails,
} from './session/system-prompt.js';
export type { EnvironmentDetails } from './session/system-prompt.js';
export {
  MISSING_TOOL_RESULT_TEXT,
  ensureToolResultPairing,
  toWireMessages,
} from './query/normalize-messages.js';
export type { WireMessage } from './query/normalize-messages.js';
export {
  DEFAULT_MAX_OUTPUT_TOKENS,
  buildMessagesRequest,
  renderContext,
} from './query/build-messages-request.js';
export type {
  ApiEffort,
  ApiToolDefinition,
  BuildRequestOptions,
} from './query/build-messages-request.js';
export { createCanUseTool, decideByRules, splitShellCommand } from './permissions.js';
export type { AskHandler } from './permissions.js';
export { query, renderUserContext } from './query/query.js';
export type {
  QueryEvent,
  QueryOutcome,
  QueryParams,
  RequestStartMessage,
  StreamEventMessage,
} from './query/query.js';
export { INTERRUPTED_TOOL_RESULT, runToolUses } from './query/run-tools.js';
export type { ToolRunUpdate } from './query/run-tools.js';
export { toolsToApiDefinitions } from './query/tool-schemas.js';
export { runForkedAgent } from './forked-agent/run-forked-agent.js';
export type {
  ForkedAgentCompletion,
  ForkedAgentParams,
  ForkedAgentResult,
} from './forked-agent/run-forked-agent.js';
export { TranscriptStore, readTranscript } from './transcripts/transcript-store.js';
export type { TranscriptEntry } from './transcripts/transcript-store.js';
export { EventBus } from './session/event-bus.js';
export {
  AgentToolResultSchema,
  countToolUses,
  finalizeAgentTool,
  sumUsage,
} from './agent-tool/finalize-agent-result.js';
export type { AgentToolResult } from './agent-tool/finalize-agent-result.js';
export { formatTaskNotification, parseTaskNotificationIds } from './tasks/task-notification.js';
export type { TaskNotification } from './tasks/task-notification.js';
export { TaskRegistry } from './tasks/task-registry.js';
export {
  cleanupAgentWorktree,
  createAgentWorktree,
  defaultWorktreeRoot,
  hasWorktreeChanges,
  removeAgentWorktree,
} from './worktree/worktree.js';
export type { AgentWorktree } from './worktree/worktree.js';
export {
  buildAgentListReminder,
  formatAgentLine,
  getAgentToolPrompt,
} from './agent-tool/agent-tool-prompt.js';
export { AgentToolInput } from './agent-tool/agent-tool-input.js';
export {
  FORK_QUERY_SOURCE,
  createAgentTool,
  formatAgentToolResult,
  resolveAgentPermissionMode,
  visibleAgents,
} from './agent-tool/agent-tool.js';
export type { AgentToolOutput } from './agent-tool/agent-tool.js';
export { continueAgent, startAgentRun } from './lifecycle/agent-lifecycle.js';
export { createTaskOutputTool, createTaskStopTool, describeTask } from './tasks/task-tools.js';
export { createSendMessageTool } from './tasks/send-message-tool.js';
export { getRenderedRequestParts } from './query/rendered-request.js';
export { createAgentRecord, parseAgentSpec } from './lifecycle/agent-record.js';
export type { AgentSpec } from './lifecycle/agent-record.js';
export type { RenderedRequestParts } from './query/rendered-request.js';
export type { AgentRecord, AgentRuntime, AgentRuntimeOptions } from './session/agent-runtime.js';
export { DelegateSession } from './session/session.js';
export type { DelegateSessionOptions, McpSource } from './session/session.js';
