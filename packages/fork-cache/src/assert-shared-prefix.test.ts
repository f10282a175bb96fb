import { DelegateError } from '@delegate/core';
import { describe, expect, it } from 'vitest';
import { assertSharedPrefix } from './assert-shared-prefix.js';
import { buildForkedMessages } from './build-forked-messages.js';
import { type CacheKeyRequest, fingerprintRequest } from './fingerprint-request.js';
import { CLAUDE_API_LOOKBACK } from './lookback.js';
import {
  fanOutMessage,
  lastBlockOf,
  requestWithBreakpoints,
  wireMessages,
} from './__fixtures__/fan-out.js';
import {
  forkingAssistantMessage,
  parentHistory,
  toRequest,
} from './__fixtures__/parent-conversation.js';

function forkRequest(directive: string, overrides: Partial<CacheKeyRequest> = {}): CacheKeyRequest {
  return toRequest(
    [...parentHistory(), ...buildForkedMessages(directive, forkingAssistantMessage())],
    overrides,
  );
}

function thrown(run: () => void): DelegateError {
  try {
    run();
  } catch (error) {
    if (DelegateError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected assertSharedPrefix to throw');
}

describe('assertSharedPrefix', () => {
  it('accepts sibling forks, as requests or as fingerprints', () => {
    const requests = [forkRequest('one'), forkRequest('two'), forkRequest('three')];
    expect(() => assertSharedPrefix(requests)).not.toThrow();
    expect(() =>
      assertSharedPrefix(requests.map((request) => fingerprintRequest(request))),
    ).not.toThrow();
    expect(() => assertSharedPrefix([])).not.toThrow();
    expect(() => assertSharedPrefix([forkRequest('alone')])).not.toThrow();
  });

  it('throws CACHE_UNSAFE naming the request and the first difference', () => {
    const error = thrown(() =>
      assertSharedPrefix([
        forkRequest('one'),
        forkRequest('two'),
        forkRequest('three', { system: [{ type: 'text', text: 'A freshly rendered prompt.' }] }),
      ]),
    );
    expect(error.code).toBe('CACHE_UNSAFE');
    expect(error.message).toContain('Request 2');
    expect(error.message).toContain('cache break in system: system block 0 has different text');
    expect(error.details).toMatchObject({
      requestIndex: 2,
      firstDifference: { part: 'system', blockIndex: 0 },
    });
  });

  it('refuses a difference before the last block of the last message', () => {
    const changed = forkRequest('two');
    const lastContent = changed.messages.at(-1)!.content as { content: { text: string }[] }[];
    lastContent[1]!.content = [{ text: 'Fork 2 of 3 started' }];
    const error = thrown(() => assertSharedPrefix([forkRequest('one'), changed]));
    expect(error.details).toMatchObject({
      firstDifference: { part: 'message', messageIndex: 4, blockIndex: 1 },
    });
  });

  it('refuses a fork whose last message has an extra block', () => {
    const extra = forkRequest('two');
    (extra.messages.at(-1)!.content as unknown[]).push({ type: 'text', text: 'more' });
    const error = thrown(() => assertSharedPrefix([forkRequest('one'), extra]));
    expect(error.code).toBe('CACHE_UNSAFE');
    // The shape is named, not the last block's content (which may differ).
    expect(error.message).toMatch(/its last message has \d+ blocks where request 0's has \d+/);
  });

  it('names an extra message as the difference', () => {
    const two = forkRequest('two');
    const longer = { ...two, messages: [...two.messages, { role: 'user', content: 'one more' }] };
    expect(thrown(() => assertSharedPrefix([forkRequest('one'), longer])).message).toMatch(
      /it has \d+ messages where request 0 has \d+/,
    );
  });

  it('with upToLastBlock false, requires every cache-key part to match', () => {
    expect(() =>
      assertSharedPrefix([forkRequest('same'), forkRequest('same')], { upToLastBlock: false }),
    ).not.toThrow();
    const error = thrown(() =>
      assertSharedPrefix([forkRequest('one'), forkRequest('two')], { upToLastBlock: false }),
    );
    expect(error.message).toContain('every cache-key part');
    expect(error.details).toMatchObject({
      firstDifference: { part: 'message', messageIndex: 4, blockIndex: 3 },
    });
  });

  it('refuses siblings that share the bytes but cannot reach the entry the first one wrote', () => {
    const sibling = (directive: string) =>
      wireMessages([...parentHistory(), ...buildForkedMessages(directive, fanOutMessage(16))]);
    const first = sibling('one');
    const last = first.length - 1;
    const reference = requestWithBreakpoints(first, [
      lastBlockOf(first, 2),
      lastBlockOf(first, last),
    ]);
    const far = requestWithBreakpoints(sibling('two'), [lastBlockOf(first, last)]);
    const error = thrown(() => assertSharedPrefix([reference, far]));
    expect(error.code).toBe('CACHE_UNSAFE');
    expect(error.message).toContain(
      "Request 1 shares request 0's prefix byte for byte but cannot read it from the cache: the nearest cached block (message 2 block 0 (tool_result)) is 34 blocks before",
    );
    expect(error.details).toMatchObject({ requestIndex: 1, reach: { problem: 'beyond-lookback' } });
    // Where the API groups tool runs (the Claude API), the same pair is fine.
    expect(() =>
      assertSharedPrefix([reference, far], { lookback: CLAUDE_API_LOOKBACK }),
    ).not.toThrow();
  });
});
