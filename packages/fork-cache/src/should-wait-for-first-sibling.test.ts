import { DelegateError } from '@delegate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildForkChildMessages } from './build-fork-child-messages.js';
import { FORK_LAYOUTS } from './fork-layout.js';
import {
  DEFAULT_MINIMUM_SAVED_TOKENS,
  estimateSiblingSharedTokens,
  shouldWaitForFirstSibling,
} from './should-wait-for-first-sibling.js';
import { fanOutMessage, wireMessages } from './__fixtures__/fan-out.js';

function shared(count: number): number {
  const childMessages = wireMessages(
    buildForkChildMessages({
      directive: 'x',
      assistantMessage: fanOutMessage(count),
      layout: 'shared-message',
    }),
  );
  return estimateSiblingSharedTokens({ layout: 'shared-message', childMessages });
}

describe('shouldWaitForFirstSibling', () => {
  it('never waits in per-child, or for a single child', () => {
    expect(
      shouldWaitForFirstSibling({ layout: 'per-child', siblings: 32, sharedTokens: 1e6 }),
    ).toBe(false);
    expect(
      shouldWaitForFirstSibling({ layout: 'shared-message', siblings: 1, sharedTokens: 1e6 }),
    ).toBe(false);
  });

  it('waits in shared-message once the writes it saves reach the minimum', () => {
    // Four siblings share a few hundred tokens (the copied calls, placeholders and rules): not worth a wait.
    expect(
      shouldWaitForFirstSibling({ layout: 'shared-message', siblings: 4, sharedTokens: shared(4) }),
    ).toBe(false);
    // Sixteen share several thousand, fifteen times over.
    expect(
      shouldWaitForFirstSibling({
        layout: 'shared-message',
        siblings: 16,
        sharedTokens: shared(16),
      }),
    ).toBe(true);
    expect(
      shouldWaitForFirstSibling({
        layout: 'shared-message',
        siblings: 4,
        sharedTokens: 10,
        minimumSavedTokens: 30,
      }),
    ).toBe(true);
    expect(DEFAULT_MINIMUM_SAVED_TOKENS).toBe(4096);
  });

  it('estimates nothing shared in per-child and more shared with every sibling in shared-message', () => {
    expect(estimateSiblingSharedTokens({ layout: 'per-child', childMessages: [] })).toBe(0);
    expect(shared(1)).toBeGreaterThan(300);
    expect(shared(16) - shared(15)).toBeGreaterThan(20);
  });

  it('refuses counts that are not numbers and unknown layouts', () => {
    const message = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        if (DelegateError.isInstance(error)) return error.message;
      }
      return 'no error';
    };
    expect(
      message(() =>
        shouldWaitForFirstSibling({ layout: 'shared-message', siblings: -1, sharedTokens: 1 }),
      ),
    ).toContain('siblings is -1');
    expect(
      message(() =>
        shouldWaitForFirstSibling({ layout: 'x' as never, siblings: 2, sharedTokens: 1 }),
      ),
    ).toContain('forkLayout is "x"');
  });

  it('is monotone: more siblings or more shared tokens never turn a wait into no wait (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...FORK_LAYOUTS),
        fc.integer({ min: 0, max: 64 }),
        fc.integer({ min: 0, max: 20_000 }),
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 0, max: 5000 }),
        (layout, siblings, sharedTokens, moreSiblings, moreTokens) => {
          const before = shouldWaitForFirstSibling({ layout, siblings, sharedTokens });
          const after = shouldWaitForFirstSibling({
            layout,
            siblings: siblings + moreSiblings,
            sharedTokens: sharedTokens + moreTokens,
          });
          if (before) expect(after).toBe(true);
          if (layout === 'per-child') expect(after).toBe(false);
        },
      ),
    );
  });
});
