import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { estimateBlockTokens } from './estimate-tokens.js';
import { createManualClock } from './manual-clock.js';
import { startSim, type Sim, type SimOptions } from './start-sim.js';

const MODEL = 'claude-sonnet-5';
const MINUTE = 60_000;
let sim: Sim | undefined;

async function open(options: SimOptions = {}): Promise<{ sim: Sim; client: Anthropic }> {
  sim = await startSim({ policy: () => 'ok', ...options });
  return { sim, client: new Anthropic({ apiKey: 'test', baseURL: sim.url, maxRetries: 0 }) };
}

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/** About `tokens` tokens of text (4 bytes per token). */
function filler(tokens: number, word = 'context'): string {
  const unit = `${word} `;
  return unit.repeat(Math.ceil((tokens * 4) / unit.length)).slice(0, tokens * 4);
}

const BIG_SYSTEM = filler(1500, 'rules');
const ephemeral = { type: 'ephemeral' as const };

function total(usage: Anthropic.Usage): number {
  return (
    usage.input_tokens +
    (usage.cache_creation_input_tokens ?? 0) +
    (usage.cache_read_input_tokens ?? 0)
  );
}

describe('prompt-cache accounting through the real SDK', () => {
  it('writes a prefix once and reads it on the next request', async () => {
    const { client, sim } = await open();
    const ask = (question: string) =>
      client.messages.create({
        model: MODEL,
        max_tokens: 50,
        system: [{ type: 'text', text: BIG_SYSTEM, cache_control: ephemeral }],
        messages: [{ role: 'user', content: question }],
      });
    const first = await ask('first question');
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(1500);
    expect(first.usage.cache_creation?.ephemeral_5m_input_tokens).toBe(
      first.usage.cache_creation_input_tokens,
    );
    const second = await ask('second, longer question');
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBe(0);
    expect(second.usage.input_tokens).toBe(
      total(second.usage) - (second.usage.cache_read_input_tokens ?? 0),
    );
    expect(sim.cache.size).toBe(1);
  });

  it('finds the old prefix when the breakpoint moves forward, and writes the new stretch', async () => {
    const { client } = await open();
    const system = [{ type: 'text' as const, text: BIG_SYSTEM }];
    const first = await client.messages.create({
      model: MODEL,
      max_tokens: 50,
      system,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'turn one', cache_control: ephemeral }] },
      ],
    });
    const second = await client.messages.create({
      model: MODEL,
      max_tokens: 50,
      system,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'turn one' }] },
        { role: 'assistant', content: 'answer one' },
        { role: 'user', content: [{ type: 'text', text: 'turn two', cache_control: ephemeral }] },
      ],
    });
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBe(total(second.usage) - total(first.usage));
    expect(second.usage.input_tokens).toBe(0);
  });

  it('checks at most 20 positions per breakpoint, the breakpoint itself counted as the first', async () => {
    const { client } = await open();
    const system = [{ type: 'text' as const, text: BIG_SYSTEM, cache_control: ephemeral }];
    const written = await client.messages.create({
      model: MODEL,
      max_tokens: 50,
      system,
      messages: [{ role: 'user', content: 'warm the cache' }],
    });
    const withBlocks = (count: number, label: string) =>
      client.messages.create({
        model: MODEL,
        max_tokens: 50,
        system: [{ type: 'text', text: BIG_SYSTEM }],
        messages: [
          {
            role: 'user',
            content: Array.from({ length: count }, (_, index) => ({
              type: 'text' as const,
              text: `${label} block ${index}`,
              ...(index === count - 1 ? { cache_control: ephemeral } : {}),
            })),
          },
        ],
      });
    // The system block is position 0; a breakpoint at position 19 checks 19, 18, …, 0 and finds it…
    const within = await withBlocks(19, 'near');
    expect(within.usage.cache_read_input_tokens).toBe(written.usage.cache_creation_input_tokens);
    // …one at position 20 checks 20 down to 1, so the whole prefix is written again.
    const beyond = await withBlocks(20, 'far');
    expect(beyond.usage.cache_read_input_tokens).toBe(0);
    expect(beyond.usage.cache_creation_input_tokens).toBe(total(beyond.usage));
  });

  it('counts a run of tool_use blocks, and a run of tool_result blocks, as one lookback position', async () => {
    const calls = 30;
    const system = [{ type: 'text' as const, text: BIG_SYSTEM }];
    const opening: Anthropic.MessageParam = {
      role: 'user',
      content: [{ type: 'text', text: 'run every check', cache_control: ephemeral }],
    };
    const fanOut = (): Anthropic.MessageParam[] => [
      { role: 'user', content: 'run every check' },
      {
        role: 'assistant',
        content: Array.from({ length: calls }, (_, index) => ({
          type: 'tool_use' as const,
          id: `toolu_${index}`,
          name: 'Check',
          input: { index },
        })),
      },
      {
        role: 'user',
        content: Array.from({ length: calls }, (_, index) => ({
          type: 'tool_result' as const,
          tool_use_id: `toolu_${index}`,
          content: `check ${index} passed`,
          ...(index === calls - 1 ? { cache_control: ephemeral } : {}),
        })),
      },
    ];
    const tools = [
      { name: 'Check', description: 'Runs a check.', input_schema: { type: 'object' as const } },
    ];
    const readAfterFanOut = async (groupToolRuns: boolean | undefined) => {
      const { client } = await open(groupToolRuns === undefined ? {} : { groupToolRuns });
      const first = await client.messages.create({
        model: MODEL,
        max_tokens: 50,
        system,
        tools,
        messages: [opening],
      });
      const second = await client.messages.create({
        model: MODEL,
        max_tokens: 50,
        system,
        tools,
        messages: fanOut(),
      });
      await sim?.close();
      return { written: first.usage.cache_creation_input_tokens, second: second.usage };
    };
    // The Claude API (the default): the 60 blocks are two positions, so the opening entry is found.
    const grouped = await readAfterFanOut(undefined);
    expect(grouped.second.cache_read_input_tokens).toBe(grouped.written);
    // Counting every block, the opening entry lies 60 positions back: everything is written again.
    const perBlock = await readAfterFanOut(false);
    expect(perBlock.second.cache_read_input_tokens).toBe(0);
    expect(perBlock.second.cache_creation_input_tokens).toBe(total(perBlock.second));
  });

  it("counts an entry's lifetime from the start of the request that wrote it", async () => {
    const clock = createManualClock(0);
    // The policy runs after the request arrived and before the response starts: a slow start.
    const { client, sim } = await open({
      clock,
      policy: () => {
        clock.advance(3 * MINUTE);
        return 'ok';
      },
    });
    const ask = () =>
      client.messages.create({
        model: MODEL,
        max_tokens: 50,
        system: [{ type: 'text', text: BIG_SYSTEM, cache_control: ephemeral }],
        messages: [{ role: 'user', content: 'question' }],
      });
    await ask();
    expect(sim.cache.entries().map((entry) => entry.expiresAt)).toEqual([5 * MINUTE]);
    // Minute 6: a response start at minute 3 would have kept it until minute 8; the API's does not.
    clock.set(5 * MINUTE + 1);
    const later = await ask();
    expect(later.usage.cache_read_input_tokens).toBe(0);
  });

  it('neither writes nor reads prefixes below the model minimum', async () => {
    const { client, sim } = await open();
    const ask = (model: string, system: string) =>
      client.messages.create({
        model,
        max_tokens: 50,
        system: [{ type: 'text', text: system, cache_control: ephemeral }],
        messages: [{ role: 'user', content: 'hello' }],
      });
    const small = filler(600);
    await ask(MODEL, small);
    const again = await ask(MODEL, small);
    expect(again.usage.cache_creation_input_tokens).toBe(0);
    expect(again.usage.cache_read_input_tokens).toBe(0);
    expect(sim.cache.size).toBe(0);
    // 1,500 tokens is enough for sonnet (1,024) but not for haiku (2,048).
    expect((await ask('claude-haiku-5-5', BIG_SYSTEM)).usage.cache_creation_input_tokens).toBe(0);
    expect((await ask(MODEL, BIG_SYSTEM)).usage.cache_creation_input_tokens).toBeGreaterThan(0);
    // 3,000 tokens: enough for a Haiku 3 model (2,048), not for Haiku 4.5 (4,096).
    const mid = filler(3000, 'mid');
    expect((await ask('claude-3-5-haiku', mid)).usage.cache_creation_input_tokens).toBeGreaterThan(
      0,
    );
    expect((await ask('claude-haiku-4-5', mid)).usage.cache_creation_input_tokens).toBe(0);
    expect((await ask('claude-opus-4-5', mid)).usage.cache_creation_input_tokens).toBe(0);
    expect((await ask('claude-opus-4-6', mid)).usage.cache_creation_input_tokens).toBe(0);
  });

  it('expires entries after their TTL on the injected clock and refreshes them on read', async () => {
    const clock = createManualClock(1_000_000);
    const { client } = await open({ clock });
    const ask = () =>
      client.messages.create({
        model: MODEL,
        max_tokens: 50,
        system: [{ type: 'text', text: BIG_SYSTEM, cache_control: ephemeral }],
        messages: [{ role: 'user', content: 'question' }],
      });
    const written = (await ask()).usage.cache_creation_input_tokens;
    clock.advance(4 * MINUTE);
    expect((await ask()).usage.cache_read_input_tokens).toBe(written);
    // 8 minutes after the write, alive only because the read at minute 4 refreshed it.
    clock.advance(4 * MINUTE);
    expect((await ask()).usage.cache_read_input_tokens).toBe(written);
    clock.advance(5 * MINUTE + 1);
    const expired = await ask();
    expect(expired.usage.cache_read_input_tokens).toBe(0);
    expect(expired.usage.cache_creation_input_tokens).toBe(written);
  });

  it('splits writes by TTL and keeps a 1h entry after the 5m one expired', async () => {
    const clock = createManualClock(0);
    const { client } = await open({ clock });
    const ask = (question: string) =>
      client.messages.create({
        model: MODEL,
        max_tokens: 50,
        system: [
          { type: 'text', text: BIG_SYSTEM, cache_control: { type: 'ephemeral', ttl: '1h' } },
          {
            type: 'text',
            text: filler(800, 'notes'),
            cache_control: { type: 'ephemeral', ttl: '5m' },
          },
        ],
        messages: [{ role: 'user', content: question }],
      });
    const first = await ask('one');
    const split = first.usage.cache_creation;
    expect(split?.ephemeral_1h_input_tokens).toBeGreaterThan(1500);
    expect(split?.ephemeral_5m_input_tokens).toBeGreaterThan(800);
    expect((split?.ephemeral_1h_input_tokens ?? 0) + (split?.ephemeral_5m_input_tokens ?? 0)).toBe(
      first.usage.cache_creation_input_tokens,
    );
    clock.advance(10 * MINUTE);
    const later = await ask('two');
    expect(later.usage.cache_read_input_tokens).toBe(split?.ephemeral_1h_input_tokens);
    expect(later.usage.cache_creation?.ephemeral_5m_input_tokens).toBe(
      split?.ephemeral_5m_input_tokens,
    );
    expect(later.usage.cache_creation?.ephemeral_1h_input_tokens).toBe(0);
  });

  it('invalidates everything when a tool changes, and only system and messages when the system changes', async () => {
    const { client } = await open();
    const tool = (description: string) => ({
      name: 'Search',
      description,
      input_schema: { type: 'object' as const, properties: {} },
      cache_control: ephemeral,
    });
    const ask = (toolDescription: string, system: string) =>
      client.messages.create({
        model: MODEL,
        max_tokens: 50,
        tools: [tool(toolDescription)],
        system: [{ type: 'text', text: system, cache_control: ephemeral }],
        messages: [{ role: 'user', content: 'go' }],
      });
    const toolText = filler(1200, 'search');
    const first = await ask(toolText, BIG_SYSTEM);
    const toolsOnly = first.usage.cache_creation_input_tokens ?? 0;
    expect(toolsOnly).toBeGreaterThan(2700);
    const changedTool = await ask(`${toolText} v2`, BIG_SYSTEM);
    expect(changedTool.usage.cache_read_input_tokens).toBe(0);
    const changedSystem = await ask(toolText, `${BIG_SYSTEM} amended`);
    const toolTokens = changedSystem.usage.cache_read_input_tokens ?? 0;
    expect(toolTokens).toBeGreaterThan(1200);
    expect(toolTokens).toBeLessThan(toolsOnly);
    expect(changedSystem.usage.cache_creation_input_tokens).toBe(
      total(changedSystem.usage) - toolTokens - changedSystem.usage.input_tokens,
    );
  });

  it('keys entries by model', async () => {
    const { client } = await open();
    const ask = (model: string) =>
      client.messages.create({
        model,
        max_tokens: 50,
        system: [{ type: 'text', text: BIG_SYSTEM, cache_control: ephemeral }],
        messages: [{ role: 'user', content: 'hi' }],
      });
    await ask(MODEL);
    expect((await ask('claude-opus-5')).usage.cache_read_input_tokens).toBe(0);
    expect((await ask(MODEL)).usage.cache_read_input_tokens).toBeGreaterThan(0);
  });

  it('invalidates only the message part when the thinking config changes', async () => {
    const { client } = await open();
    const ask = (budget: number) =>
      client.messages.create({
        model: MODEL,
        max_tokens: 8000,
        thinking: { type: 'enabled', budget_tokens: budget },
        system: [{ type: 'text', text: BIG_SYSTEM, cache_control: ephemeral }],
        messages: [
          {
            role: 'user',
            content: [{ type: 'text', text: filler(300, 'question'), cache_control: ephemeral }],
          },
        ],
      });
    const first = await ask(2000);
    const same = await ask(2000);
    expect(same.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    const changed = await ask(3000);
    const systemTokens = changed.usage.cache_read_input_tokens ?? 0;
    expect(systemTokens).toBeGreaterThan(1500);
    expect(systemTokens).toBeLessThan(first.usage.cache_creation_input_tokens ?? 0);
    expect(changed.usage.cache_creation_input_tokens).toBe(
      (first.usage.cache_creation_input_tokens ?? 0) - systemTokens,
    );
  });

  it('lets neither of two parallel identical requests read what the other writes', async () => {
    let arrived = 0;
    let release: () => void = () => undefined;
    const bothArrived = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { client } = await open({
      policy: async () => {
        arrived += 1;
        if (arrived === 2) release();
        if (arrived <= 2) await bothArrived;
        return 'ok';
      },
    });
    const ask = () =>
      client.messages.create({
        model: MODEL,
        max_tokens: 50,
        system: [{ type: 'text', text: BIG_SYSTEM, cache_control: ephemeral }],
        messages: [{ role: 'user', content: 'same' }],
      });
    const [left, right] = await Promise.all([ask(), ask()]);
    expect(left.usage.cache_read_input_tokens).toBe(0);
    expect(right.usage.cache_read_input_tokens).toBe(0);
    expect(left.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(right.usage.cache_creation_input_tokens).toBe(left.usage.cache_creation_input_tokens);
    const third = await ask();
    expect(third.usage.cache_read_input_tokens).toBe(left.usage.cache_creation_input_tokens);
  });

  it('puts the automatic marker on the last block, so a growing conversation reads its previous turn', async () => {
    const { client } = await open();
    const system = BIG_SYSTEM;
    const first = await client.messages.create({
      model: MODEL,
      max_tokens: 50,
      cache_control: ephemeral,
      system,
      messages: [{ role: 'user', content: 'turn one' }],
    });
    expect(first.usage.cache_creation_input_tokens).toBe(total(first.usage));
    const second = await client.messages.create({
      model: MODEL,
      max_tokens: 50,
      cache_control: ephemeral,
      system,
      messages: [
        { role: 'user', content: 'turn one' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'turn two' },
      ],
    });
    expect(second.usage.cache_read_input_tokens).toBe(total(first.usage));
    expect(second.usage.input_tokens).toBe(0);
  });

  it('lets fork children share the parent prefix while each writes its own directive', async () => {
    const { client } = await open();
    const tools = [
      {
        name: 'Agent',
        description: 'Spawn a worker',
        input_schema: { type: 'object' as const, properties: {} },
      },
    ];
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: filler(400, 'task') },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_a', name: 'Agent', input: { prompt: 'a' } },
          { type: 'tool_use', id: 'toolu_b', name: 'Agent', input: { prompt: 'b' } },
        ],
      },
    ];
    const child = (directive: string) =>
      client.messages.create({
        model: MODEL,
        max_tokens: 50,
        cache_control: ephemeral,
        system: BIG_SYSTEM,
        tools,
        messages: [
          ...history,
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_a', content: 'Fork started' },
              { type: 'tool_result', tool_use_id: 'toolu_b', content: 'Fork started' },
              { type: 'text', text: `Your directive: ${directive}` },
            ],
          },
        ],
      });
    const parent = await client.messages.create({
      model: MODEL,
      max_tokens: 50,
      cache_control: ephemeral,
      system: BIG_SYSTEM,
      tools,
      messages: [history[0] as Anthropic.MessageParam],
    });
    const first = await child('look at the parser');
    const second = await child('look at the printer');
    expect(first.usage.cache_read_input_tokens).toBe(parent.usage.cache_creation_input_tokens);
    expect(second.usage.cache_read_input_tokens).toBe(parent.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBe(first.usage.cache_creation_input_tokens);
  });
});

