import {
  type CompleteUsage,
  type Message,
  DelegateError,
  errorMessage,
  getText,
} from '@delegate/core';
import type { CompletedAgentOutput } from '../agent-tool/agent-tool-output.js';
import { finalizeAgentTool } from '../agent-tool/finalize-agent-result.js';

/** How a run's loop ended: its reason, or what it threw. */
export type LoopOutcome = { reason: 'completed' | 'aborted' } | { error: unknown };

/** The worktree a run left, kept because it holds changes. */
export type KeptWorktree = { path: string; branch: string };

/** A settled run; a run that did not complete says where its kept worktree is in `worktree`. */
export type FinishedRun =
  | { status: 'completed'; output: CompletedAgentOutput }
  | {
      status: 'failed';
      error: unknown;
      partial?: CompletedAgentOutput;
      worktree?: KeptWorktree;
    }
  | { status: 'killed'; partial?: CompletedAgentOutput; worktree?: KeptWorktree };

/** What a settled run says, in words, to tasks, events and notifications. */
export type FinishedRunTexts = {
  /** The report (or partial report), when there is one. */
  resultText?: string;
  /** Why it failed or was stopped. */
  errorText?: string;
  /** Usage of a completed run. */
  usage?: CompleteUsage;
};

/** What summarizing a run needs. */
export type RunFacts = {
  /** Agent id. */
  agentId: string;
  /** Agent type. */
  agentType: string;
  /** The run's own messages (not the history it started from). */
  runMessages: readonly Message[];
  /** When the run started (ms since epoch). */
  startTime: number;
  /** True when the agent's signal had aborted by the time the loop ended. */
  aborted: boolean;
  /** Why the signal aborted, when it did (a `BUDGET_EXCEEDED` error when a budget ran out). */
  abortReason?: unknown;
};

function hasAssistant(messages: readonly Message[]): boolean {
  return messages.some((message) => message.type === 'assistant');
}

/**
 * Turns how a loop ended into a settled run. Work done before a failure or a stop is kept:
 * a foreground caller gets it as a partial result, a background one finds it in the
 * failure notification.
 */
export function summarizeRun(facts: RunFacts, outcome: LoopOutcome): FinishedRun {
  const budget = budgetErrorOf(facts, outcome);
  if (budget) return budgetRun(facts, budget);
  const failed = 'error' in outcome;
  const aborted =
    ('reason' in outcome && outcome.reason === 'aborted') || (failed && facts.aborted);
  const metadata = { agentType: facts.agentType, startTime: facts.startTime };
  let partial: CompletedAgentOutput | undefined;
  if ((aborted || failed) && hasAssistant(facts.runMessages)) {
    partial = {
      status: 'completed',
      ...finalizeAgentTool(facts.runMessages, facts.agentId, metadata),
      partial: aborted ? 'it was stopped' : errorMessage((outcome as { error: unknown }).error),
    };
  }
  if (aborted) return { status: 'killed', ...(partial ? { partial } : {}) };
  if (failed) return { status: 'failed', error: outcome.error, ...(partial ? { partial } : {}) };
  try {
    const result = finalizeAgentTool(facts.runMessages, facts.agentId, metadata);
    return { status: 'completed', output: { status: 'completed', ...result } };
  } catch (error) {
    return { status: 'failed', error };
  }
}

/** The budget error that ended the run, if a budget ran out (thrown, or the abort reason). */
function budgetErrorOf(facts: RunFacts, outcome: LoopOutcome): DelegateError | undefined {
  if ('error' in outcome && DelegateError.hasCode(outcome.error, 'BUDGET_EXCEEDED'))
    return outcome.error;
  if (facts.aborted && DelegateError.hasCode(facts.abortReason, 'BUDGET_EXCEEDED'))
    return facts.abortReason;
  return undefined;
}

