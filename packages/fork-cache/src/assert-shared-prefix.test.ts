import { DelegateError } from '@delegate/core';
import { describe, expect, it } from 'vitest';
import { assertSharedPrefix } from './assert-shared-prefix.js';
import { buildForkedMessages } from './build-forked-messages.js';
import { type CacheKeyRequest, fingerprintRequest } from './fingerprint-request.js';
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
    expect(thrown(() => assertSharedPrefix([forkRequest('one'), extra])).code).toBe('CACHE_UNSAFE');
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
});
