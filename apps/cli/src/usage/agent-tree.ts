import {
  type AgentColor,
  type AgentEvent,
  type AgentRunMode,
  type CompleteUsage,
  type Message,
  type PriceTable,
  addUsage,
  completeUsage,
  costOfUsage,
  emptyUsage,
} from '@delegate/core';

/** The id the tree gives the main agent (sub-agents have runtime ids such as `a1b2…`). */
export const MAIN_AGENT_ID = 'main';

/** How an agent of the tree runs. */
export type AgentNodeMode = AgentRunMode | 'main';

/** Where an agent of the tree stands. */
export type AgentNodeStatus = 'running' | 'completed' | 'failed' | 'killed';

/** Usage and cost of a group of agents. */
export type UsageTotal = {
  /** Usage summed over the agents. */
  usage: CompleteUsage;
  /** Cost summed over the agents, in US dollars. */
  costUsd: number;
  /** False when some agent's model has no price (its cost counts as 0). */
  priced: boolean;
  /** How many agents. */
  agents: number;
};

/** One agent of a run, with its usage and cost so far. */
export type AgentNode = {
  /** `main`, or the sub-agent's id. */
  agentId: string;
  /** The agent that started it; absent for the main agent. */
  parentAgentId?: string;
  /** Agent type (`fork` for forks, `main` for the main agent). */
  agentType: string;
  /** The Agent call's description. */
  description: string;
  /** How it runs now (a backgrounded foreground agent becomes `background`). */
  mode: AgentNodeMode;
  /** Model id. */
  model: string;
  /** Display color of its definition. */
  color?: AgentColor;
  /** Where it stands. */
  status: AgentNodeStatus;
  /** When its latest run started (ms since epoch). */
  startedAt: number;
  /** When its latest run ended. */
  endedAt?: number;
  /** Usage summed over every response it kept. */
  usage: CompleteUsage;
  /** Cost of `usage` in US dollars. */
  costUsd: number;
  /** False when its model has no price in the table (its cost then counts as 0). */
  priced: boolean;
  /** The tool it is running now, if any. */
  currentTool?: string;
  /** Tool calls so far. */
  toolUseCount: number;
  /** Its report, once completed. */
  result?: string;
  /** What went wrong, once failed or stopped. */
  error?: string;
  /** Task id, for agents tracked as tasks. */
  taskId?: string;
  /** Id of the Agent call that started it. */
  toolUseId?: string;
  /** Ids of the agents it started, in start order. */
  children: string[];
};

/**
 * The agent tree of a session as renderers need it: built from the session's lifecycle
 * events and the main agent's messages, with usage summed per agent from the responses it
 * kept and cost from a price table. `version` changes whenever anything does.
 */
export class AgentTree {
  private readonly byId = new Map<string, AgentNode>();
  /** Agents whose figures come from the runtime's `agent.cost` events (not summed here). */
  private readonly costFromRuntime = new Set<string>();
  private readonly prices: Readonly<PriceTable> | undefined;
  private readonly now: () => number;
  /** Increases on every change, so a renderer can skip frames where nothing changed. */
  version = 0;

  constructor(options: { mainModel: string; prices?: Readonly<PriceTable>; now?: () => number }) {
    this.prices = options.prices;
    this.now = options.now ?? Date.now;
    this.byId.set(MAIN_AGENT_ID, {
      agentId: MAIN_AGENT_ID,
      agentType: 'main',
      description: 'main agent',
      mode: 'main',
      model: options.mainModel,
      status: 'completed',
      startedAt: this.now(),
      usage: emptyUsage(),
      costUsd: 0,
      priced: true,
      toolUseCount: 0,
      children: [],
    });
  }

  /** The main agent's node. */
  get main(): AgentNode {
    return this.byId.get(MAIN_AGENT_ID)!;
  }

  /** One agent, by id. */
  get(agentId: string): AgentNode | undefined {
    return this.byId.get(agentId);
  }

  /** Every agent, parents before their children, siblings in start order. */
  nodes(): AgentNode[] {
    const ordered: AgentNode[] = [];
    const visit = (node: AgentNode): void => {
      ordered.push(node);
      for (const child of node.children) {
        const next = this.byId.get(child);
        if (next) visit(next);
      }
    };
    visit(this.main);
    return ordered;
  }

  /** How deep an agent sits (the main agent is 0). */
  depth(agentId: string): number {
    let depth = 0;
    let node = this.byId.get(agentId);
    while (node?.parentAgentId !== undefined) {
      depth++;
      node = this.byId.get(node.parentAgentId);
    }
    return depth;
  }

  /** Usage and cost of the whole tree. */
  totals(): UsageTotal {
    return AgentTree.sum([...this.byId.values()]);
  }