describe('fork layouts on the cache model', () => {
  const tools = [
    {
      name: 'Agent',
      description: 'Starts a worker.',
      input_schema: { type: 'object' as const, properties: {} },
    },
  ];
  const history = (): Anthropic.MessageParam[] => [
    { role: 'user', content: [{ type: 'text', text: filler(1500, 'history') }] },
  ];
  const fanOut = (count: number): Anthropic.MessageParam => ({
    role: 'assistant',
    content: [
      { type: 'text', text: `Forking ${count} workers.` },
      ...Array.from({ length: count }, (_, index) => ({
        type: 'tool_use' as const,
        id: `toolu_${index}`,
        name: 'Agent',
        input: { prompt: `part ${index}` },
      })),
    ],
  });
  const rules = filler(365, 'rule');
  /** A child in the shared-message layout, breakpoints as given (indexes into its last message). */
  const child = (options: {
    count: number;
    directive: string;
    marks: ('end' | 'rules' | 'history')[];
  }) => {
    const { count, directive, marks } = options;
    const mark = (where: 'end' | 'rules' | 'history') =>
      marks.includes(where) ? { cache_control: ephemeral } : {};
    const opening = history();
    (opening[0]!.content as Anthropic.TextBlockParam[])[0] = {
      type: 'text',
      text: filler(1500, 'history'),
      ...mark('history'),
    };
    return [
      ...opening,
      fanOut(count),
      {
        role: 'user' as const,
        content: [
          ...Array.from({ length: count }, (_, index) => ({
            type: 'tool_result' as const,
            tool_use_id: `toolu_${index}`,
            content: 'Handed off to a forked worker.',
          })),
          { type: 'text' as const, text: rules, ...mark('rules') },
          { type: 'text' as const, text: `Your directive: ${directive}`, ...mark('end') },
        ],
      },
    ];
  };

  it('lets the second sibling read the rules block the first one wrote, writing only its own line', async () => {
    const { client, sim } = await open();
    const send = (messages: Anthropic.MessageParam[]) =>
      client.messages.create({ model: MODEL, max_tokens: 50, system: BIG_SYSTEM, tools, messages });
    const parentHistory = history();
    (parentHistory[0]!.content as Anthropic.TextBlockParam[])[0]!.cache_control = ephemeral;
    await send(parentHistory);
    await send(child({ count: 4, directive: 'audit the parser', marks: ['rules', 'end'] }));
    await send(child({ count: 4, directive: 'audit the printer', marks: ['rules', 'end'] }));
    const [, first, second] = sim.journal.entries.map((entry) => entry.usage!);
    const directiveLine = estimateBlockTokens({
      type: 'text',
      text: 'Your directive: audit the printer',
    });
    // The first wrote the copied turn, the placeholders, the rules and its line; the second only its line.
    expect(first!.cache_creation_input_tokens).toBeGreaterThan(365);
    expect(second!.cache_creation_input_tokens).toBe(directiveLine);
    expect(second!.cache_read_input_tokens).toBe(
      second!.input_tokens +
        second!.cache_read_input_tokens +
        second!.cache_creation_input_tokens -
        directiveLine,
    );
  });

  it.each([16, 32])(
    'lets a child of a %i-way fan-out read the parent history, counting every block, with a breakpoint at its end',
    async (count) => {
      const parentTokens = async (
        groupToolRuns: boolean,
        marks: ('end' | 'rules' | 'history')[],
      ) => {
        const { client } = await open({ groupToolRuns });
        const send = (messages: Anthropic.MessageParam[]) =>
          client.messages.create({
            model: MODEL,
            max_tokens: 50,
            system: BIG_SYSTEM,
            tools,
            messages,
          });
        const parentHistory = history();
        (parentHistory[0]!.content as Anthropic.TextBlockParam[])[0]!.cache_control = ephemeral;
        const parent = await send(parentHistory);
        const fork = await send(child({ count, directive: 'audit', marks }));
        await sim?.close();
        return { parent: total(parent.usage), read: fork.usage.cache_read_input_tokens };
      };
      // The Claude API's rule: the calls and the results are two positions, the end reaches the history.
      const grouped = await parentTokens(true, ['end']);
      expect(grouped.read).toBe(grouped.parent);
      // Counting every block, the end alone misses it; a breakpoint on the history's end reads it.
      expect((await parentTokens(false, ['end'])).read).toBe(0);
      const bridged = await parentTokens(false, ['history', 'end']);
      expect(bridged.read).toBe(bridged.parent);
    },
  );
});

