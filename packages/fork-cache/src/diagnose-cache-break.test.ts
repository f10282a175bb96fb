import { describe, expect, it } from 'vitest';
import { diagnoseCacheBreak } from './diagnose-cache-break.js';
import {
  type CacheKeyMessage,
  type CacheKeyRequest,
  fingerprintRequest,
} from './fingerprint-request.js';
import { formatCacheBreak } from './format-cache-break.js';
import { lastBlockOf, requestWithBreakpoints, wireMessages } from './__fixtures__/fan-out.js';
import {
  forkingAssistantMessage,
  parentHistory,
  toRequest,
} from './__fixtures__/parent-conversation.js';

function baseRequest(): CacheKeyRequest {
  return toRequest([...parentHistory(), forkingAssistantMessage()]);
}

function withTools(tools: readonly Record<string, unknown>[]): CacheKeyRequest {
  return { ...baseRequest(), tools };
}

function baseTools(): Record<string, unknown>[] {
  return structuredClone(baseRequest().tools) as Record<string, unknown>[];
}

describe('diagnoseCacheBreak', () => {
  it('reports identical requests, ignoring breakpoints and output settings', () => {
    const other = {
      ...toRequest([...parentHistory(), forkingAssistantMessage()]),
      max_tokens: 100,
      temperature: 1,
    };
    const { reach, ...diagnosis } = diagnoseCacheBreak(baseRequest(), other);
    expect(diagnosis).toEqual({ identical: true, sharedPrefixMessages: 4 });
    expect(reach.reachable).toBe(true);
  });

  it('names a model change and quotes both models', () => {
    const diagnosis = diagnoseCacheBreak(baseRequest(), {
      ...baseRequest(),
      model: 'claude-opus-4-1',
    });
    expect(diagnosis).toMatchObject({
      identical: false,
      firstDifference: { part: 'model' },
      sharedPrefixMessages: 0,
    });
    if (diagnosis.identical) throw new Error('expected a difference');
    expect(diagnosis.firstDifference.detail).toContain('"claude-sonnet-4-5" vs "claude-opus-4-1"');
  });

  it('names the index and name of a changed, added or reordered tool', () => {
    const changed = baseTools();
    changed[1] = { ...changed[1], description: 'Starts a sub-agent, now with more words.' };
    expect(diagnoseCacheBreak(baseRequest(), withTools(changed))).toMatchObject({
      firstDifference: {
        part: 'tools',
        toolIndex: 1,
        detail: 'tool 1 ("Agent") has a different definition',
      },
      sharedPrefixMessages: 0,
    });

    const added = [
      ...baseTools(),
      { name: 'Grep', description: 'Searches.', input_schema: { type: 'object' } },
    ];
    expect(diagnoseCacheBreak(baseRequest(), withTools(added))).toMatchObject({
      firstDifference: {
        part: 'tools',
        toolIndex: 2,
        detail: 'tool 2 ("Grep") is only in request b',
      },
    });

    const reordered = baseTools().reverse();
    expect(diagnoseCacheBreak(baseRequest(), withTools(reordered))).toMatchObject({
      firstDifference: { part: 'tools', toolIndex: 0, detail: 'tool 0 differs: "Read" vs "Agent"' },
    });
  });

  it('names the system block that changed', () => {
    const changed = {
      ...baseRequest(),
      system: [
        { type: 'text', text: 'You are Delegate, a coding agent.' },
        { type: 'text', text: 'Working directory: /elsewhere' },
      ],
    };
    expect(diagnoseCacheBreak(baseRequest(), changed)).toMatchObject({
      identical: false,
      firstDifference: { part: 'system', blockIndex: 1 },
      sharedPrefixMessages: 0,
    });
  });

  it('names a thinking change and shows both configs', () => {
    const changed = { ...baseRequest(), thinking: { type: 'enabled', budget_tokens: 1024 } };
    const diagnosis = diagnoseCacheBreak(baseRequest(), changed);
    expect(diagnosis).toMatchObject({
      identical: false,
      firstDifference: { part: 'thinking' },
      sharedPrefixMessages: 0,
    });
    if (diagnosis.identical) throw new Error('expected a difference');
    expect(diagnosis.firstDifference.detail).toContain('"budget_tokens":8000');
    expect(diagnosis.firstDifference.detail).toContain('"budget_tokens":1024');
  });

  it('names a body option such as tool_choice', () => {
    const changed = { ...baseRequest(), tool_choice: { type: 'any' } };
    expect(diagnoseCacheBreak(baseRequest(), changed)).toMatchObject({
      firstDifference: {
        part: 'options',
        field: 'tool_choice',
        detail: 'request field "tool_choice" is only set in request b',
      },
    });
  });

  it('names the message and block of a changed message, and the shared messages before it', () => {
    const changed = structuredClone(baseRequest());
    const toolResult = (changed.messages[2]!.content as { content: { text: string }[] }[])[0]!;
    toolResult.content[0]!.text = 'export function loadConfig() { return cached; }';
    const { reach: _reach, ...diagnosis } = diagnoseCacheBreak(baseRequest(), changed);
    expect(diagnosis).toEqual({
      identical: false,
      firstDifference: {
        part: 'message',
        messageIndex: 2,
        blockIndex: 0,
        detail: 'message 2 (user) block 0 (tool_result) has different content',
      },
      sharedPrefixMessages: 2,
    });
  });

  it('names missing messages and blocks, and role changes', () => {
    const shorter = { ...baseRequest(), messages: baseRequest().messages.slice(0, 3) };
    expect(diagnoseCacheBreak(baseRequest(), shorter)).toMatchObject({
      firstDifference: {
        part: 'message',
        messageIndex: 3,
        detail: 'message 3 (assistant) is only in request a',
      },
      sharedPrefixMessages: 3,
    });

    const fewerBlocks = structuredClone(baseRequest());
    (fewerBlocks.messages[3]!.content as unknown[]).pop();
    expect(diagnoseCacheBreak(baseRequest(), fewerBlocks)).toMatchObject({
      firstDifference: { part: 'message', messageIndex: 3, blockIndex: 4 },
    });

    const otherRole = structuredClone(baseRequest());
    otherRole.messages[0]!.role = 'assistant';
    expect(diagnoseCacheBreak(baseRequest(), otherRole)).toMatchObject({
      firstDifference: {
        part: 'message',
        messageIndex: 0,
        detail: 'message 0 role differs: user vs assistant',
      },
      sharedPrefixMessages: 0,
    });
  });

  it('reports a request that only appends to the other as an extension, not a break', () => {
    const base = baseRequest();
    const shorter = { ...base, messages: base.messages.slice(0, 2) };
    const forward = diagnoseCacheBreak(shorter, base);
    expect(forward).toMatchObject({
      identical: false,
      longerRequest: 'b',
      sharedPrefixMessages: 2,
      firstDifference: { part: 'message', messageIndex: 2 },
    });
    expect(diagnoseCacheBreak(base, shorter)).toMatchObject({ longerRequest: 'a' });

    // More blocks in the shorter request's last message count too.
    const fewerBlocks = structuredClone(base);
    (fewerBlocks.messages[3]!.content as unknown[]).splice(2);
    expect(diagnoseCacheBreak(fewerBlocks, base)).toMatchObject({
      longerRequest: 'b',
      firstDifference: { messageIndex: 3, blockIndex: 2 },
    });
  });

  it('keeps calling it a break when the shorter request does not end where they part', () => {
    const base = baseRequest();
    const edited = structuredClone(base);
    (edited.messages[1]!.content as { text: string }[])[0]!.text = 'Different.';
    const editedAndShorter = { ...edited, messages: edited.messages.slice(0, 2) };
    expect(diagnoseCacheBreak(editedAndShorter, base)).not.toHaveProperty('longerRequest');

    // Same number of blocks, last one different (sibling forks): a break at that block.
    const sibling = structuredClone(base);
    (sibling.messages[3]!.content as { type: string }[]).splice(-1, 1, { type: 'text' });
    expect(diagnoseCacheBreak(base, sibling)).not.toHaveProperty('longerRequest');

    // An extra message after a shorter last message that is not a prefix of the other's.
    const trimmed = structuredClone(base);
    (trimmed.messages[3]!.content as unknown[]).splice(2);
    const fewerBlocksMore = {
      ...trimmed,
      messages: [...trimmed.messages, { role: 'user', content: 'next' }],
    };
    expect(diagnoseCacheBreak(fewerBlocksMore, base)).not.toHaveProperty('longerRequest');

    // Extensions still fail an exact comparison in the messages part.
    const shorter = { ...base, messages: base.messages.slice(0, 2) };
    expect(diagnoseCacheBreak(shorter, { ...base, model: 'other' })).not.toHaveProperty(
      'longerRequest',
    );
  });

  it('reports the earliest part in cache order when several differ', () => {
    const changed = structuredClone(baseRequest());
    changed.messages[0]!.content = 'another prompt';
    changed.system = 'another system prompt';
    expect(diagnoseCacheBreak(baseRequest(), changed)).toMatchObject({
      firstDifference: { part: 'system' },
    });
  });

  it('gives the same answer for fingerprints as for request bodies', () => {
    const changed = { ...baseRequest(), model: 'other' };
    expect(
      diagnoseCacheBreak(fingerprintRequest(baseRequest()), fingerprintRequest(changed)),
    ).toEqual(diagnoseCacheBreak(baseRequest(), changed));
  });
});

