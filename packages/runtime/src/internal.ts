// `@delegate/runtime/internal`: the runtime's building blocks, for tests, benchmarks and
// hosts that assemble their own loop. No stability promise: these change with the
// runtime's inside. The public API is `@delegate/runtime`.
export type { AgentRuntime, AgentRuntimeOptions } from './session/agent-runtime.js';
export { withAskRules } from './session/ask-rules.js';
export { DelegateSessionOptionsSchema, validateSessionOptions } from './session/session-options.js';
export type { ValidatedSessionOptions } from './session/session-options.js';
export {
  enhanceSystemPromptWithEnvDetails,
  getEnvironmentDetails,
  getGitBranch,
  getMainSystemPrompt,
  isInsideGitRepo,
  renderEnvironmentDetails,
} from './session/system-prompt.js';
export type { EnvironmentDetails } from './session/system-prompt.js';
export { resolveAgentModel } from './session/model-config.js';
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
export {
  MISSING_TOOL_RESULT_TEXT,
  ensureToolResultPairing,
  toWireMessages,
} from './query/normalize-messages.js';
export type { WireMessage } from './query/normalize-messages.js';
export { WireConversation } from './query/wire-conversation.js';
export { renderUserContext } from './query/user-context.js';
export {
  MAX_RETRY_AFTER_MS,
  isRetryableStreamError,
  normalizeApiError,
  parseRetryAfter,
  retryDelayMs,
} from './query/retry-policy.js';
export type { NormalizedApiError } from './query/retry-policy.js';
export { INTERRUPTED_TOOL_RESULT, runToolUses } from './query/run-tools.js';
export type { ToolCallHooks, ToolCallInfo, ToolRunUpdate } from './query/run-tools.js';
export { cachedInputSchema, toolsToApiDefinitions } from './query/tool-schemas.js';
export { getRenderedRequestParts } from './query/rendered-request.js';
export { redactValue } from './util/redact-secrets.js';
export type { RenderedRequestParts } from './query/rendered-request.js';
export { decideByRules, prepareRuleChecks } from './permissions.js';
export {
  AgentToolResultSchema,
  MAX_REPORT_CHARS,
  capReport,
  countToolUses,
  finalizeAgentTool,
  sumUsage,
} from './agent-tool/finalize-agent-result.js';
export { formatAgentToolResult } from './agent-tool/agent-tool-output.js';
export {
  buildAgentListReminder,
  formatAgentLine,
  getAgentToolPrompt,
} from './agent-tool/agent-tool-prompt.js';
export { AgentToolInput } from './agent-tool/agent-tool-input.js';
export { FORK_QUERY_SOURCE, visibleAgents } from './agent-tool/resolve-agent.js';
export {
  DEFAULT_SUBAGENT_PERMISSION_MODE,
  resolveAgentPermissionMode,
} from './agent-tool/resolve-permission-mode.js';
export { assembleWorkerTools } from './agent-tool/assemble-worker-tools.js';
export { allowMemoryWrites } from './agent-tool/agent-memory.js';
export { parseAgentHooks, hookMatches } from './hooks/agent-hooks.js';
export type { AgentToolHooks, CommandHook, HookMatcher } from './hooks/agent-hooks.js';
export { runCommandHook } from './hooks/run-command-hook.js';
export type { HookRunResult, RunCommandHookOptions } from './hooks/run-command-hook.js';
export { createToolCallHooks } from './hooks/create-tool-call-hooks.js';
export { continueAgent } from './lifecycle/continue-agent.js';
export { startAgentRun } from './lifecycle/start-agent-run.js';
export {
  findInFlightToolCalls,
  settleInFlightToolCalls,
} from './lifecycle/settle-in-flight-calls.js';
export type { SettleInFlightToolCallsOptions } from './lifecycle/settle-in-flight-calls.js';
export { createAgentRecord } from './lifecycle/agent-record.js';
export type { AgentRecord, AgentRecordStatus } from './lifecycle/agent-record.js';
export { AgentSpecSchema, parseAgentSpec } from './lifecycle/agent-spec.js';
export type { AgentSpec } from './lifecycle/agent-spec.js';
export { AgentDirectory, isCompacted } from './lifecycle/agent-directory.js';
export type { AgentEntry, CompactedAgent } from './lifecycle/agent-directory.js';
export { AbortHub } from './lifecycle/abort-hub.js';
export { parseTaskNotificationIds } from './tasks/task-notification.js';
export { describeTask } from './tasks/task-tools.js';
export {
  cleanupAgentWorktree,
  createAgentWorktree,
  defaultWorktreeRoot,
  hasWorktreeChanges,
  removeAgentWorktree,
} from './worktree/worktree.js';
export type { AgentWorktree } from './worktree/worktree.js';
export { agentWorktreeSlug, toPathSafeName } from './worktree/worktree-names.js';
export { delay } from './util/delay.js';
export { UsageLedger } from './usage/usage-ledger.js';
export type { BudgetShortfall, LedgerEntry } from './usage/usage-ledger.js';
export {
  budgetExceededError,
  createUsageGuard,
  isBudgetError,
  stopBudgetSubtree,
} from './usage/usage-guard.js';
export type { UsageGuard } from './usage/usage-guard.js';
export {
  QUEUED_NOTIFICATION_SUBTYPE,
  queuedNotificationEntry,
  restoreSessionTranscript,
} from './transcripts/queued-notification.js';
export type {
  QueuedNotificationEntry,
  RestoredSession,
} from './transcripts/queued-notification.js';
