import {
  type AgentRunMode,
  type Message,
  type UserMessage,
  DelegateError,
  createUserMessage,
  errorMessage,
  getText,
} from '@delegate/core';
import {
  createChildAbortController,
  releaseChildAbortController,
  releaseSubagentContext,
} from '@delegate/context-isolation';
import type { AgentRecord, AgentRuntime } from '../session/agent-runtime.js';
import type { AgentToolOutput } from '../agent-tool/agent-tool.js';
import { finalizeAgentTool } from '../agent-tool/finalize-agent-result.js';
import { driveAgent } from './drive-agent.js';
import { cleanupAgentWorktree, createAgentWorktree } from '../worktree/worktree.js';

type RunOptions = {
  newMessages: readonly Message[];
  /** How the run is reported in `agent.started`; default from `record.isBackground`. */
  mode?: AgentRunMode;
  onFirstResponse?: () => void;
  /** Leading `newMessages` the agent's transcript already holds (a resume in the same session). */
  alreadyRecorded?: number;
};

type CompletedOutput = Extract<AgentToolOutput, { status: 'completed' }>;

type Finished =
  | { status: 'completed'; output: CompletedOutput }
  | { status: 'failed'; error: unknown; partial?: CompletedOutput }
  | { status: 'killed'; partial?: CompletedOutput };

function now(): string {
  return new Date().toISOString();
}

function hasAssistant(messages: readonly Message[]): boolean {
  return messages.some((message) => message.type === 'assistant');
}

/**
 * Settles a finished run: the result (or partial result), the task status, the worktree,
 * events, and — for background runs — the `<task-notification>` queued for the parent.
 */
