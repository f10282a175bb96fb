import {
  type BudgetRemaining,
  type CompleteUsage,
  type PriceTable,
  type Usage,
  DEFAULT_PRICE_TABLE,
  addUsage,
  completeUsage,
  costOfUsage,
  emptyUsage,
  totalTokens,
} from '@delegate/core';

/** Id of the main agent in the usage tree and in `agent.cost` events. */
export const MAIN_AGENT_ID = 'main';

/** A token and cost budget; a field left out has no limit. */
export type AgentBudget = {
  /** Most tokens (all input, cache reads and writes included, plus output). */
  maxTokens?: number;
  /** Most US dollars, priced by the session's price table. */
  maxCostUsd?: number;
};

/** One agent in the session's usage tree, with its own figures and its subtree's. */
export type AgentUsageNode = {
  /** Agent id (`main` for the main agent). */
  agentId: string;
  /** Agent type (`main` for the main agent, `fork` for forks). */
  agentType: string;
  /** Short description from the Agent call (empty for the main agent). */
  description: string;
  /** Model it runs on. */
  model: string;
  /** The agent that started it (absent for the main agent). */
  parentAgentId?: string;
  /** Usage summed over every response the agent kept (retried attempts never count). */
  usage: CompleteUsage;
  /** Cost of `usage` in US dollars. */
  costUsd: number;
  /** False when a response's model is missing from the price table (it counted as 0). */
  priced: boolean;
  /** Usage of the agent and every descendant. */
  treeUsage: CompleteUsage;
  /** Cost of `treeUsage` in US dollars. */
  treeCostUsd: number;
  /** The agent's own budget (the session's, for the main agent). */
  budget: AgentBudget;
  /** What it may still spend: the least of its own budget and every ancestor's. */
  remaining: BudgetRemaining;
  /** Agents it started, oldest first. */
  children: AgentUsageNode[];
};

/** Which budget ran out, and how. */
export type BudgetShortfall = {
  /** The agent whose budget ran out (the agent itself or an ancestor). */
  ownerId: string;
  /** Which limit. */
  dimension: 'tokens' | 'cost';
  /** The limit. */
  limit: number;
  /** What the owner's subtree used so far. */
  used: number;
  /** What the next request was estimated to need (0 when the budget is spent outright). */
  needed: number;
};

type Node = {
  agentId: string;
  agentType: string;
  description: string;
  model: string;
  parentId: string | undefined;
  budget: AgentBudget;
  usage: CompleteUsage;
  costUsd: number;
  priced: boolean;
  treeUsage: CompleteUsage;
  treeTokens: number;
  treeCostUsd: number;
  children: string[];
};

/** What {@link UsageLedger.register} takes. */
export type LedgerEntry = {
  /** Agent id. */
  agentId: string;
  /** The agent that started it; unknown or absent means the main agent. */
  parentAgentId?: string;
  /** Agent type. */
  agentType: string;
  /** Short description. */
  description: string;
  /** Model it runs on. */
  model: string;
  /** Its own budget. */
  budget: AgentBudget;
};

function node(entry: LedgerEntry, parentId: string | undefined): Node {
  return {
    agentId: entry.agentId,
    agentType: entry.agentType,
    description: entry.description,
    model: entry.model,
    parentId,
    budget: entry.budget,
    usage: emptyUsage(),
    costUsd: 0,
    priced: true,
    treeUsage: emptyUsage(),
    treeTokens: 0,
    treeCostUsd: 0,
    children: [],
  };
}

/**
 * The session's usage and cost per agent, as a tree rooted at the main agent, and the
 * budgets on it. A response is recorded once, when the loop keeps it, so a retried stream
 * is never counted twice. An agent's remaining budget is the least, over itself and every
 * ancestor, of that agent's limit minus what its whole subtree used: a tree never spends
 * more than its root allows, whatever mix of foreground, background and fork agents it holds.
 */
export class UsageLedger {
  private readonly nodes = new Map<string, Node>();
  /** The price table costs are computed with. */
  readonly prices: Readonly<PriceTable>;

  constructor(options: {
    prices?: Readonly<PriceTable>;
    sessionBudget: AgentBudget;
    model: string;
  }) {
    this.prices = options.prices
      ? { ...DEFAULT_PRICE_TABLE, ...options.prices }
      : DEFAULT_PRICE_TABLE;
    this.nodes.set(
      MAIN_AGENT_ID,
      node(
        {
          agentId: MAIN_AGENT_ID,
          agentType: MAIN_AGENT_ID,
          description: '',
          model: options.model,
          budget: options.sessionBudget,
        },
        undefined,
      ),
    );
  }

  /** Adds an agent under its parent (the main agent when the parent is unknown); a known agent keeps its figures. */
  register(entry: LedgerEntry): void {
    const existing = this.nodes.get(entry.agentId);
    if (existing) {
      existing.budget = entry.budget;
      return;
    }
    const parentId =
      entry.parentAgentId && this.nodes.has(entry.parentAgentId)
        ? entry.parentAgentId
        : MAIN_AGENT_ID;
    this.nodes.set(entry.agentId, node(entry, parentId));
    this.nodes.get(parentId)?.children.push(entry.agentId);
  }