  /** Usage and cost of some agents together. */
  static sum(nodes: readonly AgentNode[]): UsageTotal {
    let usage = emptyUsage();
    let costUsd = 0;
    let priced = true;
    for (const node of nodes) {
      usage = addUsage(usage, node.usage);
      costUsd += node.costUsd;
      priced &&= node.priced;
    }
    return { usage, costUsd, priced, agents: nodes.length };
  }

  /** Marks the main agent as running a turn (or done with it). */
  setMainStatus(status: AgentNodeStatus, error?: string): void {
    const main = this.main;
    if (status === 'running' && main.status !== 'running') {
      main.startedAt = this.now();
      delete main.endedAt;
    }
    main.status = status;
    if (status !== 'running') {
      main.endedAt = this.now();
      delete main.currentTool;
    }
    if (error !== undefined) main.error = error;
    this.version++;
  }

  /** Takes one message of the main agent's conversation. */
  addMainMessage(message: Message): void {
    this.addMessage(this.main, message);
  }

  /** Takes one lifecycle event. */
  handleEvent(event: AgentEvent): void {
    switch (event.type) {
      case 'agent.started':
        this.start(event);
        break;
      case 'agent.message': {
        const node = this.byId.get(event.agentId);
        if (node) this.addMessage(node, event.message);
        break;
      }
      case 'agent.tool_use': {
        const node = this.byId.get(event.agentId);
        if (node) node.currentTool = event.toolName;
        break;
      }
      case 'agent.backgrounded': {
        const node = this.byId.get(event.agentId);
        if (node) {
          node.mode = 'background';
          node.taskId = event.taskId;
        }
        break;
      }
      case 'agent.completed':
        this.end(event.agentId, 'completed', { result: event.result });
        break;
      case 'agent.failed':
        this.end(event.agentId, event.code === 'ABORTED' ? 'killed' : 'failed', {
          error: event.error,
        });
        break;
      case 'agent.cost':
        this.takeRuntimeCost(event);
        break;
      case 'agent.progress':
      case 'agent.background_hint':
      case 'agent.notification':
      case 'agent.warning':
      case 'agent.cache_evictable':
        break;
    }
    this.version++;
  }

  private start(event: Extract<AgentEvent, { type: 'agent.started' }>): void {
    const existing = this.byId.get(event.agentId);
    if (existing) {
      // A continued agent (SendMessage, resume) runs again under the same id.
      existing.status = 'running';
      existing.startedAt = this.now();
      existing.mode = event.mode;
      delete existing.endedAt;
      return;
    }
    const parentAgentId = event.parentAgentId ?? MAIN_AGENT_ID;
    const node: AgentNode = {
      agentId: event.agentId,
      parentAgentId,
      agentType: event.agentType,
      description: event.description,
      mode: event.mode,
      model: event.model,
      status: 'running',
      startedAt: this.now(),
      usage: emptyUsage(),
      costUsd: 0,
      priced: true,
      toolUseCount: 0,
      children: [],
      ...(event.color ? { color: event.color } : {}),
      ...(event.taskId ? { taskId: event.taskId } : {}),
      ...(event.toolUseId ? { toolUseId: event.toolUseId } : {}),
    };
    this.byId.set(event.agentId, node);
    (this.byId.get(parentAgentId) ?? this.main).children.push(event.agentId);
  }

  /** The runtime's own figures for the agent: they count each kept response once, with the session's price table. */
  private takeRuntimeCost(event: Extract<AgentEvent, { type: 'agent.cost' }>): void {
    const node = this.byId.get(event.agentId);
    if (!node) return;
    this.costFromRuntime.add(node.agentId);
    node.usage = completeUsage(event.totalUsage);
    node.costUsd = event.costUsd;
    node.priced = event.priced;
  }

  private end(
    agentId: string,
    status: AgentNodeStatus,
    outcome: { result?: string; error?: string },
  ): void {
    const node = this.byId.get(agentId);
    if (!node) return;
    node.status = status;
    node.endedAt = this.now();
    delete node.currentTool;
    if (outcome.result !== undefined) node.result = outcome.result;
    if (outcome.error !== undefined) node.error = outcome.error;
  }

  private addMessage(node: AgentNode, message: Message): void {
    if (message.type === 'assistant') {
      if (!this.costFromRuntime.has(node.agentId)) {
        node.usage = addUsage(node.usage, message.message.usage);
        const cost = costOfUsage(node.usage, message.message.model || node.model, this.prices);
        node.costUsd = cost.costUsd;
        node.priced = cost.priced;
      }
      const calls = message.message.content.filter((block) => block.type === 'tool_use');
      node.toolUseCount += calls.length;
      const last = calls.at(-1);
      if (last?.type === 'tool_use') node.currentTool = last.name;
      else delete node.currentTool;
    } else if (message.type === 'user' && Array.isArray(message.message.content)) {
      if (message.message.content.some((block) => block.type === 'tool_result'))
        delete node.currentTool;
    }
    this.version++;
  }
}