async function settle(options: {
  runtime: AgentRuntime;
  record: AgentRecord;
  outcome: { reason?: 'completed' | 'aborted'; error?: unknown };
  /** Index in `record.messages` of the run's first own message. */
  runStart: number;
  startTime: number;
}): Promise<Finished> {
  const { runtime, record, outcome, runStart, startTime } = options;
  const runMessages = record.messages.slice(runStart);
  const taskId = record.taskId!;
  let finished: Finished;
  const aborted =
    outcome.reason === 'aborted' ||
    (outcome.error !== undefined && record.context.abortController.signal.aborted);
  // Work done before a failure is kept: a foreground caller gets it as a partial result,
  // a background one finds it in the failure notification.
  let partial: CompletedOutput | undefined;
  if ((aborted || outcome.error !== undefined) && hasAssistant(runMessages)) {
    const result = finalizeAgentTool(runMessages, record.agentId, {
      agentType: record.agentType,
      startTime,
    });
    partial = {
      status: 'completed',
      ...result,
      partial: aborted ? 'it was stopped' : errorMessage(outcome.error),
    };
  }
  if (aborted) {
    finished = { status: 'killed', ...(partial ? { partial } : {}) };
  } else if (outcome.error !== undefined) {
    finished = { status: 'failed', error: outcome.error, ...(partial ? { partial } : {}) };
  } else {
    try {
      const result = finalizeAgentTool(runMessages, record.agentId, {
        agentType: record.agentType,
        startTime,
      });
      finished = { status: 'completed', output: { status: 'completed', ...result } };
    } catch (error) {
      finished = { status: 'failed', error };
    }
  }

  let worktreeKept: { path: string; branch: string } | undefined;
  if (record.worktree) {
    try {
      worktreeKept = await cleanupAgentWorktree(record.worktree);
    } catch {
      // Keep what could not be checked: reporting the worktree is safer than losing work.
      worktreeKept = { path: record.worktree.worktreePath, branch: record.worktree.worktreeBranch };
    }
    // A kept worktree stays with the agent so a continuation works (and reports) there.
    if (!worktreeKept) delete record.worktree;
  }
  if (finished.status === 'completed' && worktreeKept) finished.output.worktree = worktreeKept;

  const report = finished.status === 'completed' ? finished.output : finished.partial;
  const resultText = report ? getText(report.content) || undefined : undefined;
  const errorText =
    finished.status === 'failed'
      ? errorMessage(finished.error)
      : finished.status === 'killed'
        ? `The agent was stopped before it finished${stopReason(record)}.`
        : undefined;
  const usage = finished.status === 'completed' ? finished.output.usage : undefined;
  runtime.tasks.finish(taskId, {
    status: finished.status,
    ...(resultText !== undefined ? { result: resultText } : {}),
    ...(errorText !== undefined ? { error: errorText } : {}),
    ...(usage ? { usage } : {}),
  });
  record.status = finished.status === 'completed' ? 'idle' : finished.status;

  if (finished.status === 'completed') {
    runtime.events.emit({
      type: 'agent.completed',
      agentId: record.agentId,
      timestamp: now(),
      taskId,
      result: resultText ?? '',
      usage: finished.output.usage,
      durationMs: finished.output.totalDurationMs,
      toolUseCount: finished.output.totalToolUseCount,
    });
  } else {
    runtime.events.emit({
      type: 'agent.failed',
      agentId: record.agentId,
      timestamp: now(),
      taskId,
      error: errorText ?? 'failed',
      ...(finished.status === 'killed'
        ? { code: 'ABORTED' }
        : DelegateError.isInstance(finished.error)
          ? { code: finished.error.code }
          : {}),
    });
  }

  if (record.isBackground) {
    const message = runtime.tasks.notify({
      taskId,
      agentId: record.agentId,
      status: finished.status,
      description: record.description,
      ...(resultText !== undefined ? { result: resultText } : {}),
      ...(errorText !== undefined ? { error: errorText } : {}),
      ...(finished.status === 'completed'
        ? {
            usage: finished.output.usage,
            toolUseCount: finished.output.totalToolUseCount,
            durationMs: finished.output.totalDurationMs,
          }
        : {}),
      ...(worktreeKept ? { worktree: worktreeKept } : {}),
    });
    runtime.events.emit({
      type: 'agent.notification',
      agentId: record.agentId,
      timestamp: now(),
      taskId,
      status: finished.status,
      text: getText(message.message.content),
    });
  }
  // The run is over: unlink the child's abort listener from the parent so a long-lived
  // parent does not accumulate listeners (SendMessage relinks a fresh controller). Not while
  // agents it started still run: the session's abort must keep reaching them through it.
  if (!hasRunningChildren(runtime, record.agentId)) {
    if (!releaseSubagentContext(record.context))
      releaseChildAbortController(record.context.abortController);
  }
  // A message that arrived while the run was settling starts the next run.
  if (finished.status === 'completed' && record.inbox.length > 0) {
    const waiting = record.inbox.splice(0, record.inbox.length);
    const [first, ...rest] = waiting;
    record.inbox.push(...rest);
    if (first) {
      const next = continueAgent({
        runtime,
        record,
        message: first,
        parentController: runtime.rootAbortController,
      });
      if (next !== 'queued') {
        // The continuation could not start (a fresh worktree failed, say): tell the parent
        // rather than lose the message or crash on an unhandled rejection.
        next.catch((error: unknown) => {
          const taskId = record.taskId ?? 'unknown';
          runtime.tasks.notify({
            taskId,
            agentId: record.agentId,
            status: 'failed',
            description: record.description,
            error: `A message sent to agent ${record.agentId} could not be delivered: ${errorMessage(error)}`,
          });
        });
      }
    }
  }
  return finished;
}

function stopReason(record: AgentRecord): string {
  const reason: unknown = record.context.abortController.signal.reason;
  if (DelegateError.isInstance(reason)) return ` (${reason.message})`;
  if (reason instanceof Error && reason.name !== 'AbortError') return ` (${reason.message})`;
  return '';
}

function hasRunningChildren(runtime: AgentRuntime, agentId: string): boolean {
  for (const other of runtime.agents.values()) {
    if (other.parentAgentId === agentId && other.status === 'running') return true;
  }
  return false;
}