  /** True when the agent is in the tree. */
  has(agentId: string): boolean {
    return this.nodes.has(agentId);
  }

  /** The cost of `usage` on `model` with this ledger's prices. */
  costOf(usage: Usage | null | undefined, model: string): { costUsd: number; priced: boolean } {
    return costOfUsage(usage, model, this.prices);
  }

  /** Records one kept response of `agentId` and returns its cost. */
  record(
    agentId: string,
    usage: Usage | null | undefined,
    model: string,
  ): { costUsd: number; priced: boolean } {
    const own = this.nodes.get(agentId) ?? this.nodes.get(MAIN_AGENT_ID)!;
    const cost = this.costOf(usage, model);
    const tokens = totalTokens(usage);
    own.usage = addUsage(own.usage, usage);
    own.costUsd += cost.costUsd;
    if (!cost.priced) own.priced = false;
    for (let current: Node | undefined = own; current; current = this.parentOf(current)) {
      current.treeUsage = addUsage(current.treeUsage, usage);
      current.treeTokens += tokens;
      current.treeCostUsd += cost.costUsd;
    }
    return cost;
  }

  /**
   * The first budget on the agent's chain (itself, then its ancestors) that cannot pay
   * for a request of at least `estimate` tokens costing at least `estimateUsd`, or undefined.
   */
  shortfall(
    agentId: string,
    estimate: { tokens: number; costUsd: number } = { tokens: 0, costUsd: 0 },
  ): BudgetShortfall | undefined {
    for (let current = this.nodes.get(agentId); current; current = this.parentOf(current)) {
      const { maxTokens, maxCostUsd } = current.budget;
      if (maxTokens !== undefined && current.treeTokens + estimate.tokens >= maxTokens)
        return {
          ownerId: current.agentId,
          dimension: 'tokens',
          limit: maxTokens,
          used: current.treeTokens,
          needed: estimate.tokens,
        };
      if (maxCostUsd !== undefined && current.treeCostUsd + estimate.costUsd >= maxCostUsd)
        return {
          ownerId: current.agentId,
          dimension: 'cost',
          limit: maxCostUsd,
          used: current.treeCostUsd,
          needed: estimate.costUsd,
        };
    }
    return undefined;
  }

  /** What the agent may still spend (the least over its chain); a dimension without any limit is absent. */
  remaining(agentId: string): BudgetRemaining {
    let tokens: number | undefined;
    let costUsd: number | undefined;
    for (let current = this.nodes.get(agentId); current; current = this.parentOf(current)) {
      const { maxTokens, maxCostUsd } = current.budget;
      if (maxTokens !== undefined)
        tokens = Math.min(tokens ?? Infinity, Math.max(0, maxTokens - current.treeTokens));
      if (maxCostUsd !== undefined)
        costUsd = Math.min(costUsd ?? Infinity, Math.max(0, maxCostUsd - current.treeCostUsd));
    }
    return {
      ...(tokens !== undefined ? { tokens } : {}),
      ...(costUsd !== undefined ? { costUsd } : {}),
    };
  }

  /** Ids of every descendant of the agent, parents before children. */
  descendants(agentId: string): string[] {
    const found: string[] = [];
    const pending = [...(this.nodes.get(agentId)?.children ?? [])];
    while (pending.length > 0) {
      const id = pending.shift()!;
      found.push(id);
      pending.push(...(this.nodes.get(id)?.children ?? []));
    }
    return found;
  }

  /** The agent's own figures and its subtree's cost, without building the tree. */
  figures(agentId: string): {
    usage: CompleteUsage;
    costUsd: number;
    treeCostUsd: number;
    priced: boolean;
  } {
    const current = this.nodes.get(agentId) ?? this.nodes.get(MAIN_AGENT_ID)!;
    return {
      usage: completeUsage(current.usage),
      costUsd: current.costUsd,
      treeCostUsd: current.treeCostUsd,
      priced: current.priced,
    };
  }

  /** The tree under `agentId` (default the whole session), as a snapshot. */
  tree(agentId: string = MAIN_AGENT_ID): AgentUsageNode | undefined {
    const current = this.nodes.get(agentId);
    if (!current) return undefined;
    return {
      agentId: current.agentId,
      agentType: current.agentType,
      description: current.description,
      model: current.model,
      ...(current.parentId ? { parentAgentId: current.parentId } : {}),
      usage: completeUsage(current.usage),
      costUsd: current.costUsd,
      priced: current.priced,
      treeUsage: completeUsage(current.treeUsage),
      treeCostUsd: current.treeCostUsd,
      budget: { ...current.budget },
      remaining: this.remaining(current.agentId),
      children: current.children
        .map((child) => this.tree(child))
        .filter((child): child is AgentUsageNode => child !== undefined),
    };
  }

  private parentOf(current: Node): Node | undefined {
    return current.parentId === undefined ? undefined : this.nodes.get(current.parentId);
  }
}
