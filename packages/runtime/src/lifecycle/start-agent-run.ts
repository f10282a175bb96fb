import type Anthropic from '@anthropic-ai/sdk';
import { type AgentRunMode, type Message, DelegateError, totalTokens } from '@delegate/core';
import type { ForkLayout } from '@delegate/fork-cache';
import type {
  AgentToolOutput,
  AgentToolProgress,
  LaunchedAgentOutput,
} from '../agent-tool/agent-tool-output.js';
import type { AgentRuntime } from '../session/agent-runtime.js';
import type { AgentRecord } from './agent-record.js';
import { type AgentProgress, driveAgent } from './drive-agent.js';
import { beginRun, moveToBackground } from './record-transitions.js';
import { foregroundResult } from './run-outcome.js';
import { type AgentRun, linkToSession, settleAfterFailure, settleRun } from './settle-run.js';
import type { LoopOutcome } from './run-outcome.js';

/** Options of {@link startAgentRun}. */
export type RunOptions = {
  /** Messages added to the agent's conversation before it runs. */
  newMessages: readonly Message[];
  /** How the run is reported in `agent.started`; default from `record.isBackground`. */
  mode?: AgentRunMode;
  /** Called once, when the run's first response begins streaming. */
  onFirstResponse?: () => void;
  /** Leading `newMessages` the agent's transcript already holds (a resume in the same session). */
  alreadyRecorded?: number;
  /** Transcript-only lines written after the starting conversation (never sent to the model). */
  transcriptOnly?: readonly Message[];
  /** Id of the `Agent` call that started the run, for `agent.started`. */
  toolUseId?: string;
  /** Told after each response while the run is in the foreground (the Agent tool's progress). */
  onForegroundProgress?: (progress: AgentToolProgress) => void;
  /** Set for a fork's first run: its first request places breakpoints for this layout. */
  forkLayout?: ForkLayout;
  /** With cache debugging on: the request the run's first request should read from (a fork's parent's). */
  cacheBaseline?: Anthropic.MessageCreateParamsStreaming;
  /**
   * `newMessages` are a finished run: the run settles on their report without a request; the
   * parent's notification describes that run, its task and events count nothing spent.
   */
  endsWithReport?: boolean;
};

type Step = IteratorResult<Message, 'completed' | 'aborted'>;
type Loop = AsyncGenerator<Message, 'completed' | 'aborted'>;

function now(): string {
  return new Date().toISOString();
}

/** What the agent may spend as it starts, when a budget bounds it. */
function startingBudget(
  runtime: AgentRuntime,
  agentId: string,
): { remaining?: { tokens?: number; costUsd?: number } } {
  const remaining = runtime.usage.remaining(agentId);
  return remaining.tokens === undefined && remaining.costUsd === undefined ? {} : { remaining };
}

/** Registers the run's task, marks the record running and announces the start. */
function beginAgentRun(runtime: AgentRuntime, record: AgentRecord, options: RunOptions): AgentRun {
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
  const run: AgentRun = {
    record,
    taskId: task.id,
    startTime: Date.now(),
    runStart: record.messages.length + (options.endsWithReport ? 0 : options.newMessages.length),
    ...(options.endsWithReport ? { replayed: true } : {}),
  };
  beginRun(record, task.id);
  runtime.agents.runStarted(record);
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
    ...(record.color ? { color: record.color } : {}),
    ...(options.toolUseId ? { toolUseId: options.toolUseId } : {}),
    ...startingBudget(runtime, record.agentId),
  });
  return run;
}

function startLoop(runtime: AgentRuntime, run: AgentRun, options: RunOptions): Loop {
  return driveAgent(runtime, run.record, {
    newMessages: options.newMessages,
    ...(options.onFirstResponse ? { onFirstResponse: options.onFirstResponse } : {}),
    ...(options.alreadyRecorded ? { alreadyRecorded: options.alreadyRecorded } : {}),
    ...(options.transcriptOnly ? { transcriptOnly: options.transcriptOnly } : {}),
    ...(options.forkLayout ? { forkLayout: options.forkLayout } : {}),
    ...(options.cacheBaseline ? { cacheBaseline: options.cacheBaseline } : {}),
    ...(options.endsWithReport ? { endsWithReport: true } : {}),
    onProgress: (progress) => {
      runtime.tasks.update(run.taskId, {
        usage: progress.usage,
        costUsd: runtime.usage.costOf(progress.usage, run.record.model).costUsd,
        toolUseCount: progress.toolUseCount,
        ...(progress.lastActivity ? { lastActivity: progress.lastActivity } : {}),
      });
      if (!run.record.isBackground) options.onForegroundProgress?.(toolProgress(run, progress));
    },
  });
}

function toolProgress(run: AgentRun, progress: AgentProgress): AgentToolProgress {
  return {
    type: 'agent_progress',
    agentId: run.record.agentId,
    agentType: run.record.agentType,
    messageCount: progress.messageCount,
    toolUseCount: progress.toolUseCount,
    tokens: totalTokens(progress.usage),
    ...(progress.lastActivity ? { lastActivity: progress.lastActivity } : {}),
  };
}