describe('formatCacheBreak', () => {
  it('writes one line naming the part, the place and the shared messages', () => {
    const changed = structuredClone(baseRequest());
    (changed.messages[1]!.content as { text: string }[])[0]!.text = 'Different.';
    const line = formatCacheBreak(diagnoseCacheBreak(baseRequest(), changed));
    expect(line).toBe(
      'cache break in message: message 1 (assistant) block 0 (text) has different content; 1 leading message still shared',
    );
  });

  it('says an extension is no break', () => {
    const base = baseRequest();
    const shorter = { ...base, messages: base.messages.slice(0, 2) };
    expect(formatCacheBreak(diagnoseCacheBreak(shorter, base))).toBe(
      'no cache break: request b extends request a, whose whole prompt it shares (2 leading messages identical); first extra content: message 2 (user) is only in request b',
    );
  });

  it('says so when nothing differs', () => {
    expect(formatCacheBreak(diagnoseCacheBreak(baseRequest(), baseRequest()))).toBe(
      'cache key identical: every part matches (4 messages)',
    );
  });

  it('keeps a detail with line breaks on one line', () => {
    const line = formatCacheBreak(
      diagnoseCacheBreak(
        { model: 'a', messages: [] },
        { model: 'model\nwith a newline', messages: [] },
      ),
    );
    expect(line).not.toMatch(/[\r\n]/);
    expect(line).toContain('cache break in model');
  });
});

