// The public API of @delegate/runtime, as its README documents it. Everything else is in
// `@delegate/runtime/internal`, which may change in any release.
export { DelegateSession } from './session/session.js';
export type { ForkAfterTurnOptions, SendOptions, SendResult } from './session/session.js';
export { MAIN_AGENT_ID } from './usage/usage-ledger.js';
export type { AgentBudget, AgentUsageNode } from './usage/usage-ledger.js';
export {
  DEFAULT_MAX_CONSECUTIVE_STALLS,
  DEFAULT_STREAM_IDLE_TIMEOUT_MS,
} from './query/stream-response.js';
export type {
  CacheDiagnosisEntry,
  DelegateSessionOptions,
  McpSource,
  PermissionRuleInput,
} from './session/session-options.js';
export type { MainAgentToolLists } from './session/main-agent-tools.js';
export type { ResumeAgentOptions } from './lifecycle/resume-agent.js';
export {
  IN_FLIGHT_AGENT_CALL_TEXT,
  IN_FLIGHT_CALL_TEXT,
} from './lifecycle/settle-in-flight-calls.js';
export type { InFlightToolCalls, SettledToolCalls } from './lifecycle/settle-in-flight-calls.js';
export { query } from './query/query.js';
export { DEFAULT_MAX_TOOL_RESULT_CHARS, INTERRUPT_GRACE_MS } from './query/run-tools.js';
export type {
  QueryEvent,
  QueryOutcome,
  QueryParams,
  RequestStartMessage,
  StreamEventMessage,
} from './query/query.js';
export { runForkedAgent } from './forked-agent/run-forked-agent.js';
export type {
  ForkedAgentCompletion,
  ForkedAgentParams,
  ForkedAgentResult,
} from './forked-agent/run-forked-agent.js';
export { EventBus } from './session/event-bus.js';
export type { EventBusOptions } from './session/event-bus.js';
export { TaskRegistry } from './tasks/task-registry.js';
export type { TaskOutcome, TaskPatch } from './tasks/task-registry.js';
export { TranscriptStore } from './transcripts/transcript-store.js';
export type { TranscriptEntry, TranscriptWriteFailure } from './transcripts/transcript-store.js';
export type {
  EndedTaskStatus,
  QueuedNotification,
  TaskSnapshot,
} from './transcripts/queued-notification.js';
export { readTranscript } from './transcripts/read-transcript.js';
export type { ReadTranscriptOptions } from './transcripts/read-transcript.js';
export {
  DEFAULT_MAIN_MODEL,
  DEFAULT_SUBAGENT_MODEL,
  MODEL_ALIASES,
  createApiClient,
  resolveModelAlias,
} from './session/model-config.js';
export type { ApiClientOptions } from './session/model-config.js';
export { checkApiBaseUrl } from './session/check-api-base-url.js';
export { CREDENTIAL_VARIABLES, withoutCredentials } from './session/shell-environment.js';
export { RUNNABLE_HOOKS_HINT, splitToolHooks } from './hooks/agent-hooks.js';
export {
  MIN_CUT_FRAGMENT_LENGTH,
  MIN_SECRET_LENGTH,
  REDACTED,
  secretRedactor,
} from './util/redact-secrets.js';
export { createAgentTool } from './agent-tool/agent-tool.js';
export type {
  AgentToolOutput,
  AgentToolProgress,
  CompletedAgentOutput,
  LaunchedAgentOutput,
} from './agent-tool/agent-tool-output.js';
export type { AgentToolResult } from './agent-tool/finalize-agent-result.js';
export { createTaskOutputTool, createTaskStopTool } from './tasks/task-tools.js';
export { createSendMessageTool } from './tasks/send-message-tool.js';
export { formatTaskNotification, parseTaskNotificationHeaders } from './tasks/task-notification.js';
export type { TaskNotification, TaskNotificationHeader } from './tasks/task-notification.js';
export { parseLaunchedAgentResult } from './agent-tool/agent-tool-output.js';
export type { BackgroundLaunch, LostAgentOutcome, LostAgentReport } from './session/lost-agents.js';
export { createCanUseTool } from './permissions.js';
export type { AskHandler } from './permissions.js';
