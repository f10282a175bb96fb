import {
  type CompleteUsage,
  type UserMessage,
  createSystemMessage,
  DelegateError,
  emptyUsage,
  errorMessage,
  getText,
} from '@delegate/core';
import { sumUsage } from '../agent-tool/finalize-agent-result.js';
import { queuedNotificationEntry } from '../transcripts/queued-notification.js';
import { isCompacted } from './agent-directory.js';
import { releaseChildAbortController, releaseSubagentContext } from '@delegate/context-isolation';
import type { AgentRuntime } from '../session/agent-runtime.js';
import { cleanupAgentWorktree } from '../worktree/worktree.js';
import type { AgentRecord } from './agent-record.js';
import { continueAgent } from './continue-agent.js';
import {
  endRun,
  forgetWorktree,
  queueMessage,
  returnToInbox,
  takeInbox,
} from './record-transitions.js';
import {
  type FinishedRun,
  type FinishedRunTexts,
  type LoopOutcome,
  attachWorktree,
  describeFinishedRun,
  lastRequestId,
  summarizeRun,
} from './run-outcome.js';

/** One run of a record, from its start to its settling. */
export type AgentRun = {
  /** The record that runs. */
  record: AgentRecord;
  /** Task tracking the run. */
  taskId: string;
  /** When it started (ms since epoch). */
  startTime: number;
  /** Index in `record.messages` of the run's first own message. */
  runStart: number;
  /**
   * The run settles on a report an earlier process recorded (a finished one-shot agent
   * resumed): it made no request, so its task and events count no usage, cost or tool calls;
   * the parent's notification still describes the run that made the report.
   */
  replayed?: boolean;
};

function now(): string {
  return new Date().toISOString();
}

/** Finishes the worktree: removed when unchanged, kept (and reported) when changed or uncheckable. */
async function finishWorktree(
  record: AgentRecord,
): Promise<{ path: string; branch: string } | undefined> {
  const worktree = record.worktree;
  if (!worktree) return undefined;
  let kept: { path: string; branch: string } | undefined;
  try {
    kept = await cleanupAgentWorktree(worktree);
  } catch {
    // Keep what could not be checked: reporting the worktree is safer than losing work.
    kept = { path: worktree.worktreePath, branch: worktree.worktreeBranch };
  }
  // A kept worktree stays with the agent so a continuation works (and reports) there.
  if (!kept) forgetWorktree(record);
  return kept;
}

/** What the run used (its kept responses) and what that cost. */
type RunCost = { usage: CompleteUsage; costUsd: number };

function runCost(runtime: AgentRuntime, run: AgentRun): RunCost {
  if (run.replayed) return { usage: emptyUsage(), costUsd: 0 };
  const usage = sumUsage(run.record.messages.slice(run.runStart));
  return { usage, costUsd: runtime.usage.costOf(usage, run.record.model).costUsd };
}

function emitOutcome(
  runtime: AgentRuntime,
  run: AgentRun,
  finished: FinishedRun,
  texts: FinishedRunTexts & { cost: RunCost },
): void {
  const { record, taskId } = run;
  if (finished.status === 'completed') {
    runtime.events.emit({
      type: 'agent.completed',
      agentId: record.agentId,
      timestamp: now(),
      taskId,
      result: texts.resultText ?? '',
      usage: run.replayed ? texts.cost.usage : finished.output.usage,
      costUsd: texts.cost.costUsd,
      durationMs: finished.output.totalDurationMs,
      toolUseCount: run.replayed ? 0 : finished.output.totalToolUseCount,
    });
  } else {
    const code =
      finished.status === 'killed'
        ? 'ABORTED'
        : DelegateError.isInstance(finished.error)
          ? finished.error.code
          : undefined;
    runtime.events.emit({
      type: 'agent.failed',
      agentId: record.agentId,
      timestamp: now(),
      taskId,
      error: texts.errorText ?? 'failed',
      ...(code ? { code } : {}),
      usage: texts.cost.usage,
      costUsd: texts.cost.costUsd,
    });
  }
  // No later request reads this run's cache chain: the server may drop it.
  const requestId = lastRequestId(record.messages.slice(run.runStart));
  if (requestId) {
    runtime.events.emit({
      type: 'agent.cache_evictable',
      agentId: record.agentId,
      timestamp: now(),
      lastRequestId: requestId,
    });
  }
}