describe('prompt-cache keys and breakpoints', () => {
  it('keys blocks by content, not by the order of their fields', async () => {
    const { client } = await open();
    const tools = [{ name: 'Read', input_schema: { type: 'object' as const, properties: {} } }];
    const call = { type: 'tool_use' as const, id: 'toolu_1', name: 'Read', input: { path: 'a' } };
    const first = await client.messages.create({
      model: MODEL,
      max_tokens: 50,
      tools,
      system: [{ type: 'text', text: BIG_SYSTEM }],
      messages: [
        { role: 'user', content: 'read a' },
        { role: 'assistant', content: [call] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'A', cache_control: ephemeral },
          ],
        },
      ],
    });
    // The same request rebuilt by other code: same blocks, fields in another order.
    const reordered = await client.messages.create({
      model: MODEL,
      max_tokens: 50,
      tools: [{ input_schema: { type: 'object' as const, properties: {} }, name: 'Read' }],
      system: [{ text: BIG_SYSTEM, type: 'text' }],
      messages: [
        { role: 'user', content: [{ text: 'read a', type: 'text' }] },
        {
          role: 'assistant',
          content: [{ input: { path: 'a' }, name: 'Read', id: 'toolu_1', type: 'tool_use' }],
        },
        {
          role: 'user',
          content: [
            { cache_control: ephemeral, content: 'A', tool_use_id: 'toolu_1', type: 'tool_result' },
          ],
        },
      ],
    });
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(reordered.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(reordered.usage.cache_creation_input_tokens).toBe(0);
  });

  it('keeps an earlier breakpoint warm while later requests read past it', async () => {
    const clock = createManualClock(0);
    const { client } = await open({ clock });
    const system = [{ type: 'text' as const, text: BIG_SYSTEM, cache_control: ephemeral }];
    const turn = (messages: Anthropic.MessageParam[]) =>
      client.messages.create({
        model: MODEL,
        max_tokens: 50,
        cache_control: ephemeral,
        system,
        messages,
      });
    const opening = await turn([{ role: 'user', content: 'turn one' }]);
    const systemTokens = opening.usage.cache_creation_input_tokens ?? 0;
    clock.advance(4 * MINUTE);
    const next = await turn([
      { role: 'user', content: 'turn one' },
      { role: 'assistant', content: 'answer one' },
      { role: 'user', content: 'turn two' },
    ]);
    expect(next.usage.cache_read_input_tokens).toBe(total(opening.usage));
    // Minute 8: the system entry was written at minute 0 but read through at minute 4.
    clock.advance(4 * MINUTE);
    const fork = await turn([{ role: 'user', content: 'a different task' }]);
    expect(fork.usage.cache_read_input_tokens).toBeGreaterThan(1500);
    expect(fork.usage.cache_read_input_tokens).toBeLessThan(systemTokens);
  });

  it('reads through whichever breakpoint reaches a cached prefix, and writes at each breakpoint', async () => {
    const { client } = await open();
    const written = await client.messages.create({
      model: MODEL,
      max_tokens: 50,
      system: [{ type: 'text', text: BIG_SYSTEM, cache_control: ephemeral }],
      messages: [{ role: 'user', content: 'warm the cache' }],
    });
    const blocks = (label: string, marked: number[]) =>
      Array.from({ length: 30 }, (_, index) => ({
        type: 'text' as const,
        text: `${label} block ${index}`,
        ...(marked.includes(index) ? { cache_control: ephemeral } : {}),
      }));
    // Position 0 is the system; the breakpoint on block 9 (position 10) reaches it, the last one cannot.
    const ask = (label: string) =>
      client.messages.create({
        model: MODEL,
        max_tokens: 50,
        system: [{ type: 'text', text: BIG_SYSTEM }],
        messages: [{ role: 'user', content: blocks(label, [9, 29]) }],
      });
    const first = await ask('one');
    expect(first.usage.cache_read_input_tokens).toBe(written.usage.cache_creation_input_tokens);
    expect(first.usage.cache_creation_input_tokens).toBe(
      total(first.usage) - (written.usage.cache_creation_input_tokens ?? 0),
    );
    expect(first.usage.input_tokens).toBe(0);
    // The entry written at the intermediate breakpoint serves a request that diverges after it.
    const diverging = await client.messages.create({
      model: MODEL,
      max_tokens: 50,
      system: [{ type: 'text', text: BIG_SYSTEM }],
      messages: [
        {
          role: 'user',
          content: [
            ...blocks('one', [29]).slice(0, 10),
            { type: 'text', text: 'something else', cache_control: ephemeral },
          ],
        },
      ],
    });
    expect(diverging.usage.cache_read_input_tokens).toBeGreaterThan(
      written.usage.cache_creation_input_tokens ?? 0,
    );
    expect(diverging.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(diverging.usage.cache_creation_input_tokens).toBeLessThan(20);
  });
});

