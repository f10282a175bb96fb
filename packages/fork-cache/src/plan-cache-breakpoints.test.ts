import { DelegateError } from '@delegate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyCacheBreakpoints } from './apply-cache-breakpoints.js';
import { assessCacheReach } from './assess-cache-reach.js';
import { type CacheKeyMessage, fingerprintRequest } from './fingerprint-request.js';
import { CLAUDE_API_LOOKBACK, type LookbackRule, STRICT_LOOKBACK } from './lookback.js';
import { type BlockAddress } from './message-blocks.js';
import { planCacheBreakpoints } from './plan-cache-breakpoints.js';

/** A conversation after a parallel tool turn: the opening, N calls, N results. */
function afterParallelCalls(count: number): CacheKeyMessage[] {
  return [
    { role: 'user', content: [{ type: 'text', text: 'Check everything.' }] },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Checking.' },
        ...Array.from({ length: count }, (_, index) => ({
          type: 'tool_use',
          id: `toolu_${index}`,
          name: 'Check',
          input: { index },
        })),
      ],
    },
    {
      role: 'user',
      content: Array.from({ length: count }, (_, index) => ({
        type: 'tool_result',
        tool_use_id: `toolu_${index}`,
        content: `check ${index} passed`,
      })),
    },
  ];
}

const opening: BlockAddress = { messageIndex: 0, blockIndex: 0 };

