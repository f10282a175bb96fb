import { DelegateError, errorMessage, getText } from '@delegate/core';
import { releaseChildAbortController, releaseSubagentContext } from '@delegate/context-isolation';
import type { AgentRuntime } from '../session/agent-runtime.js';
import { cleanupAgentWorktree } from '../worktree/worktree.js';
import type { AgentRecord } from './agent-record.js';
import { continueAgent } from './continue-agent.js';
import { endRun, forgetWorktree, returnToInbox, takeInbox } from './record-transitions.js';
import {
  type FinishedRun,
  type FinishedRunTexts,
  type LoopOutcome,
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

function emitOutcome(
  runtime: AgentRuntime,
  run: AgentRun,
  finished: FinishedRun,
  texts: FinishedRunTexts,
): void {
  const { record, taskId } = run;
  if (finished.status === 'completed') {
    runtime.events.emit({
      type: 'agent.completed',
      agentId: record.agentId,
      timestamp: now(),
      taskId,
      result: texts.resultText ?? '',
      usage: finished.output.usage,
      durationMs: finished.output.totalDurationMs,
      toolUseCount: finished.output.totalToolUseCount,
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
  const message = runtime.tasks.notify({
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
    runtime.tasks.notify({
      taskId: record.taskId ?? 'unknown',
      agentId: record.agentId,
      status: 'failed',
      description: record.description,
      error: `A message sent to agent ${record.agentId} could not be delivered: ${errorMessage(error)}`,
    });
  });
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
    },
    outcome,
  );
  const worktree = await finishWorktree(record);
  if (finished.status === 'completed' && worktree) finished.output.worktree = worktree;
  const texts = describeFinishedRun(finished, signal);
  runtime.tasks.finish(run.taskId, {
    status: finished.status,
    ...(texts.resultText !== undefined ? { result: texts.resultText } : {}),
    ...(texts.errorText !== undefined ? { error: texts.errorText } : {}),
    ...(texts.usage ? { usage: texts.usage } : {}),
  });
  endRun(record, finished.status);
  emitOutcome(runtime, run, finished, texts);
  if (record.isBackground) notifyParent({ runtime, run, finished, texts, worktree });
  runtime.agents.runEnded(record);
  releaseAbortLink(runtime, record);
  if (finished.status === 'completed') deliverInbox(runtime, record);
  return finished;
}

/**
 * The last resort when settling itself failed (a host callback threw): the task still ends
 * and the parent still hears of it.
 */
export function settleAfterFailure(runtime: AgentRuntime, run: AgentRun, error: unknown): void {
  const { record } = run;
  if (runtime.tasks.finish(run.taskId, { status: 'failed', error: errorMessage(error) })) {
    runtime.tasks.notify({
      taskId: run.taskId,
      agentId: record.agentId,
      status: 'failed',
      description: record.description,
      error: errorMessage(error),
    });
  }
  if (record.status === 'running') endRun(record, 'failed');
  runtime.agents.runEnded(record);
}
