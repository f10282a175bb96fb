import type { CompleteUsage } from '@delegate/core';
import type { RunResult } from '../output/run-renderer.js';
import { type AgentNode, AgentTree, type UsageTotal } from '../usage/agent-tree.js';
import { WORKER_DESCRIPTION_PREFIX } from './demo-policy.js';

export type { UsageTotal } from '../usage/agent-tree.js';

/** The survey workers of a demo run (found by their Agent call's description). */
export function workerNodes(tree: AgentTree): AgentNode[] {
  return tree.nodes().filter((node) => node.description.startsWith(WORKER_DESCRIPTION_PREFIX));
}

/** What the demo prints (or returns with `--json`) about one run. */
export type DemoRunSummary = {
  /** How the workers were started. */
  variant: 'fork' | 'fresh';
  /** How the run ended. */
  exitReason: RunResult['exitReason'];
  /** Wall time. */
  durationMs: number;
  /** The main agent's final answer. */
  answer: string;
  /** Every agent with its report, usage and cost. */
  agents: Array<{
    agentId: string;
    parentAgentId?: string;
    agentType: string;
    description: string;
    mode: string;
    status: string;
    report?: string;
    error?: string;
    usage: CompleteUsage;
    costUsd: number;
  }>;
  /** The three survey workers together. */
  workers: UsageTotal;
  /** The whole run. */
  total: UsageTotal;
};

/** Summarizes a finished demo run. */
export function summarizeDemoRun(variant: 'fork' | 'fresh', result: RunResult): DemoRunSummary {
  const nodes = result.tree.nodes();
  return {
    variant,
    exitReason: result.exitReason,
    durationMs: result.durationMs,
    answer: result.text,
    agents: nodes.map((node) => ({
      agentId: node.agentId,
      ...(node.parentAgentId !== undefined ? { parentAgentId: node.parentAgentId } : {}),
      agentType: node.agentType,
      description: node.description,
      mode: node.mode,
      status: node.status,
      ...(node.result !== undefined ? { report: node.result } : {}),
      ...(node.error !== undefined ? { error: node.error } : {}),
      usage: node.usage,
      costUsd: node.costUsd,
    })),
    workers: AgentTree.sum(workerNodes(result.tree)),
    total: AgentTree.sum(nodes),
  };
}
