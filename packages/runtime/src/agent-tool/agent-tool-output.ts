import { escapeNotificationField, unescapeNotificationField } from '../tasks/task-notification.js';
import type { AgentToolResult } from './finalize-agent-result.js';

/** A finished run as the Agent tool (and SendMessage) returns it. */
export type CompletedAgentOutput = {
  /** Discriminator. */
  status: 'completed';
  /** Set when the run stopped early (failed or stopped): why. The report is then what it had. */
  partial?: string;
  /** True when the run stopped because a budget ran out (`partial` says which). */
  budgetExceeded?: boolean;
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

/**
 * What the Agent tool reports, as the `data` of a `progress` message, after each response of a
 * sub-agent it runs in the foreground (none once the agent moves to the background).
 */
export type AgentToolProgress = {
  /** Discriminator. */
  type: 'agent_progress';
  /** The sub-agent's id. */
  agentId: string;
  /** Its agent type (`fork` for a fork). */
  agentType: string;
  /** Messages of its run so far. */
  messageCount: number;
  /** Tool calls it made so far. */
  toolUseCount: number;
  /** Input and output tokens of its responses so far, cache reads and writes included. */
  tokens: number;
  /** What it did last (`called Bash`), when its last response called a tool. */
  lastActivity?: string;
};

const LAUNCHED_LAST_LINE =
  'You will receive a <task-notification> when it finishes; do not poll or sleep waiting for it. Use TaskOutput only if you have nothing else to do.';

function formatLaunched(output: LaunchedAgentOutput): string {
  return [
    // Escaped like a notification field: the description must not read as a notification.
    `Started ${escapeNotificationField(output.agentType)} agent "${escapeNotificationField(output.description)}" in the background.`,
    `agentId: ${output.agentId}`,
    `taskId: ${output.taskId}`,
    LAUNCHED_LAST_LINE,
  ].join('\n');
}

/**
 * Reads back the Agent tool's result for a run that went on in the background (the text
 * {@link formatAgentToolResult} wrote for it); undefined for any other text. Only the whole
 * text counts: a finished agent's report that quotes a launch has more around it (unless it
 * is a one-shot agent's report word for word, which nothing can tell apart).
 */
export function parseLaunchedAgentResult(
  text: string,
): Omit<LaunchedAgentOutput, 'status'> | undefined {
  const lines = text.split('\n');
  if (lines.length !== 4 || lines[3] !== LAUNCHED_LAST_LINE) return undefined;
  // Both fields are escaped: neither holds a `"`.
  const started = /^Started ([^"]*) agent "([^"]*)" in the background\.$/.exec(lines[0]!);
  const agentId = /^agentId: (\S+)$/.exec(lines[1]!)?.[1];
  const taskId = /^taskId: (\S+)$/.exec(lines[2]!)?.[1];
  if (!started || !agentId || !taskId) return undefined;
  return {
    agentType: unescapeNotificationField(started[1]!),
    description: unescapeNotificationField(started[2]!),
    agentId,
    taskId,
  };
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