describe('diagnoseCacheBreak: where the breakpoints are', () => {
  // 25 short user blocks after the history: a crafted request whose end is far from the entry.
  const history = wireMessages(parentHistory());
  const longTail: CacheKeyMessage[] = [
    ...history,
    { role: 'assistant', content: [{ type: 'text', text: 'Reading more.' }] },
    {
      role: 'user',
      content: Array.from({ length: 24 }, (_, index) => ({ type: 'text', text: `note ${index}` })),
    },
  ];
  const written = requestWithBreakpoints(history, [lastBlockOf(history, 2)]);
  const endOnly = requestWithBreakpoints(longTail, [lastBlockOf(longTail, 4)]);

  it('reports a byte-identical prefix whose entry is 25 blocks before the first breakpoint as a lookback break', () => {
    const diagnosis = diagnoseCacheBreak(written, endOnly);
    expect(diagnosis).toMatchObject({
      identical: false,
      firstDifference: { part: 'lookback', messageIndex: 4, blockIndex: 23 },
      sharedPrefixMessages: 3,
      reach: {
        reachable: false,
        problem: 'beyond-lookback',
        distance: 25,
        nearestEntry: { part: 'message', messageIndex: 2, blockIndex: 0 },
        readEntry: { part: 'system', blockIndex: 1 },
      },
    });
    expect(formatCacheBreak(diagnosis)).toBe(
      "cache break in lookback: the nearest cached block (message 2 block 0 (tool_result)) is 25 blocks before request b's first breakpoint after it (message 4 block 23 (text)), and a breakpoint looks back at most 20 blocks, itself included, so request b reads only up to system block 1; put a breakpoint at most 19 blocks after message 2 block 0 (tool_result) (for example on it); 3 leading messages still shared",
    );
  });

  it('passes the same request once a breakpoint sits within the lookback of the entry', () => {
    const bridged = requestWithBreakpoints(longTail, [
      { messageIndex: 4, blockIndex: 5 },
      lastBlockOf(longTail, 4),
    ]);
    const diagnosis = diagnoseCacheBreak(written, bridged);
    expect(diagnosis).toMatchObject({
      identical: false,
      longerRequest: 'b',
      reach: { reachable: true },
    });
    expect(formatCacheBreak(diagnosis)).toMatch(/^no cache break: request b extends request a/);
  });

  it('reports no entry to read when the earlier request marked nothing inside the shared prefix', () => {
    const unmarked = { ...toRequest([]), system: 'Plain system.', messages: history };
    const diagnosis = diagnoseCacheBreak(unmarked, { ...endOnly, system: 'Plain system.' });
    expect(diagnosis).toMatchObject({
      firstDifference: { part: 'breakpoints' },
      reach: { problem: 'no-entry' },
    });
    expect(formatCacheBreak(diagnosis)).toContain('request a has no breakpoint inside the');
  });

  it('reports a later request with no breakpoint at or after the entry', () => {
    const early = requestWithBreakpoints(longTail, []);
    const diagnosis = diagnoseCacheBreak(written, { ...early, system: toRequest([]).system });
    expect(diagnosis).toMatchObject({
      firstDifference: { part: 'breakpoints', messageIndex: 2, blockIndex: 0 },
      reach: { problem: 'no-breakpoint', readEntry: { part: 'system' } },
    });
  });

  it('names an unreadable shared prefix after a content break too', () => {
    const edited = structuredClone(endOnly);
    (edited.messages[4]!.content as { text: string }[])[23]!.text = 'changed';
    const longerWritten = requestWithBreakpoints(longTail, [
      lastBlockOf(history, 2),
      lastBlockOf(longTail, 4),
    ]);
    const line = formatCacheBreak(diagnoseCacheBreak(longerWritten, edited));
    expect(line).toContain(
      'cache break in message: message 4 (user) block 23 (text) has different content',
    );
    expect(line).toContain(
      '; before it, the nearest cached block (message 2 block 0 (tool_result)) is 25 blocks before',
    );
  });
});
