import { type AssistantMessage, DelegateError } from '@delegate/core';
import { isCompacted } from '../lifecycle/agent-directory.js';
import type { AgentRuntime } from '../session/agent-runtime.js';
import { type BudgetShortfall, MAIN_AGENT_ID } from './usage-ledger.js';

/** What the query loop asks of an agent's budget around each request. */
export type UsageGuard = {
  /**
   * Throws a `BUDGET_EXCEEDED` DelegateError when the agent may not send its next request:
   * a budget on its chain cannot pay even `estimateTokens` (a lower bound of the request's
   * input: the previous response's whole context). `stage` says when the check runs.
   */
  ensureBudget(stage: 'request' | 'response', estimateTokens: number): void;
  /** Records a response the loop kept (once; a retried attempt never gets here). */
  recordResponse(assistant: AssistantMessage): void;
};

function ownerText(runtime: AgentRuntime, ownerId: string): string {
  if (ownerId === MAIN_AGENT_ID) return "the session's budget";
  const owner = runtime.usage.tree(ownerId);
  return `the budget of agent ${ownerId}${owner ? ` (${owner.agentType})` : ''}`;
}

function amount(shortfall: BudgetShortfall, value: number): string {
  return shortfall.dimension === 'tokens'
    ? `${value.toLocaleString('en-US')} tokens`
    : `$${value.toFixed(4)}`;
}

/** `of 3,000 tokens (3,012 used) is spent`, or, when some is left, what it could not pay for. */
function limitText(shortfall: BudgetShortfall): string {
  const { limit, used, needed } = shortfall;
  const spent =
    shortfall.dimension === 'tokens' ? used.toLocaleString('en-US') : amount(shortfall, used);
  const of = `of ${amount(shortfall, limit)} (${spent} used)`;
  if (used >= limit || needed <= 0) return `${of} is spent`;
  return `${of} has ${amount(shortfall, limit - used)} left, less than the next request needs (at least ${amount(shortfall, needed)}: the context it sent last)`;
}

function fixText(shortfall: BudgetShortfall): string {
  const key = shortfall.dimension === 'tokens' ? 'maxTokens' : 'maxCostUsd';
  return shortfall.ownerId === MAIN_AGENT_ID
    ? `Raise the session option ${key}, or give the work in smaller pieces.`
    : `Raise ${key} in the agent's definition (or ${shortfall.dimension === 'tokens' ? 'max_tokens' : 'max_cost_usd'} in its Agent call), or give it a smaller task.`;
}

// The agents of each session (by its ledger) told that their cost budget cannot price them.
const warnedUnpriced = new WeakMap<object, Set<string>>();

/** True the first time it is asked for an agent of the session. */
function firstWarning(ledger: object, agentId: string): boolean {
  let warned = warnedUnpriced.get(ledger);
  if (!warned) warnedUnpriced.set(ledger, (warned = new Set()));
  if (warned.has(agentId)) return false;
  warned.add(agentId);
  return true;
}

/** The error an agent stops with when a budget on its chain ran out. */
export function budgetExceededError(options: {
  runtime: AgentRuntime;
  agentId: string;
  shortfall: BudgetShortfall;
  stage: 'request' | 'response';
}): DelegateError {
  const { runtime, agentId, shortfall } = options;
  const who = agentId === MAIN_AGENT_ID ? 'The main agent' : `Agent ${agentId}`;
  const when = options.stage === 'request' ? 'before its next request' : 'after its last response';
  return new DelegateError(
    'BUDGET_EXCEEDED',
    `Budget exceeded: ${who} stopped ${when}: ${ownerText(runtime, shortfall.ownerId)} ${limitText(shortfall)}. ${fixText(shortfall)}`,
    { details: { agentId, ...shortfall } },
  );
}

/**
 * Stops the agent whose budget ran out (unless it is the main agent, which stops at its own
 * next check) and every running descendant, background ones included, with `error` as the
 * abort reason.
 */
export function stopBudgetSubtree(
  runtime: AgentRuntime,
  ownerId: string,
  error: DelegateError,
): void {
  const ids = [
    ...(ownerId === MAIN_AGENT_ID ? [] : [ownerId]),
    ...runtime.usage.descendants(ownerId),
  ];
  for (const id of ids) {
    const entry = runtime.agents.get(id);
    if (!entry || isCompacted(entry) || entry.status !== 'running') continue;
    const controller = entry.context.abortController;
    if (!controller.signal.aborted) controller.abort(error);
  }
}

/** True when `value` is the abort reason or error of a budget that ran out. */
export function isBudgetError(value: unknown): value is DelegateError {
  return DelegateError.hasCode(value, 'BUDGET_EXCEEDED');
}

/**
 * The guard of one agent's loop: records each kept response in the session's ledger (and
 * tells `onRecorded`), emits `agent.cost` with what is left, and refuses a request that
 * no budget on the agent's chain can pay, stopping the subtree that ran out.
 */
export function createUsageGuard(options: {
  runtime: AgentRuntime;
  agentId: string;
  model: () => string;
  onRecorded?: (usage: AssistantMessage['message']['usage'], costUsd: number) => void;
}): UsageGuard {
  const { runtime, agentId } = options;
  const ledger = runtime.usage;
  return {
    ensureBudget(stage, estimateTokens) {
      const estimate = {
        tokens: estimateTokens,
        // The cheapest a token can be is a cache read: a lower bound of the request's cost.
        costUsd: ledger.costOf(
          { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: estimateTokens },
          options.model(),
        ).costUsd,
      };
      const shortfall = ledger.shortfall(agentId, estimate);
      if (!shortfall) return;
      const error = budgetExceededError({ runtime, agentId, shortfall, stage });
      stopBudgetSubtree(runtime, shortfall.ownerId, error);
      throw error;
    },
    recordResponse(assistant) {
      const usage = assistant.message.usage;
      const model = options.model();
      const { costUsd, priced } = ledger.record(agentId, usage, model);
      options.onRecorded?.(usage, costUsd);
      // A cost budget cannot stop spend it cannot price: say so once, instead of in silence.
      if (
        !priced &&
        ledger.remaining(agentId).costUsd !== undefined &&
        firstWarning(ledger, agentId)
      ) {
        runtime.events.emit({
          type: 'agent.warning',
          agentId,
          timestamp: new Date().toISOString(),
          code: 'BUDGET_UNPRICED',
          message: `${agentId === MAIN_AGENT_ID ? 'The main agent' : `Agent ${agentId}`} runs ${model}, which the price table has no price for, so its spend counts as $0 against the cost budget (maxCostUsd) over it, which therefore never stops it. Add a priceTable entry for ${model}, or bound it with maxTokens.`,
        });
      }
      const figures = ledger.figures(agentId);
      runtime.events.emit({
        type: 'agent.cost',
        agentId,
        timestamp: new Date().toISOString(),
        usage,
        totalUsage: figures.usage,
        costUsd: figures.costUsd,
        treeCostUsd: figures.treeCostUsd,
        priced: figures.priced,
        remaining: ledger.remaining(agentId),
        sessionRemaining: ledger.remaining(MAIN_AGENT_ID),
      });
    },
  };
}
