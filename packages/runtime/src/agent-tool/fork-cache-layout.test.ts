import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import {
  type JournalEntry,
  type Policy,
  TOKEN_OVERHEAD,
  estimateBlockTokens,
  rules,
  startSim,
} from '@delegate/api-sim';
import { DelegateError } from '@delegate/core';
import {
  type ForkLayout,
  STRICT_LOOKBACK,
  buildForkRulesForParent,
  diagnoseCacheBreak,
  fingerprintRequest,
  formatCacheBreak,
} from '@delegate/fork-cache';
import {
  agentCall,
  agentOf,
  isMain,
  lastUserBlocks,
  requestBody,
} from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import type { CacheDiagnosisEntry } from '../session/session-options.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const FILES = ['alpha.ts', 'beta.ts', 'gamma.ts'];

/** Three source files of about 2,500 tokens each, read by the parent before it fans out. */
async function writeSources(cwd: string): Promise<void> {
  for (const [index, name] of FILES.entries()) {
    const lines = Array.from(
      { length: 220 },
      (_, line) => `export const value${index}_${line} = compute(${line}, 'part ${index}');`,
    );
    await writeFile(join(cwd, name), `${lines.join('\n')}\n`);
  }
}

/** The parent reads the files one per turn, then starts `forks` forks in one message. */
function fanOutPolicy(forks: number): Policy {
  return rules([
    {
      match: { forkDirective: true },
      reply: (request) => `Scope: ${request.forkDirective}\nResult: nothing wrong.`,
    },
    {
      match: { when: (request) => isMain(request) && request.turnIndex < FILES.length },
      reply: (request) => [
        { type: 'tool_use', name: 'Read', input: { file_path: FILES[request.turnIndex]! } },
      ],
    },
    {
      match: { when: (request) => isMain(request) && request.turnIndex === FILES.length },
      reply: [
        { type: 'text', text: `Splitting the review into ${forks} parts.` },
        ...Array.from({ length: forks }, (_, index) =>
          agentCall({ description: `part ${index + 1}`, prompt: `Review part ${index + 1}` }),
        ),
      ],
    },
    { match: { when: isMain }, reply: 'All parts are back.' },
  ]);
}

const total = (entry: JournalEntry): number =>
  entry.usage!.input_tokens +
  entry.usage!.cache_read_input_tokens +
  entry.usage!.cache_creation_input_tokens;

async function fanOut(options: {
  forks: number;
  layout?: ForkLayout;
  groupToolRuns?: boolean;
  /** Milliseconds to first token: a sibling then reads another's write only if it waited. */
  ttft?: number;
  debug?: (entry: CacheDiagnosisEntry) => void;
}): Promise<{ parentLast: JournalEntry; forks: JournalEntry[]; parentAfter: JournalEntry }> {
  current = await createTestSession({
    policy: fanOutPolicy(options.forks),
    sim: {
      ...(options.groupToolRuns === undefined ? {} : { groupToolRuns: options.groupToolRuns }),
      ...(options.ttft === undefined ? {} : { pacing: { timeToFirstTokenMs: options.ttft } }),
    },
    session: {
      forkEnabled: true,
      permissionMode: 'bypassPermissions',
      ...(options.layout ? { forkLayout: options.layout } : {}),
      ...(options.debug ? { debugCacheDiagnosis: options.debug } : {}),
    },
  });
  await writeSources(current.cwd);
  const { text } = await current.session.send('Review the three files');
  expect(text).toBe('All parts are back.');
  const entries = current.sim.journal.entries.filter((entry) => entry.status === 200);
  const main = entries.filter((entry) => agentOf(entry) === undefined);
  const forks = entries.filter((entry) => agentOf(entry) === 'fork');
  expect(forks).toHaveLength(options.forks);
  return { parentLast: main[FILES.length]!, forks, parentAfter: main[FILES.length + 1]! };
}