describe('PromptCache.plan (pure)', () => {
  it('always splits the input into read + written + uncached = total, none negative', async () => {
    const fc = (await import('fast-check')).default;
    const { PromptCache } = await import('./prompt-cache.js');
    const { flattenPrefix } = await import('./flatten-prefix.js');
    const { validateMessagesRequest } = await import('./validate-request.js');
    const block = fc.record({
      size: fc.integer({ min: 1, max: 900 }),
      marked: fc.boolean(),
      long: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(fc.array(block, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 0, max: 2000 }),
        (requests, minimum) => {
          const cache = new PromptCache({
            clock: createManualClock(0),
            minCacheableTokens: minimum,
          });
          for (const blocks of requests) {
            let marks = 0;
            let shortSeen = false;
            const content = blocks.map((item, index) => {
              const mark = item.marked && marks < 4;
              if (mark) marks += 1;
              // The API refuses a 1h breakpoint after a 5m one, so once a 5m appears the rest are 5m.
              const ttl = item.long && !shortSeen ? '1h' : '5m';
              if (mark && ttl === '5m') shortSeen = true;
              return {
                type: 'text',
                text: `block ${index} ${'x'.repeat(item.size * 4)}`,
                ...(mark ? { cache_control: { type: 'ephemeral', ttl } } : {}),
              };
            });
            const prefix = flattenPrefix(
              validateMessagesRequest(
                { model: 'm', max_tokens: 5, messages: [{ role: 'user', content }] },
                { requireMaxTokens: true },
              ),
            );
            const plan = cache.plan('m', prefix.blocks, prefix.totalTokens);
            plan.commit();
            const usage = plan.usage;
            expect(
              usage.input_tokens +
                usage.cache_creation_input_tokens +
                usage.cache_read_input_tokens,
            ).toBe(prefix.totalTokens);
            expect(
              Math.min(
                usage.input_tokens,
                usage.cache_creation_input_tokens,
                usage.cache_read_input_tokens,
              ),
            ).toBeGreaterThanOrEqual(0);
            expect(
              usage.cache_creation.ephemeral_1h_input_tokens +
                usage.cache_creation.ephemeral_5m_input_tokens,
            ).toBe(usage.cache_creation_input_tokens);
            if (usage.cache_creation_input_tokens > 0)
              expect(
                usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
              ).toBeGreaterThanOrEqual(minimum);
          }
        },
      ),
    );
  });
});