function notifyParent(options: {
  runtime: AgentRuntime;
  run: AgentRun;
  finished: FinishedRun;
  texts: FinishedRunTexts;
  worktree: { path: string; branch: string } | undefined;
}): void {
  const { runtime, run, finished, texts, worktree } = options;
  const message = notifyOnce(runtime, run.record, {
    taskId: run.taskId,
    agentId: run.record.agentId,
    ...(run.record.name ? { name: run.record.name } : {}),
    status: finished.status,
    description: run.record.description,
    ...(texts.resultText !== undefined ? { result: texts.resultText } : {}),
    ...(texts.errorText !== undefined ? { error: texts.errorText } : {}),
    ...(finished.status === 'completed'
      ? {
          usage: finished.output.usage,
          toolUseCount: finished.output.totalToolUseCount,
          durationMs: finished.output.totalDurationMs,
        }
      : {}),
    ...(worktree ? { worktree } : {}),
  });
  // None was queued when the whole session was aborted (it is `undeliverable`): no event says so.
  if (!message || runtime.tasks.get(run.taskId)?.notification?.status === 'undeliverable') return;
  runtime.events.emit({
    type: 'agent.notification',
    agentId: run.record.agentId,
    timestamp: now(),
    taskId: run.taskId,
    status: finished.status,
    text: getText(message.message.content),
  });
}

/**
 * Records a notification just queued into `parent`'s inbox in the parent's own transcript
 * (a transcript-only line), so resuming the parent queues it again until a user message
 * with its uuid shows a request carried it.
 */
function recordInboxNotification(
  runtime: AgentRuntime,
  parent: AgentRecord,
  message: UserMessage,
): void {
  const queued = runtime.tasks.queuedRecordOf(message);
  if (!runtime.transcript || !queued) return;
  void runtime.transcript.append([queuedNotificationEntry(queued, parent.agentId)], parent.agentId);
}

/**
 * Queues a background run's notification, once per task: into its parent's inbox when the
 * parent is a sub-agent still running (it reads it at its next turn, and its transcript
 * records it), else for the main agent. Returns undefined when the task had already
 * notified.
 */
function notifyOnce(
  runtime: AgentRuntime,
  record: AgentRecord,
  notification: Parameters<AgentRuntime['tasks']['notify']>[0],
): UserMessage | undefined {
  if (runtime.tasks.get(notification.taskId)?.notification) return undefined;
  const parentId = record.parentAgentId;
  return runtime.tasks.notify(notification, {
    signal: runtime.rootContext.abortController.signal,
    deliver: (message) => {
      const parent = parentId ? runtime.agents.get(parentId) : undefined;
      if (!parent || isCompacted(parent) || parent.status !== 'running') return false;
      queueMessage(parent, message);
      recordInboxNotification(runtime, parent, message);
      return true;
    },
  });
}

/**
 * A run that failed or was stopped hands the notifications still in its inbox to the main
 * agent. Not when the whole session was aborted: they stay owed to this agent (its
 * transcript records them, so resuming it delivers them) and are `undeliverable` here.
 */
function forwardInboxNotifications(runtime: AgentRuntime, record: AgentRecord): void {
  const waiting = takeInbox(record);
  const notifications = runtime.tasks.notificationsAmong(waiting);
  returnToInbox(
    record,
    waiting.filter((message) => !notifications.includes(message)),
  );
  if (runtime.rootContext.abortController.signal.aborted) {
    runtime.tasks.abandon(notifications);
    return;
  }
  for (const message of notifications) runtime.tasks.enqueue(message);
}

/**
 * Unlinks the finished run's abort link from its parent so a long-lived parent does not
 * accumulate listeners (a continuation links a fresh controller). Not while agents it
 * started still run: the session's abort must keep reaching them through it.
 */
export function releaseAbortLink(runtime: AgentRuntime, record: AgentRecord): void {
  if (runtime.agents.hasRunningChildren(record.agentId)) return;
  const controller = record.context.abortController;
  if (runtime.backgroundAbort.release(controller)) return;
  if (!releaseSubagentContext(record.context)) releaseChildAbortController(controller);
}

/**
 * A foreground run moved to the background outlives the call that started it, as a
 * background agent does: its abort link moves from its caller to the session's hub, so a
 * caller that stops (a loop whose consumer broke off) no longer stops it; the session's
 * abort and TaskStop still do.
 */
export function linkToSession(runtime: AgentRuntime, record: AgentRecord): void {
  const controller = record.context.abortController;
  if (!releaseSubagentContext(record.context)) releaseChildAbortController(controller);
  runtime.backgroundAbort.adopt(controller);
}