describe('fork layouts against api-sim', () => {
  it('puts the fork worker rules in the Agent tool description, which the parent caches, and only a short notice in each fork', async () => {
    const { parentLast, forks } = await fanOut({ forks: 2 });
    const agentTool = requestBody(parentLast).tools!.find((tool) => tool.name === 'Agent') as
      { description: string } | undefined;
    expect(agentTool?.description).toContain(buildForkRulesForParent());
    for (const fork of forks) {
      const blocks = lastUserBlocks(fork);
      const notice = blocks.at(-2)?.text ?? '';
      expect(notice).toContain('<fork-worker-rules>');
      expect(notice.length).toBeLessThan(400);
      expect(blocks.at(-1)?.text).toMatch(/Review part \d/);
      // The tools (and the rules in them) come from the cache.
      expect(fork.usage!.cache_read_input_tokens).toBeGreaterThanOrEqual(total(parentLast));
    }
  });

  it('shared-message: with 16 siblings the later ones wait, read the shared rules notice and write only their own directive line', async () => {
    const { forks } = await fanOut({ forks: 16, layout: 'shared-message', ttft: 150 });
    const [first, ...later] = [...forks].sort((left, right) => left.time - right.time);
    // The first sibling writes what all share (the copied turn, 16 placeholders, the notice).
    expect(first!.usage!.cache_creation_input_tokens).toBeGreaterThan(16 * 20);
    for (const sibling of later) {
      const directive = lastUserBlocks(sibling).at(-1)!;
      const ownLine = estimateBlockTokens(directive as never) + TOKEN_OVERHEAD.message;
      expect(sibling.usage!.cache_creation_input_tokens).toBeGreaterThan(0);
      expect(sibling.usage!.cache_creation_input_tokens).toBeLessThanOrEqual(ownLine);
      expect(sibling.usage!.cache_read_input_tokens).toBeGreaterThanOrEqual(
        total(sibling) - ownLine,
      );
    }
  });

  it('shared-message: 2 siblings share too little to wait for (a time to first token for a few hundred tokens), so both write it', async () => {
    const { forks } = await fanOut({ forks: 2, layout: 'shared-message', ttft: 150 });
    for (const sibling of forks) {
      const directive = lastUserBlocks(sibling).at(-1)!;
      const ownLine = estimateBlockTokens(directive as never) + TOKEN_OVERHEAD.message;
      expect(sibling.usage!.cache_creation_input_tokens).toBeGreaterThan(ownLine + 100);
    }
  });

  it('per-child (the default): each fork holds only its own call, and every sibling writes the same short tail', async () => {
    const { forks } = await fanOut({ forks: 4 });
    const written = forks.map((fork) => fork.usage!.cache_creation_input_tokens);
    for (const fork of forks) {
      const messages = requestBody(fork).messages;
      const copy = messages.at(-2)!.content.filter((block) => block.type === 'tool_use');
      expect(copy).toHaveLength(1);
    }
    // Own call, placeholder, notice and directive: well under 300 tokens each, all alike.
    expect(Math.max(...written)).toBeLessThan(300);
    expect(Math.max(...written) - Math.min(...written)).toBeLessThanOrEqual(4);
  });

  for (const layout of ['per-child', 'shared-message'] as const) {
    for (const forks of [16, 32]) {
      it(`${layout}: ${forks} forks in one message still read the parent's whole history from the cache, counting every block in the lookback`, async () => {
        const result = await fanOut({ forks, layout, groupToolRuns: false });
        for (const fork of result.forks) {
          expect(fork.usage!.cache_read_input_tokens).toBeGreaterThanOrEqual(
            total(result.parentLast),
          );
        }
        // The parent's turn after the fan-out reads what its previous request cached too,
        // although 2 x forks blocks were added since.
        expect(result.parentAfter.usage!.cache_read_input_tokens).toBeGreaterThanOrEqual(
          total(result.parentLast),
        );
      });
    }
  }
});

