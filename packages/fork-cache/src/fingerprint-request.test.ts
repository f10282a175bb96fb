import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CacheKeyRequest,
  type RequestFingerprint,
  MESSAGE_PREFIX_OFFSET,
  fingerprintRequest,
} from './fingerprint-request.js';
import {
  forkingAssistantMessage,
  parentHistory,
  toRequest,
} from './__fixtures__/parent-conversation.js';

function baseRequest(): CacheKeyRequest {
  return toRequest([...parentHistory(), forkingAssistantMessage()]);
}

/** Payloads the prompt shows as written (tool schemas, tool-call inputs): their key order counts. */
const PAYLOAD_KEYS: ReadonlySet<string> = new Set(['input', 'input_schema']);

/**
 * Rebuilds every object with its keys rotated by `shift`, leaving the JSON value the
 * same; with `intoPayloads` false, tool schemas and tool-call inputs keep their order.
 */
function reorderKeys(value: unknown, shift: number, intoPayloads = false): unknown {
  if (Array.isArray(value)) return value.map((item) => reorderKeys(item, shift, intoPayloads));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  const rotated = keys.map((_, index) => keys[(index + shift) % keys.length] as string).reverse();
  return Object.fromEntries(
    rotated.map((key) => {
      const item = (value as Record<string, unknown>)[key];
      const keep = PAYLOAD_KEYS.has(key) && !intoPayloads;
      return [key, keep ? item : reorderKeys(item, shift, intoPayloads)];
    }),
  );
}

const textBlock = fc.record({ type: fc.constant('text'), text: fc.string() });
const block = fc.oneof(
  textBlock,
  fc.record({
    type: fc.constant('tool_use'),
    id: fc.string(),
    name: fc.string(),
    input: fc.jsonValue(),
  }),
  fc.record({
    type: fc.constant('tool_result'),
    tool_use_id: fc.string(),
    content: fc.oneof(fc.string(), fc.array(textBlock, { maxLength: 3 })),
  }),
);
const request: fc.Arbitrary<CacheKeyRequest> = fc.record(
  {
    model: fc.string(),
    system: fc.oneof(fc.string(), fc.array(textBlock, { maxLength: 3 })),
    tools: fc.array(
      fc.record({ name: fc.string(), description: fc.string(), input_schema: fc.jsonValue() }),
      {
        maxLength: 4,
      },
    ),
    messages: fc.array(
      fc.record({
        role: fc.constantFrom('user', 'assistant'),
        content: fc.oneof(fc.string(), fc.array(block, { maxLength: 4 })),
      }),
      { maxLength: 5 },
    ),
    thinking: fc.oneof(
      fc.constant({ type: 'disabled' }),
      fc.record({ type: fc.constant('enabled'), budget_tokens: fc.nat() }),
    ),
    tool_choice: fc.record({ type: fc.constantFrom('auto', 'any') }),
  },
  { requiredKeys: ['model', 'messages'] },
);

