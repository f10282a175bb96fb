import { TOOL_NAMES } from '@delegate/core';
import {
  resolveAgentTools,
  type AgentToolFields,
  type FilterableTool,
  type ResolvedAgentTools,
} from '@delegate/tool-filter';
import { medianTime, type BenchResult } from './harness.js';

// `pnpm bench --quick` runs every scenario at a tiny size (CI checks that it runs, not its figures).
const QUICK = process.argv.includes('--quick');
const TOOL_COUNT = QUICK ? 200 : 5_000;
const AGENT_COUNT = QUICK ? 10 : 200;
const MCP_SERVERS = 50;

/** Built-in tools plus MCP tools spread over servers plus a few plain custom tools. */
function buildToolPool(): FilterableTool[] {
  const tools: FilterableTool[] = Object.values(TOOL_NAMES)
    .filter((name) => name !== TOOL_NAMES.agentLegacy)
    .map((name) =>
      name === TOOL_NAMES.agent ? { name, aliases: [TOOL_NAMES.agentLegacy] } : { name },
    );
  for (let index = 0; tools.length < TOOL_COUNT; index++) {
    tools.push(
      index % 10 === 0
        ? { name: `CustomTool${index}`, requiresUserInteraction: () => index % 20 === 0 }
        : { name: `mcp__server${index % MCP_SERVERS}__tool${index}` },
    );
  }
  return tools;
}

/** A deterministic mix: wildcard, explicit lists and wildcard-with-disallowed agents. */
function buildAgents(tools: readonly FilterableTool[]): AgentToolFields[] {
  const agents: AgentToolFields[] = [];
  for (let index = 0; index < AGENT_COUNT; index++) {
    const source = index % 4 === 0 ? 'built-in' : 'projectSettings';
    const pick = (offset: number): string =>
      tools[(index * 37 + offset * 101) % tools.length]?.name ?? 'Read';
    switch (index % 3) {
      case 0:
        agents.push({ source, tools: index % 2 === 0 ? undefined : ['*'] });
        break;
      case 1:
        agents.push({
          source,
          tools: [
            'Read',
            'Grep',
            'Bash(git *)',
            'Agent(worker, researcher)',
            'NoSuchTool',
            ...Array.from({ length: 25 }, (_, offset) => pick(offset)),
          ],
        });
        break;
      default:
        agents.push({
          source,
          disallowedTools: [
            'Bash',
            'Write(src/**)',
            ...Array.from({ length: 20 }, (_, offset) => pick(offset)),
          ],
        });
    }
  }
  return agents;
}

/** Resolves tools for 200 agents over a 5,000-tool pool, sync and async. */
export default async function toolFilterBench(): Promise<BenchResult[]> {
  const tools = buildToolPool();
  const agents = buildAgents(tools);
  const results: BenchResult[] = [];
  for (const isAsync of [false, true]) {
    let resolvedTotal = 0;
    const resolveAll = (): void => {
      resolvedTotal = 0;
      for (const agent of agents) {
        const result: ResolvedAgentTools = resolveAgentTools(agent, tools, { isAsync });
        resolvedTotal += result.resolvedTools.length;
      }
    };
    const ms = await medianTime(resolveAll, { runs: 7, warmup: 2 });
    results.push({
      name: `tool-filter: resolveAgentTools for ${AGENT_COUNT} agents over ${TOOL_COUNT} tools (${isAsync ? 'async' : 'sync'})`,
      metrics: {
        agentsPerSecond: Math.round(AGENT_COUNT / (ms / 1000)),
        msPerAgent: Number((ms / AGENT_COUNT).toFixed(4)),
        msTotal: Number(ms.toFixed(2)),
      },
      notes: {
        agents: AGENT_COUNT,
        tools: TOOL_COUNT,
        mix: 'wildcard / explicit lists / disallowed lists, 1:1:1',
        resolvedToolsPerRun: resolvedTotal,
      },
    });
  }
  return results;
}
