import { describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
import { checkQueryParams } from './check-query-params.js';

/** The least `query` runs with. */
function params(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client: { messages: { create: () => undefined } },
    messages: [],
    systemPrompt: ['You help.'],
    toolUseContext: {
      options: { tools: [], model: 'claude-sonnet-5-5' },
      abortController: new AbortController(),
    },
    canUseTool: async () => ({ behavior: 'allow' }),
    querySource: 'test',
    ...extra,
  };
}

function refusal(value: unknown): { message: string; option: unknown } {
  try {
    checkQueryParams(value);
  } catch (error) {
    expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    const { details } = error as DelegateError;
    return { message: (error as Error).message, option: (details as { option: unknown }).option };
  }
  throw new Error('expected the params to be refused');
}

describe('checkQueryParams', () => {
  it('refuses an unknown key of the params, naming it with the key meant', () => {
    expect(refusal(params({ maxTurn: 3 }))).toEqual({
      message: 'query(): params.maxTurn is not an option (did you mean maxTurns?).',
      option: 'params.maxTurn',
    });
    expect(refusal(params({ colour: 1 })).message).toBe(
      'query(): params.colour is not an option (check the spelling against QueryParams).',
    );
  });

  it('refuses an unknown key of thinking, including the thinking of the context', () => {
    expect(
      refusal(params({ thinking: { type: 'enabled', budgetTokens: 2048, colour: 1 } })),
    ).toEqual({
      message:
        'query(): params.thinking.colour is not an option (the options here are type, budgetTokens).',
      option: 'params.thinking.colour',
    });
    expect(refusal(params({ thinking: { type: 'enabled', budget_tokens: 2048 } })).message).toBe(
      'query(): params.thinking.budget_tokens is not an option (did you mean budgetTokens?).',
    );
    expect(refusal(params({ thinking: { type: 'disabled', budgetTokens: 2048 } })).option).toBe(
      'params.thinking.budgetTokens',
    );
    expect(refusal(params({ thinking: { type: 'on' } })).option).toBe('params.thinking.type');
    expect(refusal(params({ thinking: { type: 'enabled', budgetTokens: 0.5 } })).option).toBe(
      'params.thinking.budgetTokens',
    );
    const context = params().toolUseContext as Record<string, unknown>;
    const withThinking = {
      ...context,
      options: { tools: [], model: 'm', thinking: { type: 'adaptive', mode: 'fast' } },
    };
    expect(refusal(params({ toolUseContext: withThinking })).option).toBe(
      'params.toolUseContext.options.thinking.mode',
    );
  });

  it('refuses an unknown or misshapen hook, usage guard, context text or tool list', () => {
    expect(refusal(params({ toolHooks: { beforeToolcall: async () => undefined } }))).toEqual({
      message:
        'query(): params.toolHooks.beforeToolcall is not an option (did you mean beforeToolCall?).',
      option: 'params.toolHooks.beforeToolcall',
    });
    expect(refusal(params({ toolHooks: { afterToolCall: 'echo' } })).option).toBe(
      'params.toolHooks.afterToolCall',
    );
    expect(refusal(params({ usageGuard: { ensureBudget: () => {} } })).option).toBe(
      'params.usageGuard.recordResponse',
    );
    expect(refusal(params({ userContext: { notes: 5 } })).option).toBe('params.userContext.notes');
    expect(refusal(params({ systemContext: 'text' })).option).toBe('params.systemContext');
    expect(refusal(params({ toolDefinitions: {} })).option).toBe('params.toolDefinitions');
  });

  it('accepts every option, open maps and host extras left open', () => {
    const guard = { ensureBudget: () => {}, recordResponse: () => {}, spentSoFar: 0 };
    expect(() =>
      checkQueryParams(
        params({
          userContext: { anyName: 'text' },
          systemContext: { gitStatus: 'clean' },
          toolUseContext: {
            options: { tools: [], model: 'm', thinking: { type: 'disabled' }, hostFlag: true },
            abortController: new AbortController(),
            agentId: 'a1',
          },
          maxTurns: 3,
          maxOutputTokensOverride: 4096,
          thinking: { type: 'enabled', budgetTokens: 2048 },
          effort: 'high',
          skipCacheWrite: true,
          drainQueuedMessages: () => [],
          maxToolConcurrency: 4,
          maxToolResultChars: 1000,
          toolDefinitions: [{ name: 'Read', input_schema: { type: 'object', anything: {} } }],
          maxStreamRetries: 2,
          streamIdleTimeoutMs: 1000,
          maxConsecutiveStalls: 3,
          toolHooks: {
            beforeToolCall: async () => undefined,
            afterToolCall: async () => undefined,
          },
          secrets: ['database-password'],
          forkLayout: 'per-child',
          usageGuard: guard,
          requestGate: async () => {},
        }),
      ),
    ).not.toThrow();
    expect(() => checkQueryParams(params({ thinking: { type: 'adaptive' } }))).not.toThrow();
  });
});