/** A run its budget stopped: failed with `BUDGET_EXCEEDED`, its work so far kept as a partial report marked as such. */
function budgetRun(facts: RunFacts, error: DelegateError): FinishedRun {
  if (!hasAssistant(facts.runMessages)) return { status: 'failed', error };
  const metadata = { agentType: facts.agentType, startTime: facts.startTime };
  const partial: CompletedAgentOutput = {
    status: 'completed',
    ...finalizeAgentTool(facts.runMessages, facts.agentId, metadata),
    partial: error.message,
    budgetExceeded: true,
  };
  return { status: 'failed', error, partial };
}

/** The stop reason of an aborted signal, in words (empty for a plain abort). */
export function stopReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (DelegateError.isInstance(reason)) return ` (${reason.message})`;
  if (reason instanceof Error && reason.name !== 'AbortError') return ` (${reason.message})`;
  return '';
}

/** The texts of a settled run. */
export function describeFinishedRun(finished: FinishedRun, signal: AbortSignal): FinishedRunTexts {
  const report = finished.status === 'completed' ? finished.output : finished.partial;
  const resultText = report ? getText(report.content) || undefined : undefined;
  const errorText =
    finished.status === 'failed'
      ? errorMessage(finished.error)
      : finished.status === 'killed'
        ? `The agent was stopped before it finished${stopReason(signal)}.`
        : undefined;
  return {
    ...(resultText !== undefined ? { resultText } : {}),
    ...(errorText !== undefined ? { errorText } : {}),
    ...(finished.status === 'completed' ? { usage: finished.output.usage } : {}),
  };
}

/**
 * Records the kept worktree on a settled run: on its report, or its partial report, so the
 * caller is told where the work is whether the run completed or not; a run with neither
 * keeps it in `worktree` (its thrown error names it).
 */
export function attachWorktree(finished: FinishedRun, worktree: KeptWorktree | undefined): void {
  if (!worktree) return;
  if (finished.status === 'completed') finished.output.worktree = worktree;
  else if (finished.partial) finished.partial.worktree = worktree;
  else finished.worktree = worktree;
}

function worktreeSentence(worktree: KeptWorktree): string {
  return `Its worktree is kept, with its changes, at ${worktree.path} (branch ${worktree.branch}).`;
}

function worktreeDetails(worktree: KeptWorktree): Record<string, unknown> {
  return { worktreePath: worktree.path, worktreeBranch: worktree.branch };
}

/** `error` with the kept worktree named in its message (and `details`), as a DelegateError. */
function withWorktree(error: unknown, worktree: KeptWorktree): DelegateError {
  const base = DelegateError.isInstance(error) ? error : undefined;
  return new DelegateError(
    base?.code ?? 'TOOL_FAILED',
    `${errorMessage(error)} ${worktreeSentence(worktree)}`,
    {
      cause: error,
      details: { ...base?.details, ...worktreeDetails(worktree) },
    },
  );
}

/**
 * What a foreground caller gets from a settled run: the report, else the partial report of
 * a run that did some work; a run that did nothing throws (its error, or `ABORTED`), naming
 * the worktree it kept, if any.
 */
export function foregroundResult(
  finished: FinishedRun,
  agent: { agentId: string; agentType: string },
): CompletedAgentOutput {
  if (finished.status === 'completed') return finished.output;
  if (finished.partial) return finished.partial;
  if (finished.status === 'killed') {
    const kept = finished.worktree ? ` ${worktreeSentence(finished.worktree)}` : '';
    throw new DelegateError(
      'ABORTED',
      `Agent ${agent.agentId} (${agent.agentType}) was stopped before it produced a report.${kept} Start it again if the work is still needed.`,
      finished.worktree ? { details: worktreeDetails(finished.worktree) } : {},
    );
  }
  if (finished.worktree) throw withWorktree(finished.error, finished.worktree);
  throw finished.error;
}

/** The request id of the run's last response, when the API gave one. */
export function lastRequestId(messages: readonly Message[]): string | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.type === 'assistant' && message.requestId) return message.requestId;
  }
  return undefined;
}