describe('cache diagnosis of sub-agent requests', () => {
  it('debugCacheDiagnosis gets an entry for every sub-agent request, and each fork reaches the parent cache', async () => {
    const entries: CacheDiagnosisEntry[] = [];
    await fanOut({ forks: 16, layout: 'shared-message', debug: (entry) => entries.push(entry) });
    expect(entries).toHaveLength(16);
    for (const entry of entries) {
      expect(entry).toMatchObject({ agentType: 'fork', turn: 1, comparedWith: 'parent' });
      expect(entry.diagnosis?.reach.reachable).toBe(true);
      expect(entry.line).toMatch(/^no cache break: request b extends request a/);
    }
  });

  it('names the lookback break of a crafted fork request, which api-sim then misses, and passes the planned one', async () => {
    const { parentLast, forks } = await fanOut({ forks: 16, layout: 'shared-message' });
    const planned = forks[0]!.body as Anthropic.MessageCreateParamsStreaming;
    // The crafted request keeps only the breakpoint on its last block (the old placement).
    const crafted = structuredClone(planned);
    for (const message of crafted.messages) {
      if (typeof message.content === 'string') continue;
      for (const block of message.content)
        delete (block as { cache_control?: unknown }).cache_control;
    }
    const lastMessage = crafted.messages.at(-1)!;
    const blocks = lastMessage.content as unknown as Array<Record<string, unknown>>;
    blocks[blocks.length - 1]!.cache_control = { type: 'ephemeral' };

    const parent = fingerprintRequest(parentLast.body as never, { lookback: STRICT_LOOKBACK });
    const good = diagnoseCacheBreak(
      parent,
      fingerprintRequest(planned as never, { lookback: STRICT_LOOKBACK }),
    );
    expect(good.identical).toBe(false);
    expect(!good.identical && good.longerRequest).toBe('b');
    expect(good.reach.reachable).toBe(true);

    const bad = diagnoseCacheBreak(
      parent,
      fingerprintRequest(crafted as never, { lookback: STRICT_LOOKBACK }),
    );
    expect(bad.identical).toBe(false);
    if (bad.identical) return;
    expect(bad.firstDifference.part).toBe('lookback');
    expect(bad.reach.problem).toBe('beyond-lookback');
    expect(bad.reach.distance).toBeGreaterThan(19);
    expect(formatCacheBreak(bad)).toMatch(
      /the nearest cached block \(message \d+ block \d+ \(tool_result\)\) is \d+ blocks before/,
    );

    // The real SDK against a server that counts every block: the parent's request, then each.
    const sim = await startSim({ policy: rules([], { fallback: 'ok' }), groupToolRuns: false });
    try {
      const client = new Anthropic({ apiKey: 'test', baseURL: sim.url, maxRetries: 0 });
      const send = async (body: Anthropic.MessageCreateParamsStreaming) => {
        const message = await client.messages.stream(body).finalMessage();
        return message.usage;
      };
      const parentUsage = await send(parentLast.body as Anthropic.MessageCreateParamsStreaming);
      const parentTokens =
        parentUsage.input_tokens +
        (parentUsage.cache_read_input_tokens ?? 0) +
        (parentUsage.cache_creation_input_tokens ?? 0);
      const craftedUsage = await send(crafted);
      expect(craftedUsage.cache_read_input_tokens ?? 0).toBeLessThan(parentTokens);
      sim.cache.clear();
      await send(parentLast.body as Anthropic.MessageCreateParamsStreaming);
      const plannedUsage = await send(planned);
      expect(plannedUsage.cache_read_input_tokens ?? 0).toBeGreaterThanOrEqual(parentTokens);
    } finally {
      await sim.close();
    }
  });

  it('DELEGATE_DEBUG_CACHE=1 writes one stderr line per sub-agent request', async () => {
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      const text = String(chunk);
      if (text.startsWith('[delegate:cache]')) lines.push(text);
      else return write(chunk, ...rest);
      return true;
    }) as typeof process.stderr.write;
    try {
      current = await createTestSession({
        policy: fanOutPolicy(2),
        session: {
          forkEnabled: true,
          permissionMode: 'bypassPermissions',
          env: { DELEGATE_DEBUG_CACHE: '1' },
        },
      });
      await writeSources(current.cwd);
      await current.session.send('Review the three files');
    } finally {
      process.stderr.write = write;
    }
    expect(lines).toHaveLength(2);
    for (const line of lines)
      expect(line).toMatch(/^\[delegate:cache\] fork \S+ request 1 vs parent: no cache break/);
  });

  it('refuses an unknown forkLayout, naming the option and the layouts', async () => {
    const error = await createTestSession({
      policy: rules([], { fallback: 'ok' }),
      session: { forkLayout: 'tree' as never },
    }).catch((caught: unknown) => caught);
    expect(DelegateError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('options.forkLayout');
    expect((error as Error).message).toContain("'shared-message', 'per-child'");
  });
});
