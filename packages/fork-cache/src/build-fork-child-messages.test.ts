import { type ContentBlock, DelegateError, type Message } from '@delegate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildChildMessage } from './build-child-message.js';
import { buildForkChildMessages } from './build-fork-child-messages.js';
import { diagnoseCacheBreak } from './diagnose-cache-break.js';
import { fingerprintRequest } from './fingerprint-request.js';
import { DEFAULT_FORK_LAYOUT, FORK_LAYOUTS, type ForkLayout } from './fork-layout.js';
import {
  buildForkDirectiveLine,
  buildForkRulesBlock,
  buildForkRulesForParent,
} from './fork-worker-rules.js';
import { FORK_PLACEHOLDER_RESULT } from './fork-constants.js';
import { isInForkChild } from './is-in-fork-child.js';
import { fanOutMessage, wireMessages } from './__fixtures__/fan-out.js';
import { assistantMessage, parentHistory, toRequest } from './__fixtures__/parent-conversation.js';

function blocksOf(message: Message | undefined): ContentBlock[] {
  if (
    (message?.type !== 'user' && message?.type !== 'assistant') ||
    typeof message.message.content === 'string'
  ) {
    throw new Error('expected a message with content blocks');
  }
  return message.message.content;
}

function thrown(run: () => unknown): DelegateError {
  try {
    run();
  } catch (error) {
    if (DelegateError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a DelegateError');
}

const rules = { type: 'text', text: buildForkRulesBlock() };

describe('buildForkChildMessages', () => {
  it('shared-message: the whole assistant turn, a placeholder per call, the rules block, then the directive line', () => {
    const parentTurn = fanOutMessage(3, { thinking: true });
    const [assistant, user, ...rest] = buildForkChildMessages({
      directive: 'Audit part 1.',
      assistantMessage: parentTurn,
      layout: 'shared-message',
    });
    expect(rest).toEqual([]);
    expect(assistant?.uuid).not.toBe(parentTurn.uuid);
    expect(blocksOf(assistant)).toEqual(parentTurn.message.content);
    expect(blocksOf(user)).toEqual([
      ...['toolu_fork_0', 'toolu_fork_1', 'toolu_fork_2'].map((id) => ({
        type: 'tool_result',
        tool_use_id: id,
        content: [{ type: 'text', text: FORK_PLACEHOLDER_RESULT }],
      })),
      rules,
      { type: 'text', text: 'Your directive: Audit part 1.' },
    ]);
  });

  it("per-child: the turn's thinking and text with only the child's own call, one placeholder, rules, directive", () => {
    const parentTurn = fanOutMessage(4, { thinking: true });
    const [assistant, user] = buildForkChildMessages({
      directive: 'Audit part 2.',
      assistantMessage: parentTurn,
      toolUseId: 'toolu_fork_2',
      layout: 'per-child',
    });
    expect(
      blocksOf(assistant).map((block) => (block.type === 'tool_use' ? block.id : block.type)),
    ).toEqual(['thinking', 'text', 'toolu_fork_2']);
    expect(blocksOf(user)).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_fork_2',
        content: [{ type: 'text', text: FORK_PLACEHOLDER_RESULT }],
      },
      rules,
      { type: 'text', text: 'Your directive: Audit part 2.' },
    ]);
  });

  it('gives per-child siblings a shared prefix up to their own call, which is where they part', () => {
    const parentTurn = fanOutMessage(4);
    const history = parentHistory();
    const request = (id: string) =>
      toRequest([
        ...history,
        ...buildForkChildMessages({
          directive: `Work on ${id}.`,
          assistantMessage: parentTurn,
          toolUseId: id,
          layout: 'per-child',
        }),
      ]);
    expect(diagnoseCacheBreak(request('toolu_fork_0'), request('toolu_fork_3'))).toMatchObject({
      identical: false,
      firstDifference: { part: 'message', messageIndex: history.length, blockIndex: 1 },
      sharedPrefixMessages: history.length,
    });
  });

  it('puts the rules in the parent prefix on request, leaving a short block that still marks the fork', () => {
    const [, user] = buildForkChildMessages({
      directive: 'Audit.',
      assistantMessage: fanOutMessage(2),
      layout: 'shared-message',
      rulesPlacement: 'parent-prefix',
    });
    const [placeholders, short, directive] = [
      blocksOf(user).slice(0, 2),
      blocksOf(user)[2],
      blocksOf(user)[3],
    ];
    expect(placeholders.map((block) => block.type)).toEqual(['tool_result', 'tool_result']);
    expect(short).toEqual({ type: 'text', text: buildForkRulesBlock('parent-prefix') });
    expect(directive).toEqual({ type: 'text', text: buildForkDirectiveLine('Audit.') });
    expect(isInForkChild([user!])).toBe(true);
    // The notice is a fraction of the rules, which the parent's prefix carries instead.
    expect(buildForkRulesBlock('parent-prefix').length * 4).toBeLessThan(
      buildForkRulesBlock().length,
    );
    const parentText = buildForkRulesForParent();
    expect(parentText).toContain('The main agent does not follow them');
    expect(parentText).toContain(buildForkRulesBlock().split('\n')[1]);
  });

  it('returns one user message with the rules and the directive when the turn has no tool_use', () => {
    const messages = buildForkChildMessages({
      directive: 'Summarize.',
      assistantMessage: assistantMessage([{ type: 'text', text: 'Done.' }]),
      layout: 'per-child',
    });
    expect(messages).toHaveLength(1);
    expect(blocksOf(messages[0])).toEqual([
      rules,
      { type: 'text', text: 'Your directive: Summarize.' },
    ]);
    expect(isInForkChild(messages)).toBe(true);
  });

  it('keeps the old single-block text: buildChildMessage is the rules block, a blank line and the directive line', () => {
    expect(buildChildMessage('Look.')).toBe(
      `${buildForkRulesBlock()}\n\n${buildForkDirectiveLine('Look.')}`,
    );
  });

  it('never changes the parent turn and drops its breakpoints from the copy', () => {
    const parentTurn = fanOutMessage(3);
    const content = parentTurn.message.content;
    (content[1] as { cache_control?: unknown }).cache_control = { type: 'ephemeral' };
    const before = structuredClone(parentTurn);
    for (const layout of FORK_LAYOUTS) {
      const [assistant] = buildForkChildMessages({
        directive: 'x',
        assistantMessage: parentTurn,
        toolUseId: 'toolu_fork_0',
        layout,
      });
      const copied = blocksOf(assistant);
      expect(copied.filter((block) => 'cache_control' in block)).toEqual([]);
      copied.push({ type: 'text', text: 'changed' });
    }
    expect(parentTurn).toEqual(before);
  });

  it("uses the only call of a single-call turn as the child's own, and the default layout is per-child", () => {
    const [assistant, user] = buildForkChildMessages({
      directive: 'x',
      assistantMessage: fanOutMessage(1),
    });
    expect(blocksOf(assistant).map((block) => block.type)).toEqual(['text', 'tool_use']);
    expect(blocksOf(user)[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_fork_0' });
    expect(DEFAULT_FORK_LAYOUT).toBe('per-child');
    const [perChild] = buildForkChildMessages({
      directive: 'x',
      assistantMessage: fanOutMessage(3),
      toolUseId: 'toolu_fork_1',
    });
    expect(blocksOf(perChild).filter((block) => block.type === 'tool_use')).toHaveLength(1);
  });

  it('refuses a per-child fork without its own tool_use id, an unknown id, and unknown options', () => {
    const parentTurn = fanOutMessage(2);
    const missing = thrown(() =>
      buildForkChildMessages({ directive: 'x', assistantMessage: parentTurn, layout: 'per-child' }),
    );
    expect(missing.code).toBe('INVALID_ARGUMENT');
    expect(missing.message).toContain('needs toolUseId');
    expect(missing.message).toContain('toolu_fork_0, toolu_fork_1');
    const unknown = thrown(() =>
      buildForkChildMessages({
        directive: 'x',
        assistantMessage: parentTurn,
        toolUseId: 'toolu_other',
        layout: 'shared-message',
      }),
    );
    expect(unknown.message).toContain('"toolu_other" is not a tool_use');
    const layout = thrown(() =>
      buildForkChildMessages({
        directive: 'x',
        assistantMessage: parentTurn,
        layout: 'per-sibling' as ForkLayout,
      }),
    );
    expect(layout.message).toContain(
      `forkLayout is "per-sibling"; use one of 'shared-message', 'per-child'`,
    );
    const placement = thrown(() =>
      buildForkChildMessages({
        directive: 'x',
        assistantMessage: parentTurn,
        rulesPlacement: 'system' as never,
      }),
    );
    expect(placement.message).toContain('rulesPlacement is "system"');
    const notAssistant = thrown(() =>
      buildForkChildMessages({ directive: 'x', assistantMessage: parentHistory()[0] as never }),
    );
    expect(notAssistant.message).toContain("must be the parent's assistant message");
  });

  it('for any fan-out, directive and layout: pairs every copied call, keeps the rules identical, and varies only the last block (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.string(),
        fc.string(),
        fc.constantFrom(...FORK_LAYOUTS),
        fc.nat(),
        (count, first, second, layout, pick) => {
          const parentTurn = fanOutMessage(count);
          const toolUseId = `toolu_fork_${pick % count}`;
          const build = (directive: string) =>
            buildForkChildMessages({ directive, assistantMessage: parentTurn, toolUseId, layout });
          const left = build(first);
          const right = build(second);
          const [assistant, user] = left;
          const calls = blocksOf(assistant).filter((block) => block.type === 'tool_use');
          const results = blocksOf(user).filter((block) => block.type === 'tool_result');
          expect(results.map((block) => block.tool_use_id)).toEqual(calls.map((block) => block.id));
          expect(calls).toHaveLength(layout === 'per-child' ? 1 : count);
          // Results first, then the rules, then the directive: the API wants results to lead.
          expect(blocksOf(user).slice(results.length)).toEqual([
            rules,
            { type: 'text', text: buildForkDirectiveLine(first) },
          ]);
          const requests = [left, right].map((messages) =>
            fingerprintRequest({
              model: 'm',
              messages: wireMessages([...parentHistory(), ...messages]),
            }),
          );
          if (first === second) {
            expect(requests[0]!.prefixHash).toEqual(requests[1]!.prefixHash);
          } else {
            expect(diagnoseCacheBreak(requests[0]!, requests[1]!)).toMatchObject({
              firstDifference: { part: 'message', blockIndex: results.length + 1 },
            });
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