function launched(run: AgentRun): LaunchedAgentOutput {
  return {
    status: 'async_launched',
    agentId: run.record.agentId,
    taskId: run.taskId,
    agentType: run.record.agentType,
    description: run.record.description,
  };
}

function track<T>(runtime: AgentRuntime, promise: Promise<T>): Promise<T> {
  runtime.pendingRuns.add(promise);
  // The caller handles a rejection of `promise`; this side chain must not report it again.
  promise.then(
    () => runtime.pendingRuns.delete(promise),
    () => runtime.pendingRuns.delete(promise),
  );
  return promise;
}

async function drain(
  loop: Loop,
  pending?: Promise<Step>,
  before?: () => Promise<void>,
): Promise<'completed' | 'aborted'> {
  if (before) await before();
  if (pending) {
    const first = await pending;
    if (first.done) return first.value;
  }
  for (;;) {
    const next = await loop.next();
    if (next.done) return next.value;
  }
}

/** Runs the rest of the loop without waiting for it, then settles it. */
function continueInBackground(
  runtime: AgentRuntime,
  run: AgentRun,
  loop: Loop,
  pending?: Promise<Step>,
): void {
  // A fresh background start waits its turn at the gate; a foreground run moved to the
  // background is already streaming.
  const settled = drain(loop, pending, pending ? undefined : runtime.backgroundStart)
    .then(
      (reason) => settleRun(runtime, run, { reason }),
      (error: unknown) => settleRun(runtime, run, { error }),
    )
    .catch((error: unknown) => settleAfterFailure(runtime, run, error));
  track(runtime, settled);
}

/** A foreground run's handle: the caller's `backgroundAgent` resolves `requested`. */
function registerForegroundHandle(
  runtime: AgentRuntime,
  run: AgentRun,
): { requested: Promise<'background'>; dispose: () => void } {
  const { record } = run;
  let request!: () => void;
  const requested = new Promise<'background'>((resolve) => {
    request = () => resolve('background');
  });
  runtime.foreground.set(record.agentId, {
    background: () => {
      if (
        record.isBackground ||
        runtime.options.backgroundTasksDisabled ||
        record.status !== 'running'
      )
        return false;
      request();
      return true;
    },
  });
  return { requested, dispose: () => runtime.foreground.delete(record.agentId) };
}

/** Schedules the background hint, unless the run can never be moved to the background. */
function scheduleBackgroundHint(runtime: AgentRuntime, run: AgentRun): NodeJS.Timeout | undefined {
  if (runtime.options.backgroundTasksDisabled) return undefined;
  const hint = setTimeout(() => {
    runtime.events.emit({
      type: 'agent.background_hint',
      agentId: run.record.agentId,
      timestamp: now(),
      elapsedMs: Date.now() - run.startTime,
    });
  }, runtime.options.backgroundHintMs);
  hint.unref();
  return hint;
}

type Race =
  { kind: 'ended'; outcome: LoopOutcome } | { kind: 'backgrounded'; pending: Promise<Step> };

/** Drives the loop until it ends, or until the caller moves it to the background. */
async function raceToEnd(loop: Loop, requested: Promise<'background'>): Promise<Race> {
  try {
    for (;;) {
      const pending = loop.next();
      const raced = await Promise.race([
        pending.then((result) => ({ kind: 'step' as const, result })),
        requested.then(() => ({ kind: 'background' as const })),
      ]);
      if (raced.kind === 'background') return { kind: 'backgrounded', pending };
      if (raced.result.done) return { kind: 'ended', outcome: { reason: raced.result.value } };
    }
  } catch (error) {
    return { kind: 'ended', outcome: { error } };
  }
}

async function runInForeground(
  runtime: AgentRuntime,
  run: AgentRun,
  loop: Loop,
): Promise<AgentToolOutput> {
  const handle = registerForegroundHandle(runtime, run);
  const hint = scheduleBackgroundHint(runtime, run);
  let race: Race;
  try {
    race = await raceToEnd(loop, handle.requested);
  } finally {
    clearTimeout(hint);
    handle.dispose();
  }
  if (race.kind === 'backgrounded') {
    moveToBackground(run.record);
    linkToSession(runtime, run.record);
    runtime.tasks.update(run.taskId, { isBackgrounded: true });
    runtime.events.emit({
      type: 'agent.backgrounded',
      agentId: run.record.agentId,
      timestamp: now(),
      taskId: run.taskId,
    });
    continueInBackground(runtime, run, loop, race.pending);
    return launched(run);
  }
  const finished = await track(runtime, settleRun(runtime, run, race.outcome));
  return foregroundResult(finished, run.record);
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
  const run = beginAgentRun(runtime, record, options);
  const loop = startLoop(runtime, run, options);
  if (!record.isBackground) return runInForeground(runtime, run, loop);
  continueInBackground(runtime, run, loop);
  return launched(run);
}
