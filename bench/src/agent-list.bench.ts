import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rules, startSim } from '@delegate/api-sim';
import { getBuiltInAgents, parseAgentFromMarkdown } from '@delegate/agent-defs';
import type { AgentDefinition } from '@delegate/core';
import { DelegateSession, createApiClient } from '@delegate/runtime';
import { type BenchResult, checkTarget } from './harness.js';

// Agent-list placement (issue 17): the cache a session writes when agents are added while it
// runs, with the list of agent types in the Agent tool's description (a new agent changes
// the tools, the first part of the cache key, so the whole prefix is written again) against
// a `<system-reminder>` message (the tools stay; only the new reminder is new).

const WRITE = 1.25;
const READ = 0.1;

function agent(name: string): AgentDefinition {
  const parsed = parseAgentFromMarkdown({
    filePath: `/bench/${name}.md`,
    baseDir: '/bench',
    content: `---\nname: ${name}\ndescription: Handles ${name} work in this repository\n---\nYou do ${name} work.`,
    source: 'projectSettings',
  });
  if (!parsed.ok) throw new Error(parsed.diagnostic.reason);
  return parsed.agent;
}

type Totals = { read: number; written: number; uncached: number };

async function session(options: {
  listInMessages: boolean;
  turns: number;
  addAt: readonly number[];
}): Promise<Totals> {
  const sim = await startSim({ policy: rules([], { fallback: 'Noted.' }) });
  const home = await mkdtemp(join(tmpdir(), 'delegate-bench-list-'));
  try {
    let agents = [...getBuiltInAgents()];
    const created = await DelegateSession.create({
      cwd: home,
      homeDir: home,
      client: createApiClient({ apiKey: 'bench', baseURL: sim.url }),
      agentDefinitions: { activeAgents: agents, allAgents: agents },
      transcriptDir: false,
      agentListInMessages: options.listInMessages,
      // A realistic prefix: project instructions as a CLAUDE.md would give them.
      userContext: { projectInstructions: 'Keep changes small and tested. '.repeat(300) },
    });
    for (let turn = 0; turn < options.turns; turn++) {
      if (options.addAt.includes(turn)) {
        agents = [...agents, agent(`helper-${turn}`)];
        const definitions = { activeAgents: agents, allAgents: agents };
        // What a host does when agent files change on disk mid-session.
        created.context.options.agentDefinitions = definitions;
        created.runtime.getAgentDefinitions = () => definitions;
      }
      await created.send(`Step ${turn + 1}: note the current state.`);
    }
    created.abort();
    await created.flush();
    const totals = { read: 0, written: 0, uncached: 0 };
    for (const entry of sim.journal.entries) {
      if (!entry.usage) continue;
      totals.read += entry.usage.cache_read_input_tokens;
      totals.written += entry.usage.cache_creation_input_tokens;
      totals.uncached += entry.usage.input_tokens;
    }
    return totals;
  } finally {
    await sim.close();
    await rm(home, { recursive: true, force: true });
  }
}

export default async function bench(options: { quick?: boolean } = {}): Promise<BenchResult[]> {
  const turns = options.quick ? 4 : 12;
  const addAt = options.quick ? [2] : [3, 6, 9];
  const reminder = await session({ listInMessages: true, turns, addAt });
  const description = await session({ listInMessages: false, turns, addAt });
  const billed = (totals: Totals) => totals.written * WRITE + totals.read * READ + totals.uncached;
  const metrics = {
    reminderWrittenTokens: reminder.written,
    reminderReadTokens: reminder.read,
    reminderUncachedTokens: reminder.uncached,
    reminderBilledUnits: Math.round(billed(reminder)),
    descriptionWrittenTokens: description.written,
    descriptionReadTokens: description.read,
    descriptionUncachedTokens: description.uncached,
    descriptionBilledUnits: Math.round(billed(description)),
    writtenReminderOverDescription:
      Math.round((reminder.written / Math.max(1, description.written)) * 1000) / 1000,
  };
  return [
    {
      name: `agent list: cache written over a ${turns}-turn session with ${addAt.length} agents added mid-session, <system-reminder> vs tool description`,
      metrics,
      conditions: `api-sim, zero latency; one main agent, ${turns} prompts answered without tools, a new agent definition before prompts ${addAt.map((turn) => turn + 1).join(', ')}; built-in agents, ~2k tokens of project instructions; all token figures from api-sim's cache model (estimates)`,
      targets: [checkTarget(metrics, 'writtenReminderOverDescription', '<=', 1)],
      notes: {
        default: 'agentListInMessages: true (the <system-reminder>)',
        source: "api-sim's cache model (estimate)",
      },
    },
  ];
}