/** A message that arrived while the run was settling starts the next run. */
function deliverInbox(runtime: AgentRuntime, record: AgentRecord): void {
  const [first, ...rest] = takeInbox(record);
  if (!first) return;
  returnToInbox(record, rest);
  const next = continueAgent({
    runtime,
    record,
    message: first,
    parentController: runtime.rootContext.abortController,
  });
  if (next === 'queued') return;
  // The continuation could not start (a fresh worktree failed, say): tell the parent
  // rather than lose the message or crash on an unhandled rejection.
  next.catch((error: unknown) => {
    runtime.tasks.notify(
      {
        taskId: record.taskId ?? 'unknown',
        agentId: record.agentId,
        status: 'failed',
        description: record.description,
        error: `A message sent to agent ${record.agentId} could not be delivered: ${errorMessage(error)}`,
      },
      { key: `${record.taskId ?? 'unknown'}:message:${first.uuid}` },
    );
  });
}

/** Subtype of the transcript line that says why a sub-agent's run failed or was stopped. */
export const RUN_ENDED_SUBTYPE = 'run_ended';

/**
 * Writes why a run that did not complete ended into the agent's own transcript (a line no
 * request carries), so the transcript says it, not only the parent's notification: one read
 * alone shows an API failure, a stop or a turn limit where the conversation stops.
 */
function recordRunEnd(
  runtime: AgentRuntime,
  record: AgentRecord,
  status: FinishedRun['status'],
  errorText: string | undefined,
): void {
  if (status === 'completed' || !runtime.transcript) return;
  const how = status === 'killed' ? 'was stopped' : 'failed';
  const line = createSystemMessage(
    `The run ${how}${errorText ? `: ${errorText}` : '.'}`,
    RUN_ENDED_SUBTYPE,
  );
  void runtime.transcript.append([line], record.agentId);
}

/**
 * Settles a finished run: the result (or partial result), the worktree, the task status,
 * events, the `<task-notification>` of a background run, the abort link, and a message that
 * arrived meanwhile.
 */
export async function settleRun(
  runtime: AgentRuntime,
  run: AgentRun,
  outcome: LoopOutcome,
): Promise<FinishedRun> {
  const { record } = run;
  const signal = record.context.abortController.signal;
  const finished = summarizeRun(
    {
      agentId: record.agentId,
      agentType: record.agentType,
      runMessages: record.messages.slice(run.runStart),
      startTime: run.startTime,
      aborted: signal.aborted,
      abortReason: signal.reason,
    },
    outcome,
  );
  const worktree = await finishWorktree(record);
  attachWorktree(finished, worktree);
  const texts = { ...describeFinishedRun(finished, signal), cost: runCost(runtime, run) };
  runtime.tasks.finish(run.taskId, {
    status: finished.status,
    ...(texts.resultText !== undefined ? { result: texts.resultText } : {}),
    ...(texts.errorText !== undefined ? { error: texts.errorText } : {}),
    usage: texts.cost.usage,
    costUsd: texts.cost.costUsd,
  });
  endRun(record, finished.status);
  recordRunEnd(runtime, record, finished.status, texts.errorText);
  try {
    emitOutcome(runtime, run, finished, texts);
  } finally {
    // Even when a listener threw: the parent hears of the run exactly once.
    if (record.isBackground) notifyParent({ runtime, run, finished, texts, worktree });
    runtime.agents.runEnded(record);
    releaseAbortLink(runtime, record);
    if (finished.status === 'completed') deliverInbox(runtime, record);
    else forwardInboxNotifications(runtime, record);
  }
  return finished;
}

/**
 * The last resort when settling itself failed (a host callback threw): the task still ends
 * and the parent still hears of it.
 */
export function settleAfterFailure(runtime: AgentRuntime, run: AgentRun, error: unknown): void {
  const { record } = run;
  const finished = runtime.tasks.finish(run.taskId, {
    status: 'failed',
    error: errorMessage(error),
  });
  // notifyOnce does nothing when settleRun already notified.
  if (finished || record.isBackground) {
    notifyOnce(runtime, record, {
      taskId: run.taskId,
      agentId: record.agentId,
      status: runtime.tasks.get(run.taskId)?.status === 'killed' ? 'killed' : 'failed',
      description: record.description,
      error: errorMessage(error),
    });
  }
  if (record.status === 'running') endRun(record, 'failed');
  runtime.agents.runEnded(record);
}
