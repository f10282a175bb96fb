import { DelegateError } from '@delegate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertSharedPrefix } from './assert-shared-prefix.js';
import { assessCacheReach } from './assess-cache-reach.js';
import { buildForkChildMessages } from './build-fork-child-messages.js';
import { buildForkedMessages } from './build-forked-messages.js';
import { diagnoseCacheBreak } from './diagnose-cache-break.js';
import { type CacheKeyMessage, fingerprintRequest } from './fingerprint-request.js';
import { FORK_LAYOUTS, type ForkLayout } from './fork-layout.js';
import { formatCacheBreak } from './format-cache-break.js';
import { CLAUDE_API_LOOKBACK } from './lookback.js';
import { planForkBreakpoints } from './plan-fork-breakpoints.js';
import {
  fanOutMessage,
  lastBlockOf,
  requestWithBreakpoints,
  wireMessages,
} from './__fixtures__/fan-out.js';
import { parentHistory } from './__fixtures__/parent-conversation.js';

const history = wireMessages(parentHistory());
/** The parent's last request: the history, its last block marked (where the parent wrote). */
const parentRequest = requestWithBreakpoints(history, [lastBlockOf(history, history.length - 1)]);

function forkMessages(options: {
  count: number;
  index: number;
  layout: ForkLayout;
}): CacheKeyMessage[] {
  const { count, index, layout } = options;
  return [
    ...history,
    ...wireMessages(
      buildForkChildMessages({
        directive: `Audit part ${index}.`,
        assistantMessage: fanOutMessage(count, { thinking: true }),
        toolUseId: `toolu_fork_${index}`,
        layout,
      }),
    ),
  ];
}

function forkRequest(options: { count: number; index: number; layout: ForkLayout }) {
  const messages = forkMessages(options);
  const breakpoints = planForkBreakpoints({
    messages,
    inheritedMessages: history.length,
    layout: options.layout,
  });
  return { request: requestWithBreakpoints(messages, breakpoints), breakpoints, messages };
}

describe('planForkBreakpoints', () => {
  it.each([1, 4, 16, 32])(
    'lets a fork of a %i-way fan-out read the history its parent cached, in either layout',
    (count) => {
      for (const layout of FORK_LAYOUTS) {
        const { request, breakpoints } = forkRequest({ count, index: 0, layout });
        expect(breakpoints.length).toBeLessThanOrEqual(3);
        const diagnosis = diagnoseCacheBreak(parentRequest, request);
        expect(diagnosis).toMatchObject({ identical: false, longerRequest: 'b' });
        expect(diagnosis.reach.readEntry).toMatchObject({
          part: 'message',
          messageIndex: history.length - 1,
        });
      }
    },
  );

  it('in shared-message, marks the rules block so every later sibling reads all it shares', () => {
    const [first, second] = [0, 1].map((index) =>
      forkRequest({ count: 16, index, layout: 'shared-message' }),
    );
    const lastMessage = first!.messages.length - 1;
    // Placeholders 0-15, the rules block (16), the directive line (17).
    expect(first!.breakpoints).toEqual([
      lastBlockOf(history, history.length - 1),
      { messageIndex: lastMessage, blockIndex: 16 },
      { messageIndex: lastMessage, blockIndex: 17 },
    ]);
    const reach = assessCacheReach(
      fingerprintRequest(first!.request),
      fingerprintRequest(second!.request),
    );
    expect(reach).toMatchObject({
      reachable: true,
      readEntry: { messageIndex: lastMessage, blockIndex: 16 },
    });
    expect(() => assertSharedPrefix([first!.request, second!.request])).not.toThrow();
  });

  it('in per-child, needs only the directive line: siblings part after the text, within reach of the history', () => {
    const { breakpoints, messages } = forkRequest({ count: 32, index: 5, layout: 'per-child' });
    expect(breakpoints).toEqual([lastBlockOf(messages, messages.length - 1)]);
  });

  it("reports the old placement's miss at 16 forks, which the Claude API's grouping of tool runs would avoid", () => {
    const messages = [
      ...history,
      ...wireMessages(buildForkedMessages('Audit part 0.', fanOutMessage(16))),
    ];
    const last = messages.length - 1;
    // What the runtime placed before: the last two blocks of the last message.
    const old = requestWithBreakpoints(messages, [
      { messageIndex: last, blockIndex: 15 },
      { messageIndex: last, blockIndex: 16 },
    ]);
    const diagnosis = diagnoseCacheBreak(parentRequest, old);
    expect(diagnosis).toMatchObject({
      identical: false,
      firstDifference: { part: 'lookback', messageIndex: last, blockIndex: 15 },
      reach: { problem: 'beyond-lookback', distance: 33 },
    });
    expect(diagnosis).not.toHaveProperty('longerRequest');
    expect(formatCacheBreak(diagnosis)).toContain(
      `cache break in lookback: the nearest cached block (message 2 block 0 (tool_result)) is 33 blocks before request b's first breakpoint after it (message ${last} block 15 (tool_result))`,
    );
    const grouped = diagnoseCacheBreak(
      fingerprintRequest(parentRequest, { lookback: CLAUDE_API_LOOKBACK }),
      fingerprintRequest(old, { lookback: CLAUDE_API_LOOKBACK }),
    );
    expect(grouped).toMatchObject({ longerRequest: 'b', reach: { reachable: true } });
  });

  it('refuses an inheritedMessages count outside the request and an unknown layout', () => {
    const messages = forkMessages({ count: 2, index: 0, layout: 'shared-message' });
    const error = (run: () => unknown) => {
      try {
        run();
      } catch (caught) {
        if (DelegateError.isInstance(caught)) return caught.message;
      }
      return 'no error';
    };
    expect(
      error(() => planForkBreakpoints({ messages, inheritedMessages: messages.length })),
    ).toContain(
      `inheritedMessages is ${messages.length}; it must be a whole number below the request's ${messages.length} messages`,
    );
    expect(error(() => planForkBreakpoints({ messages, inheritedMessages: 1.5 }))).toContain(
      'inheritedMessages is 1.5',
    );
    expect(
      error(() =>
        planForkBreakpoints({ messages, inheritedMessages: 1, layout: 'x' as ForkLayout }),
      ),
    ).toContain('forkLayout is "x"');
  });

  it('for any fan-out size, child and layout, reaches the parent history, with siblings sharing what they can (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 48 }),
        fc.nat(),
        fc.nat(),
        fc.constantFrom(...FORK_LAYOUTS),
        (count, first, second, layout) => {
          const left = forkRequest({ count, index: first % count, layout });
          const right = forkRequest({ count, index: second % count, layout });
          expect(left.breakpoints.length).toBeLessThanOrEqual(3);
          expect(diagnoseCacheBreak(parentRequest, left.request)).toMatchObject({
            longerRequest: 'b',
          });
          const reach = assessCacheReach(
            fingerprintRequest(left.request),
            fingerprintRequest(right.request),
          );
          expect(reach.reachable).toBe(true);
          if (layout === 'shared-message' && first % count !== second % count) {
            // Siblings read everything up to their own directive line.
            expect(reach.readEntry?.index).toBe(reach.sharedBlocks - 1);
          }
        },
      ),
      { numRuns: 120 },
    );
  });
});