describe('fingerprintRequest', () => {
  it('is deterministic and independent of the key order of the envelope (property)', () => {
    fc.assert(
      fc.property(request, fc.nat({ max: 7 }), (body, shift) => {
        const fingerprint = fingerprintRequest(body);
        expect(fingerprintRequest(structuredClone(body))).toEqual(fingerprint);
        expect(fingerprintRequest(reorderKeys(body, shift) as CacheKeyRequest)).toEqual(
          fingerprint,
        );
      }),
      { numRuns: 200 },
    );
  });

  it('counts the key order of tool schemas and tool-call inputs, which the prompt shows as written', () => {
    const plain = baseRequest();
    const reordered = reorderKeys(plain, 1, true) as CacheKeyRequest;
    const before = fingerprintRequest(plain);
    const after = fingerprintRequest(reordered);
    const schemaKeys = (request: CacheKeyRequest): string[] =>
      Object.keys((request.tools?.[0] as { input_schema: object }).input_schema);
    expect(schemaKeys(reordered)).not.toEqual(schemaKeys(plain));
    expect(after.tools.items[0]?.hash).not.toBe(before.tools.items[0]?.hash);
    expect(after.prefixHash[0]).not.toBe(before.prefixHash[0]);

    // Only a tool call's input reordered: that block differs, its neighbours do not.
    const toolUseOf = (request: CacheKeyRequest): { input: Record<string, unknown> } =>
      (request.messages[1]!.content as { input: Record<string, unknown> }[])[1]!;
    const readCall = structuredClone(plain);
    toolUseOf(readCall).input = { file_path: '/repo/src/config.ts', limit: 40 };
    const readCallReordered = structuredClone(readCall);
    toolUseOf(readCallReordered).input = { limit: 40, file_path: '/repo/src/config.ts' };
    const [first, second] = [readCall, readCallReordered].map(
      (request) => fingerprintRequest(request).messages[1]?.blocks,
    );
    expect(second?.[1]?.hash).not.toBe(first?.[1]?.hash);
    expect(second?.[0]?.hash).toBe(first?.[0]?.hash);
  });

  it('has one prefix link for tools, one for system and one per message', () => {
    const body = baseRequest();
    const fingerprint = fingerprintRequest(body);
    expect(fingerprint.messages).toHaveLength(body.messages.length);
    expect(fingerprint.prefixHash).toHaveLength(MESSAGE_PREFIX_OFFSET + body.messages.length);
    expect(new Set(fingerprint.prefixHash).size).toBe(fingerprint.prefixHash.length);
    expect(fingerprint.tools.items.map((item) => item.name)).toEqual(['Read', 'Agent']);
    expect(fingerprint.messages[3]?.blocks.map((item) => item.type)).toEqual([
      'thinking',
      'text',
      'tool_use',
      'tool_use',
      'tool_use',
    ]);
    for (const hash of [
      fingerprint.model.hash,
      fingerprint.tools.hash,
      ...fingerprint.prefixHash,
    ]) {
      expect(hash).toMatch(/^[0-9a-f]{16}$/);
    }
  });

  it('ignores cache_control markers wherever the breakpoints move', () => {
    const plain = baseRequest();
    const marked = structuredClone(plain) as CacheKeyRequest & { tools: Record<string, unknown>[] };
    marked.tools[1]!.cache_control = { type: 'ephemeral' };
    marked.system = [
      {
        type: 'text',
        text: 'You are Delegate, a coding agent.',
        cache_control: { type: 'ephemeral', ttl: '1h' },
      },
      { type: 'text', text: 'Working directory: /repo' },
    ];
    const history = marked.messages[2]!.content as Record<string, unknown>[];
    history[0]!.cache_control = { type: 'ephemeral' };
    (history[0]!.content as Record<string, unknown>[])[0]!.cache_control = { type: 'ephemeral' };
    (marked.messages[3]!.content as Record<string, unknown>[]).at(-1)!.cache_control = null;
    marked.cache_control = { type: 'ephemeral' };
    const withoutBreakpoints = (fingerprint: RequestFingerprint) => ({
      ...fingerprint,
      prefixBlocks: fingerprint.prefixBlocks.map(({ breakpoint: _breakpoint, ...block }) => block),
    });
    expect(withoutBreakpoints(fingerprintRequest(marked))).toEqual(
      withoutBreakpoints(fingerprintRequest(plain)),
    );
    // The markers are recorded apart: where each request writes, not what it caches.
    const breakpoints = fingerprintRequest(marked)
      .prefixBlocks.filter((block) => block.breakpoint)
      .map(({ part, toolIndex, messageIndex, blockIndex, breakpoint }) => ({
        part,
        ...(toolIndex === undefined ? {} : { toolIndex }),
        ...(messageIndex === undefined ? {} : { messageIndex }),
        ...(blockIndex === undefined ? {} : { blockIndex }),
        breakpoint,
      }));
    expect(breakpoints).toEqual([
      { part: 'tools', toolIndex: 1, breakpoint: { ttl: '5m', automatic: false } },
      { part: 'system', blockIndex: 0, breakpoint: { ttl: '1h', automatic: false } },
      {
        part: 'message',
        messageIndex: 2,
        blockIndex: 0,
        breakpoint: { ttl: '5m', automatic: false },
      },
      // The top-level marker lands on the last block; a null cache_control is no breakpoint.
      {
        part: 'message',
        messageIndex: 3,
        blockIndex: 4,
        breakpoint: { ttl: '5m', automatic: true },
      },
    ]);
  });

  it('notices a one-character change in a text block, and only in that message and block', () => {
    const plain = baseRequest();
    const changed = structuredClone(plain);
    (changed.messages[1]!.content as { text: string }[])[0]!.text =
      'Let me look at the loader first!';
    const before = fingerprintRequest(plain);
    const after = fingerprintRequest(changed);
    expect(after.messages[1]?.hash).not.toBe(before.messages[1]?.hash);
    expect(after.messages[1]?.blocks[0]?.hash).not.toBe(before.messages[1]?.blocks[0]?.hash);
    expect(after.messages[1]?.blocks[1]).toEqual(before.messages[1]?.blocks[1]);
    expect(after.messages[0]).toEqual(before.messages[0]);
    expect(after.prefixHash.slice(0, MESSAGE_PREFIX_OFFSET + 1)).toEqual(
      before.prefixHash.slice(0, MESSAGE_PREFIX_OFFSET + 1),
    );
    expect(after.prefixHash[MESSAGE_PREFIX_OFFSET + 1]).not.toBe(
      before.prefixHash[MESSAGE_PREFIX_OFFSET + 1],
    );
  });

  it('keeps a cache_control key that is part of a tool input', () => {
    const plain = baseRequest();
    const changed = structuredClone(plain);
    const toolUse = (changed.messages[1]!.content as { input: Record<string, unknown> }[])[1]!;
    toolUse.input = { ...toolUse.input, cache_control: 'literal user data' };
    expect(fingerprintRequest(changed).messages[1]?.hash).not.toBe(
      fingerprintRequest(plain).messages[1]?.hash,
    );
  });

  it('keeps a "__proto__" key of a tool input as data', () => {
    const plain = baseRequest();
    const withKey = structuredClone(plain);
    const toolUse = (withKey.messages[1]!.content as { input: unknown }[])[1]!;
    toolUse.input = JSON.parse('{"file_path":"/repo/src/config.ts","__proto__":{"x":1}}');
    expect(fingerprintRequest(withKey).messages[1]?.hash).not.toBe(
      fingerprintRequest(plain).messages[1]?.hash,
    );
  });

  it('ignores fields outside the cache key: max_tokens, sampling, stream, metadata', () => {
    const plain = baseRequest();
    const tuned: CacheKeyRequest = {
      ...plain,
      max_tokens: 1024,
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['END'],
      stream: true,
      metadata: { user_id: 'u-1' },
      service_tier: 'standard_only',
    };
    expect(fingerprintRequest(tuned)).toEqual(fingerprintRequest(plain));
  });

  it('counts tool_choice and unknown body fields as cache-key options', () => {
    const plain = fingerprintRequest(baseRequest());
    const withChoice = fingerprintRequest({ ...baseRequest(), tool_choice: { type: 'any' } });
    const withSpeed = fingerprintRequest({ ...baseRequest(), speed: 'fast' });
    expect(withChoice.options.fields).toHaveProperty('tool_choice');
    expect(withChoice.options.hash).not.toBe(plain.options.hash);
    expect(withSpeed.options.hash).not.toBe(plain.options.hash);
    expect(withChoice.options.hash).not.toBe(withSpeed.options.hash);
    // Tools and system stay cached; the messages do not.
    expect(withChoice.prefixHash.slice(0, MESSAGE_PREFIX_OFFSET)).toEqual(
      plain.prefixHash.slice(0, MESSAGE_PREFIX_OFFSET),
    );
    expect(withChoice.prefixHash[MESSAGE_PREFIX_OFFSET]).not.toBe(
      plain.prefixHash[MESSAGE_PREFIX_OFFSET],
    );
  });

  it('treats string content and system as the single text block they stand for', () => {
    const asString = fingerprintRequest({
      model: 'm',
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hello' }],
    });
    const asBlocks = fingerprintRequest({
      model: 'm',
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
    });
    expect(asString).toEqual(asBlocks);
  });

  it('puts model and tools in the first prefix link and thinking only in the message links', () => {
    const plain = fingerprintRequest(baseRequest());
    const otherModel = fingerprintRequest({ ...baseRequest(), model: 'claude-opus-4-1' });
    const otherThinking = fingerprintRequest({
      ...baseRequest(),
      thinking: { type: 'enabled', budget_tokens: 4000 },
    });
    expect(otherModel.prefixHash[0]).not.toBe(plain.prefixHash[0]);
    expect(otherThinking.thinking.canonical).toBe('{"budget_tokens":4000,"type":"enabled"}');
    expect(otherThinking.prefixHash.slice(0, MESSAGE_PREFIX_OFFSET)).toEqual(
      plain.prefixHash.slice(0, MESSAGE_PREFIX_OFFSET),
    );
    expect(otherThinking.prefixHash[MESSAGE_PREFIX_OFFSET]).not.toBe(
      plain.prefixHash[MESSAGE_PREFIX_OFFSET],
    );
  });
});
