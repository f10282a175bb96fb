import { escapeNotificationField } from '../tasks/task-notification.js';
import type { AgentToolResult } from './finalize-agent-result.js';

/** A finished run as the Agent tool (and SendMessage) returns it. */
export type CompletedAgentOutput = {
  /** Discriminator. */
  status: 'completed';
  /** Set when the run stopped early (failed or stopped): why. The report is then what it had. */
  partial?: string;
  /** The worktree, when it was kept because the agent changed something. */
  worktree?: { path: string; branch: string };
} & AgentToolResult;

/** A run that went on in the background. */
export type LaunchedAgentOutput = {
  /** Discriminator. */
  status: 'async_launched';
  /** Agent id (for SendMessage). */
  agentId: string;
  /** Task id (for TaskOutput and TaskStop). */
  taskId: string;
  /** Agent type. */
  agentType: string;
  /** Short description from the call. */
  description: string;
};

/** What the Agent tool returns. */
export type AgentToolOutput = CompletedAgentOutput | LaunchedAgentOutput;

function formatLaunched(output: LaunchedAgentOutput): string {
  return [
    // Escaped like a notification field: the description must not read as a notification.
    `Started ${escapeNotificationField(output.agentType)} agent "${escapeNotificationField(output.description)}" in the background.`,
    `agentId: ${output.agentId}`,
    `taskId: ${output.taskId}`,
    'You will receive a <task-notification> when it finishes; do not poll or sleep waiting for it. Use TaskOutput only if you have nothing else to do.',
  ].join('\n');
}

/**
 * Formats the tool result text the calling model sees. Agents of `oneShotAgentTypes`
 * (the built-in Explore and Plan) are never continued, so their report comes without the
 * agent id and usage trailer.
 */
export function formatAgentToolResult(
  output: AgentToolOutput,
  options: { oneShotAgentTypes: ReadonlySet<string> },
): string {
  if (output.status === 'async_launched') return formatLaunched(output);
  const report =
    output.content.map((block) => block.text).join('\n') || '(the agent returned no text)';
  const body = output.partial
    ? `The agent stopped early (${output.partial}). Its last report:\n${report}`
    : report;
  const worktree = output.worktree
    ? `\nworktreePath: ${output.worktree.path}\nworktreeBranch: ${output.worktree.branch}`
    : '';
  // One-shot built-ins are never continued, so their id and usage trailer would only cost tokens.
  if (options.oneShotAgentTypes.has(output.agentType) && !worktree) return body;
  return (
    `${body}${worktree}\n\nagentId: ${output.agentId} (use SendMessage with this id to continue the agent)\n` +
    `<usage>total_tokens: ${output.totalTokens}\ntool_uses: ${output.totalToolUseCount}\nduration_ms: ${output.totalDurationMs}</usage>`
  );
}
