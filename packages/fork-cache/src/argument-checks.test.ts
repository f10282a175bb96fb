import { DelegateError } from '@delegate/core';
import { describe, expect, it } from 'vitest';
import * as forkCache from './index.js';

const messages = [{ role: 'user', content: 'hello' }];
const request = { model: 'm', messages };
const params = {
  systemPrompt: [],
  userContext: {},
  systemContext: {},
  toolUseContext: {},
  forkContextMessages: [],
} as unknown as forkCache.CacheSafeParams;

function thrown(call: () => unknown): DelegateError {
  try {
    call();
  } catch (error) {
    if (error instanceof DelegateError) return error;
    throw error;
  }
  throw new Error('expected a DelegateError, but the call returned');
}

// Each case: what the call is, the call with one bad argument, and the argument it must name.
const cases: [string, () => unknown, string][] = [
  ['applyCacheBreakpoints(null)', () => forkCache.applyCacheBreakpoints(null as never), 'options'],
  [
    'applyCacheBreakpoints messages null',
    () => forkCache.applyCacheBreakpoints({ messages: null as never, breakpoints: [] }),
    'options.messages',
  ],
  [
    'applyCacheBreakpoints breakpoints 42',
    () => forkCache.applyCacheBreakpoints({ messages, breakpoints: 42 as never }),
    'options.breakpoints',
  ],
  [
    'applyCacheBreakpoints cacheControl 42',
    () => forkCache.applyCacheBreakpoints({ messages, breakpoints: [], cacheControl: 42 as never }),
    'options.cacheControl',
  ],
  [
    'assertCacheSafeForkOptions(undefined)',
    () => forkCache.assertCacheSafeForkOptions(undefined as never),
    'options',
  ],
  [
    'assertCacheSafeForkOptions shareCache null',
    () => forkCache.assertCacheSafeForkOptions({ maxOutputTokens: 5, shareCache: null as never }),
    'options.shareCache',
  ],
  ['assertSharedPrefix(text)', () => forkCache.assertSharedPrefix('text' as never), 'requests'],
  [
    'assertSharedPrefix element null',
    () => forkCache.assertSharedPrefix([request, null as never]),
    'requests[1]',
  ],
  [
    'assertSharedPrefix options null',
    () => forkCache.assertSharedPrefix([request], null as never),
    'options',
  ],
  [
    'assessCacheReach(null, …)',
    () => forkCache.assessCacheReach(null as never, null as never),
    'a',
  ],
  ['buildChildMessage(42)', () => forkCache.buildChildMessage(42 as never), 'directive'],
  [
    'buildForkDirectiveLine(null)',
    () => forkCache.buildForkDirectiveLine(null as never),
    'directive',
  ],
  [
    'buildForkChildMessages(null)',
    () => forkCache.buildForkChildMessages(null as never),
    'options',
  ],
  [
    'buildForkedMessages assistantMessage null',
    () => forkCache.buildForkedMessages('x', null as never),
    'assistantMessage',
  ],
  [
    'buildForkedMessages directive 42',
    () => forkCache.buildForkedMessages(42 as never, null as never),
    'directive',
  ],
  [
    'buildWorktreeNotice(null, …)',
    () => forkCache.buildWorktreeNotice(null as never, '/b'),
    'parentCwd',
  ],
  [
    'buildWorktreeNotice(…, 42)',
    () => forkCache.buildWorktreeNotice('/a', 42 as never),
    'worktreeCwd',
  ],
  [
    'saveCacheSafeParams(undefined)',
    () => forkCache.saveCacheSafeParams(undefined as never),
    'params',
  ],
  [
    'saveCacheSafeParams userContext text',
    () => forkCache.saveCacheSafeParams({ ...params, userContext: 'text' as never }),
    'params.userContext',
  ],
  [
    'slot.save forkContextMessages null',
    () =>
      forkCache.createCacheSafeParamsSlot().save({ ...params, forkContextMessages: null as never }),
    'params.forkContextMessages',
  ],
  ['describeCacheReach(null)', () => forkCache.describeCacheReach(null as never), 'reach'],
  ['diagnoseCacheBreak(…, 42)', () => forkCache.diagnoseCacheBreak(request, 42 as never), 'b'],
  ['fingerprintRequest(null)', () => forkCache.fingerprintRequest(null as never), 'request'],
  [
    'fingerprintRequest model 42',
    () => forkCache.fingerprintRequest({ model: 42 as never, messages }),
    'request.model',
  ],
  [
    'fingerprintRequest messages text',
    () => forkCache.fingerprintRequest({ model: 'm', messages: 'text' as never }),
    'request.messages',
  ],
  [
    'fingerprintRequest message null',
    () => forkCache.fingerprintRequest({ model: 'm', messages: [null as never] }),
    'request.messages[0]',
  ],
  [
    'fingerprintRequest tools 42',
    () => forkCache.fingerprintRequest({ ...request, tools: 42 as never }),
    'request.tools',
  ],
  [
    'fingerprintRequest lookback 42',
    () => forkCache.fingerprintRequest(request, { lookback: 42 as never }),
    'options.lookback',
  ],
  ['formatCacheBreak([])', () => forkCache.formatCacheBreak([] as never), 'diagnosis'],
  ['isInForkChild(null)', () => forkCache.isInForkChild(null as never), 'messages'],
  ['isInForkChild element null', () => forkCache.isInForkChild([null as never]), 'messages[0]'],
  [
    'planCacheBreakpoints(undefined)',
    () => forkCache.planCacheBreakpoints(undefined as never),
    'options',
  ],
  [
    'planCacheBreakpoints message content 42',
    () => forkCache.planCacheBreakpoints({ messages: [{ role: 'user', content: 42 as never }] }),
    'options.messages[0].content',
  ],
  [
    'planCacheBreakpoints cachedAt text',
    () => forkCache.planCacheBreakpoints({ messages, cachedAt: 'text' as never }),
    'options.cachedAt',
  ],
  [
    'planCacheBreakpoints lookback []',
    () => forkCache.planCacheBreakpoints({ messages, lookback: [] as never }),
    'options.lookback',
  ],
  [
    'planForkBreakpoints messages undefined',
    () => forkCache.planForkBreakpoints({ messages: undefined as never, inheritedMessages: 0 }),
    'options.messages',
  ],
  [
    'estimateSiblingSharedTokens childMessages null',
    () =>
      forkCache.estimateSiblingSharedTokens({ layout: 'per-child', childMessages: null as never }),
    'options.childMessages',
  ],
  [
    'shouldWaitForFirstSibling(null)',
    () => forkCache.shouldWaitForFirstSibling(null as never),
    'options',
  ],
];

describe('argument checks', () => {
  it.each(cases)('%s throws INVALID_ARGUMENT naming the argument', (_label, call, option) => {
    const error = thrown(call);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toMatch(/^[A-Za-z.]+\(\): /);
    expect(error.message).toContain(` ${option} must be `);
    expect(error.message).toMatch(/; got (null|undefined|an? .+)\.$/);
  });

  it('names the function in the message', () => {
    expect(thrown(() => forkCache.fingerprintRequest(null as never)).message).toBe(
      'fingerprintRequest(): request must be an object; got null.',
    );
  });

  it('still accepts valid input', () => {
    expect(forkCache.planCacheBreakpoints({ messages })).toEqual([
      { messageIndex: 0, blockIndex: 0 },
    ]);
    expect(forkCache.isInForkChild([])).toBe(false);
    expect(() => forkCache.saveCacheSafeParams(null)).not.toThrow();
  });
});