function thrown(run: () => unknown): DelegateError {
  try {
    run();
  } catch (error) {
    if (DelegateError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a DelegateError');
}

/** Whether the planned request reads the entry an earlier request wrote at `cachedAt`. */
function readsEarlierEntry(options: {
  messages: CacheKeyMessage[];
  cachedAt: BlockAddress;
  planned: BlockAddress[];
  rule: LookbackRule;
}): boolean {
  const { messages, cachedAt, planned, rule } = options;
  const earlier = fingerprintRequest(
    {
      model: 'm',
      messages: applyCacheBreakpoints({
        messages: messages.slice(0, cachedAt.messageIndex + 1),
        breakpoints: [cachedAt],
      }),
    },
    { lookback: rule },
  );
  const later = fingerprintRequest(
    { model: 'm', messages: applyCacheBreakpoints({ messages, breakpoints: planned }) },
    { lookback: rule },
  );
  return assessCacheReach(earlier, later).reachable;
}

describe('planCacheBreakpoints', () => {
  it('marks only the last block when it is within the lookback of the previous write', () => {
    const messages = afterParallelCalls(8);
    expect(planCacheBreakpoints({ messages, cachedAt: [opening] })).toEqual([
      { messageIndex: 2, blockIndex: 7 },
    ]);
  });

  it('adds a breakpoint on the previous write when a wide turn pushes the end beyond the lookback', () => {
    // 1 text + 16 calls + 16 results: the last block is 33 blocks after the opening.
    const messages = afterParallelCalls(16);
    const planned = planCacheBreakpoints({ messages, cachedAt: [opening] });
    expect(planned).toEqual([opening, { messageIndex: 2, blockIndex: 15 }]);
    expect(readsEarlierEntry({ messages, cachedAt: opening, planned, rule: STRICT_LOOKBACK })).toBe(
      true,
    );
    // The end alone would miss it.
    expect(
      readsEarlierEntry({
        messages,
        cachedAt: opening,
        planned: planned.slice(1),
        rule: STRICT_LOOKBACK,
      }),
    ).toBe(false);
  });

  it('needs no extra breakpoint under the Claude API rule, where a run of calls is one position', () => {
    const messages = afterParallelCalls(16);
    expect(
      planCacheBreakpoints({ messages, cachedAt: [opening], lookback: CLAUDE_API_LOOKBACK }),
    ).toEqual([{ messageIndex: 2, blockIndex: 15 }]);
  });

  it('uses a shared block as the bridge when it is within reach, and adds shared blocks while slots last', () => {
    const messages = afterParallelCalls(16);
    const withinReach = { messageIndex: 1, blockIndex: 5 };
    expect(planCacheBreakpoints({ messages, cachedAt: [opening], share: [withinReach] })).toEqual([
      withinReach,
      { messageIndex: 2, blockIndex: 15 },
    ]);
    const farShared = { messageIndex: 2, blockIndex: 14 };
    expect(planCacheBreakpoints({ messages, cachedAt: [opening], share: [farShared] })).toEqual([
      opening,
      farShared,
      { messageIndex: 2, blockIndex: 15 },
    ]);
    // Two slots: reaching the previous write comes first, then the end; the shared block waits.
    expect(
      planCacheBreakpoints({
        messages,
        cachedAt: [opening],
        share: [farShared],
        maxBreakpoints: 2,
      }),
    ).toEqual([opening, { messageIndex: 2, blockIndex: 15 }]);
    expect(planCacheBreakpoints({ messages, maxBreakpoints: 0 })).toEqual([]);
  });

  it('skips thinking blocks and empty text at the end, and plans nothing without a markable block', () => {
    const messages: CacheKeyMessage[] = [
      { role: 'user', content: 'Go.' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Plan.' },
          { type: 'thinking', thinking: 'hm', signature: 's' },
          { type: 'text', text: '' },
        ],
      },
    ];
    expect(planCacheBreakpoints({ messages })).toEqual([{ messageIndex: 1, blockIndex: 0 }]);
    expect(
      planCacheBreakpoints({
        messages: [
          { role: 'assistant', content: [{ type: 'thinking', thinking: 'x', signature: 's' }] },
        ],
      }),
    ).toEqual([]);
    expect(planCacheBreakpoints({ messages: [] })).toEqual([]);
  });

  it('refuses addresses that are not there or cannot carry a breakpoint, and bad slot counts', () => {
    const messages = afterParallelCalls(2);
    expect(
      thrown(() =>
        planCacheBreakpoints({ messages, cachedAt: [{ messageIndex: 7, blockIndex: 0 }] }),
      ).message,
    ).toContain('cachedAt: there is no block 0 in message 7 (the request has 3 messages)');
    const thinking: CacheKeyMessage[] = [
      { role: 'user', content: 'Go.' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'x', signature: 's' },
          { type: 'text', text: 'ok' },
        ],
      },
    ];
    expect(
      thrown(() =>
        planCacheBreakpoints({ messages: thinking, share: [{ messageIndex: 1, blockIndex: 0 }] }),
      ).message,
    ).toContain('a thinking block, which cannot carry cache_control');
    expect(thrown(() => planCacheBreakpoints({ messages, maxBreakpoints: 5 })).code).toBe(
      'INVALID_ARGUMENT',
    );
    expect(
      thrown(() => planCacheBreakpoints({ messages, lookback: { positions: 0 } })).message,
    ).toContain('lookback.positions is 0');
  });

  it('for any conversation and earlier write, reads that write with at most maxBreakpoints markable breakpoints (property)', () => {
    const block = fc.oneof(
      fc.constant({ type: 'text', text: 'words' }),
      fc.constant({ type: 'text', text: '' }),
      fc.constant({ type: 'thinking', thinking: 'hm', signature: 's' }),
      fc.constant({ type: 'tool_use', id: 'toolu_x', name: 'Read', input: {} }),
      fc.constant({ type: 'tool_result', tool_use_id: 'toolu_x', content: 'ok' }),
    );
    const message = fc.record({
      role: fc.constantFrom('user', 'assistant'),
      content: fc.array(block, { minLength: 1, maxLength: 30 }),
    });
    fc.assert(
      fc.property(
        fc.array(message, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        fc.integer({ min: 2, max: 3 }),
        fc.boolean(),
        (messages, pick, maxBreakpoints, grouped) => {
          const rule = grouped ? CLAUDE_API_LOOKBACK : STRICT_LOOKBACK;
          const markable = messages.flatMap((item, messageIndex) =>
            item.content.flatMap((entry, blockIndex) =>
              entry.type === 'thinking' || (entry.type === 'text' && entry.text === '')
                ? []
                : [{ messageIndex, blockIndex }],
            ),
          );
          const cachedAt = markable[pick % Math.max(markable.length, 1)];
          const planned = planCacheBreakpoints({
            messages,
            ...(cachedAt ? { cachedAt: [cachedAt] } : {}),
            maxBreakpoints,
            lookback: rule,
          });
          expect(planned.length).toBeLessThanOrEqual(maxBreakpoints);
          if (markable.length === 0) expect(planned).toEqual([]);
          const keys = planned.map((address) => `${address.messageIndex}:${address.blockIndex}`);
          expect(new Set(keys).size).toBe(keys.length);
          for (const address of planned) expect(markable).toContainEqual(address);
          if (markable.length > 0) expect(planned.at(-1)).toEqual(markable.at(-1));
          if (cachedAt) expect(readsEarlierEntry({ messages, cachedAt, planned, rule })).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('applyCacheBreakpoints', () => {
  it('strips markers inside tool results too, so a request never holds more than it asked for', () => {
    const marker = { type: 'ephemeral' } as const;
    const result = (id: string) => ({
      type: 'tool_result',
      tool_use_id: id,
      content: [{ type: 'text', text: `out ${id}`, cache_control: marker }],
    });
    const messages = [
      { role: 'user', content: [result('a'), result('b')] },
    ] as unknown as CacheKeyMessage[];
    const marked = applyCacheBreakpoints({
      messages,
      breakpoints: [{ messageIndex: 0, blockIndex: 1 }],
    });
    expect(JSON.stringify(marked).split('cache_control').length - 1).toBe(1);
    expect(marked[0]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text', text: 'out a' }] },
      {
        type: 'tool_result',
        tool_use_id: 'b',
        content: [{ type: 'text', text: 'out b' }],
        cache_control: marker,
      },
    ]);
  });

  it('marks exactly the given blocks, strips the others, and never changes its input', () => {
    const messages: CacheKeyMessage[] = [
      { role: 'user', content: 'Opening.' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'a', cache_control: { type: 'ephemeral' } },
          { type: 'tool_use', id: 't', name: 'Read', input: { cache_control: 'data' } },
        ],
      },
    ];
    const before = structuredClone(messages);
    const marked = applyCacheBreakpoints({
      messages,
      breakpoints: [
        { messageIndex: 0, blockIndex: 0 },
        { messageIndex: 1, blockIndex: 1 },
      ],
      cacheControl: { type: 'ephemeral', ttl: '1h' },
    });
    expect(marked).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Opening.', cache_control: { type: 'ephemeral', ttl: '1h' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'a' },
          {
            type: 'tool_use',
            id: 't',
            name: 'Read',
            input: { cache_control: 'data' },
            cache_control: { type: 'ephemeral', ttl: '1h' },
          },
        ],
      },
    ]);
    expect(messages).toEqual(before);
    // A message with nothing to change is passed through as it is.
    const untouched = [{ role: 'user', content: [{ type: 'text', text: 'x' }] }];
    expect(applyCacheBreakpoints({ messages: untouched, breakpoints: [] })[0]).toBe(untouched[0]);
  });

  it('refuses a missing block, a thinking block and more than four breakpoints', () => {
    const messages: CacheKeyMessage[] = [
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'x', signature: 's' }] },
    ];
    expect(
      thrown(() =>
        applyCacheBreakpoints({ messages, breakpoints: [{ messageIndex: 3, blockIndex: 1 }] }),
      ).message,
    ).toContain('no block at message 3, block 1');
    expect(
      thrown(() =>
        applyCacheBreakpoints({ messages, breakpoints: [{ messageIndex: 0, blockIndex: 0 }] }),
      ).message,
    ).toContain('cannot carry cache_control');
    const five = Array.from({ length: 5 }, (_, blockIndex) => ({ messageIndex: 0, blockIndex }));
    expect(thrown(() => applyCacheBreakpoints({ messages, breakpoints: five })).message).toContain(
      'at most 4',
    );
  });
});