function track(runtime: AgentRuntime, promise: Promise<unknown>): void {
  runtime.pendingRuns.add(promise);
  void promise.finally(() => runtime.pendingRuns.delete(promise));
}

async function drain(
  generator: AsyncGenerator<Message, 'completed' | 'aborted'>,
  pending?: Promise<IteratorResult<Message, 'completed' | 'aborted'>>,
): Promise<'completed' | 'aborted'> {
  if (pending) {
    const first = await pending;
    if (first.done) return first.value;
  }
  for (;;) {
    const next = await generator.next();
    if (next.done) return next.value;
  }
}

/**
 * Runs an agent record: in the background (returns at once; a notification follows) or
 * in the foreground (returns the result; `background()` on its handle moves it to the
 * background without restarting it).
 */
export async function startAgentRun(
  runtime: AgentRuntime,
  record: AgentRecord,
  options: RunOptions,
): Promise<AgentToolOutput> {
  const startTime = Date.now();
  const runStart = record.messages.length + options.newMessages.length;
  const task = runtime.tasks.register({
    type: 'local_agent',
    description: record.description,
    agentId: record.agentId,
    agentType: record.agentType,
    isBackgrounded: record.isBackground,
    toolUseCount: 0,
    kill: () =>
      record.context.abortController.abort(
        new DelegateError('ABORTED', `Agent ${record.agentId} was stopped.`),
      ),
  });
  record.taskId = task.id;
  record.status = 'running';
  runtime.events.emit({
    type: 'agent.started',
    agentId: record.agentId,
    timestamp: now(),
    agentType: record.agentType,
    description: record.description,
    mode: options.mode ?? (record.isBackground ? 'background' : 'foreground'),
    model: record.model,
    taskId: task.id,
    ...(record.parentAgentId ? { parentAgentId: record.parentAgentId } : {}),
  });

  const generator = driveAgent(runtime, record, {
    newMessages: options.newMessages,
    ...(options.onFirstResponse ? { onFirstResponse: options.onFirstResponse } : {}),
    ...(options.alreadyRecorded ? { alreadyRecorded: options.alreadyRecorded } : {}),
    onProgress: (progress) =>
      runtime.tasks.update(task.id, {
        usage: progress.usage,
        toolUseCount: progress.toolUseCount,
        ...(progress.lastActivity ? { lastActivity: progress.lastActivity } : {}),
      }),
  });
  const launched: AgentToolOutput = {
    status: 'async_launched',
    agentId: record.agentId,
    taskId: task.id,
    agentType: record.agentType,
    description: record.description,
  };

  const runInBackground = (
    pending?: Promise<IteratorResult<Message, 'completed' | 'aborted'>>,
  ): void => {
    const settled = drain(generator, pending)
      .then(
        (reason) => settle({ runtime, record, outcome: { reason }, runStart, startTime }),
        (error: unknown) => settle({ runtime, record, outcome: { error }, runStart, startTime }),
      )
      .catch((error: unknown) => {
        // Settling itself failed (a host callback threw): the task must still end and the
        // parent must still hear of it.
        if (runtime.tasks.finish(task.id, { status: 'failed', error: errorMessage(error) })) {
          runtime.tasks.notify({
            taskId: task.id,
            agentId: record.agentId,
            status: 'failed',
            description: record.description,
            error: errorMessage(error),
          });
        }
        record.status = 'failed';
      });
    track(runtime, settled);
  };

  if (record.isBackground) {
    runInBackground();
    return launched;
  }

  let requestBackground!: () => void;
  const backgroundSignal = new Promise<'background'>((resolveSignal) => {
    requestBackground = () => resolveSignal('background');
  });
  runtime.foreground.set(record.agentId, {
    background: () => {
      if (
        record.isBackground ||
        runtime.options.backgroundTasksDisabled ||
        record.status !== 'running'
      )
        return false;
      requestBackground();
      return true;
    },
  });
  const hint = setTimeout(() => {
    runtime.events.emit({
      type: 'agent.background_hint',
      agentId: record.agentId,
      timestamp: now(),
      elapsedMs: Date.now() - startTime,
    });
  }, runtime.options.backgroundHintMs);
  hint.unref();

  let reason: 'completed' | 'aborted' | undefined;
  let failure: unknown;
  try {
    for (;;) {
      const pending = generator.next();
      const raced = await Promise.race([
        pending.then((result) => ({ kind: 'message' as const, result })),
        backgroundSignal.then(() => ({ kind: 'background' as const })),
      ]);
      if (raced.kind === 'background') {
        record.isBackground = true;
        runtime.tasks.update(task.id, { isBackgrounded: true });
        runtime.events.emit({
          type: 'agent.backgrounded',
          agentId: record.agentId,
          timestamp: now(),
          taskId: task.id,
        });
        runInBackground(pending);
        return launched;
      }
      if (raced.result.done) {
        reason = raced.result.value;
        break;
      }
    }
  } catch (error) {
    failure = error;
  } finally {
    clearTimeout(hint);
    runtime.foreground.delete(record.agentId);
  }

  const settling = settle({
    runtime,
    record,
    outcome: failure === undefined ? { reason: reason! } : { error: failure },
    runStart,
    startTime,
  });
  track(runtime, settling);
  const finished = await settling;
  if (finished.status === 'completed') return finished.output;
  // A foreground agent that did some work returns what it has rather than nothing.
  if (finished.partial) return finished.partial;
  if (finished.status === 'killed') {
    throw new DelegateError(
      'ABORTED',
      `Agent ${record.agentId} (${record.agentType}) was stopped before it produced a report. Start it again if the work is still needed.`,
    );
  }
  throw finished.error;
}

