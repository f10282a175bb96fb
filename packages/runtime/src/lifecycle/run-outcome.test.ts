import { describe, expect, it } from 'vitest';
import {
  type AssistantMessage,
  type ContentBlock,
  DelegateError,
  createUserMessage,
  createUuid,
} from '@delegate/core';
import { attachWorktree, foregroundResult, lastRequestId, summarizeRun } from './run-outcome.js';

function assistant(content: ContentBlock[], requestId?: string): AssistantMessage {
  return {
    type: 'assistant',
    uuid: createUuid(),
    timestamp: new Date().toISOString(),
    message: {
      id: 'msg',
      role: 'assistant',
      model: 'm',
      content,
      stop_reason: 'end_turn',
      usage: { input_tokens: 3, output_tokens: 2 },
    },
    ...(requestId ? { requestId } : {}),
  };
}

const facts = (runMessages: AssistantMessage[], aborted = false) => ({
  agentId: 'a1',
  agentType: 'general-purpose',
  runMessages: [createUserMessage({ content: 'task' }), ...runMessages],
  startTime: Date.now(),
  aborted,
});

describe('summarizeRun', () => {
  it('completes a run that ended with a report', () => {
    const finished = summarizeRun(facts([assistant([{ type: 'text', text: 'done' }])]), {
      reason: 'completed',
    });
    expect(finished.status).toBe('completed');
  });

  it('keeps the work of a failed run as a partial report that says why', () => {
    const finished = summarizeRun(facts([assistant([{ type: 'text', text: 'half done' }])]), {
      error: new Error('529 overloaded'),
    });
    expect(finished).toMatchObject({
      status: 'failed',
      partial: { partial: '529 overloaded', content: [{ type: 'text', text: 'half done' }] },
    });
    expect(
      foregroundResult(finished, { agentId: 'a1', agentType: 'general-purpose' }).partial,
    ).toBe('529 overloaded');
  });

  it('calls an aborted run killed, and a run with nothing to show throws for a foreground caller', () => {
    const killed = summarizeRun(facts([], true), { error: new Error('aborted') });
    expect(killed).toEqual({ status: 'killed' });
    expect(() => foregroundResult(killed, { agentId: 'a1', agentType: 'Explore' })).toThrow(
      /Agent a1 \(Explore\) was stopped before it produced a report/,
    );
    const failed = summarizeRun(facts([]), { error: new DelegateError('MAX_TURNS', 'limit') });
    expect(() => foregroundResult(failed, { agentId: 'a1', agentType: 'Explore' })).toThrow(
      'limit',
    );
  });

  it('names the kept worktree in what a foreground caller gets, report or error', () => {
    const worktree = { path: '/trees/agent-a1', branch: 'delegate/agent-a1' };
    const partial = summarizeRun(facts([assistant([{ type: 'text', text: 'half' }])]), {
      error: new Error('529 overloaded'),
    });
    attachWorktree(partial, worktree);
    expect(
      foregroundResult(partial, { agentId: 'a1', agentType: 'general-purpose' }).worktree,
    ).toEqual(worktree);
    const failed = summarizeRun(facts([]), { error: new DelegateError('MAX_TURNS', 'limit') });
    attachWorktree(failed, worktree);
    const error = (() => {
      try {
        foregroundResult(failed, { agentId: 'a1', agentType: 'general-purpose' });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(DelegateError.hasCode(error, 'MAX_TURNS')).toBe(true);
    expect((error as DelegateError).message).toBe(
      'limit Its worktree is kept, with its changes, at /trees/agent-a1 (branch delegate/agent-a1).',
    );
    expect((error as DelegateError).details).toMatchObject({ worktreePath: worktree.path });
    const killed = summarizeRun(facts([], true), { error: new Error('aborted') });
    attachWorktree(killed, worktree);
    expect(() => foregroundResult(killed, { agentId: 'a1', agentType: 'general-purpose' })).toThrow(
      /stopped before it produced a report\. Its worktree is kept, with its changes, at \/trees\/agent-a1/,
    );
  });

  it('finds the request id of the last response that has one', () => {
    expect(
      lastRequestId([
        assistant([{ type: 'text', text: 'a' }], 'req_1'),
        assistant([{ type: 'text', text: 'b' }], 'req_2'),
        assistant([{ type: 'text', text: 'c' }]),
      ]),
    ).toBe('req_2');
    expect(lastRequestId([])).toBeUndefined();
  });
});