/**
 * Continues an agent that has finished, with its context intact: the message is added
 * to its conversation and it runs again in the background. A running agent gets the
 * message at its next turn instead.
 */
export function continueAgent(options: {
  runtime: AgentRuntime;
  record: AgentRecord;
  message: UserMessage;
  /** The caller's abort controller (a foreground continuation stops with it). */
  parentController: AbortController;
}): Promise<AgentToolOutput> | 'queued' {
  const { runtime, record, message, parentController } = options;
  if (record.status === 'running') {
    record.inbox.push(message);
    return 'queued';
  }
  // The previous run released its abort link; link a fresh controller. A background
  // continuation stops with the session, not with the caller's turn.
  record.isBackground = !runtime.options.backgroundTasksDisabled;
  const controller = createChildAbortController(
    record.isBackground ? runtime.rootAbortController : parentController,
  );
  record.context = { ...record.context, abortController: controller };
  if (record.isolation === 'worktree' && !record.worktree)
    return continueInNewWorktree({ runtime, record, message });
  return startAgentRun(runtime, record, {
    newMessages: [message],
  });
}

/** Continues an agent whose worktree was removed (it had made no changes) in a fresh one. */
async function continueInNewWorktree(options: {
  runtime: AgentRuntime;
  record: AgentRecord;
  message: UserMessage;
}): Promise<AgentToolOutput> {
  const { runtime, record, message } = options;
  const worktree = await createAgentWorktree({
    cwd: runtime.rootCwd,
    slug: `agent-${record.agentId.slice(1, 9)}-${Date.now().toString(36)}`,
    ...(runtime.options.worktreeRoot ? { root: runtime.options.worktreeRoot } : {}),
  });
  record.worktree = worktree;
  record.context = { ...record.context, cwd: worktree.cwd };
  const notice = createUserMessage({
    content: `Your previous worktree had no changes and was removed. You now work in a fresh worktree at ${worktree.worktreePath} (branch ${worktree.worktreeBranch}), in ${worktree.cwd}; use paths under it.`,
    isMeta: true,
  });
  return startAgentRun(runtime, record, {
    newMessages: [notice, message],
  });
}
