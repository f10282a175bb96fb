import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { DelegateError } from '@delegate/core';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

async function refusal(attempt: () => Promise<unknown>): Promise<string> {
  try {
    await attempt();
  } catch (error) {
    expect(error).toBeInstanceOf(DelegateError);
    expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected the call to be refused');
}

async function drain(generator: AsyncGenerator<unknown, unknown>): Promise<void> {
  while (!(await generator.next()).done);
}

describe('session method options', () => {
  it('refuses a bad prompt or bad send() options with an error naming them, before any request', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'hello back' }) });
    const { session, sim } = current;
    const send = session.send.bind(session) as (prompt: unknown, options?: unknown) => unknown;
    expect(await refusal(async () => send(undefined))).toMatch(
      /send: the prompt must be a string.*got undefined/,
    );
    expect(await refusal(async () => send(42))).toMatch(/got number/);
    expect(await refusal(async () => send('hi', { maxTurns: -1 }))).toMatch(
      /send: options\.maxTurns: Too small/,
    );
    expect(await refusal(async () => send('hi', { maxTurns: Number.NaN }))).toMatch(
      /options\.maxTurns/,
    );
    expect(await refusal(async () => send('hi', { maxTurns: '3' }))).toMatch(/options\.maxTurns/);
    expect(await refusal(async () => send('hi', { onEvent: 5 }))).toMatch(
      /options\.onEvent: expected an event handler/,
    );
    expect(await refusal(async () => send('hi', null))).toMatch(/send: options/);
    expect(await refusal(async () => send('hi', { maxTurn: 3 }))).toMatch(
      /send: options\.maxTurn is not an option \(did you mean maxTurns\?\)\./,
    );
    const run = session.run.bind(session) as (prompt: unknown, options?: unknown) => never;
    expect(await refusal(() => drain(run('hi', { maxTurns: 0 })))).toMatch(
      /run: options\.maxTurns/,
    );
    expect(await refusal(() => drain(run(null)))).toMatch(/run: the prompt must be a string/);
    // Only whitespace: sent, it would stay in the conversation and fail every later request.
    expect(await refusal(async () => send('  \n\t'))).toMatch(
      /send: the prompt holds only whitespace/,
    );
    expect(await refusal(() => drain(run('   ')))).toMatch(/run: the prompt holds only whitespace/);
    expect(sim.journal.entries).toHaveLength(0);
    expect(session.messages).toEqual([]);

    // Good options still work, the empty prompt included.
    expect((await session.send('hi', { maxTurns: 2, onEvent: () => {} })).text).toBe('hello back');
    expect((await session.send('')).outcome).toEqual({ reason: 'completed', turns: 0 });
    // The conversation was left as it was: the next prompt works.
    expect((await session.send('again')).text).toBe('hello back');
    // Aborted, it runs nothing, and says so also when there was nothing to run.
    session.abort();
    expect((await session.send('')).outcome).toEqual({ reason: 'aborted', turns: 0 });
  });

  it('refuses bad forkAfterTurn() and resumeAgent() options with an error naming them', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'ok' }) });
    const { session } = current;
    await session.send('hi');
    const fork = session.forkAfterTurn.bind(session) as (options?: unknown) => Promise<unknown>;
    const resume = session.resumeAgent.bind(session) as (options?: unknown) => Promise<unknown>;
    expect(await refusal(() => fork())).toMatch(/forkAfterTurn: options: .*expected object/);
    expect(await refusal(() => fork({ prompt: 5 }))).toMatch(/forkAfterTurn: options\.prompt/);
    expect(await refusal(() => fork({ prompt: '   ' }))).toMatch(
      /forkAfterTurn: options\.prompt: the prompt is empty or only whitespace/,
    );
    expect(await refusal(() => resume({ agentId: 'a1', message: ' \n ' }))).toMatch(
      /resumeAgent: options\.message: the message is empty or only whitespace/,
    );
    expect(await refusal(() => resume())).toMatch(/resumeAgent: options: .*expected object/);
    expect(await refusal(() => resume({ agentId: 5 }))).toMatch(/resumeAgent: options\.agentId/);
    expect(await refusal(() => resume({ agentId: 'a1', inFlightToolCalls: 'redo' }))).toMatch(
      /inFlightToolCalls must be 'interrupt' or 'rerun-read-only', got "redo"/,
    );
  });

  it('refuses an unknown key of every method, naming it with the key meant', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'ok' }) });
    const { session, sim } = current;
    const send = session.send.bind(session) as (prompt: string, options?: unknown) => unknown;
    const run = session.run.bind(session) as (prompt: string, options?: unknown) => never;
    const fork = session.forkAfterTurn.bind(session) as (options?: unknown) => Promise<unknown>;
    const resume = session.resumeAgent.bind(session) as (options?: unknown) => Promise<unknown>;
    const settle = session.settleInFlightToolCalls.bind(session) as (
      options?: unknown,
    ) => Promise<unknown>;
    expect(await refusal(async () => send('hi', { waitForBackgrond: true }))).toBe(
      'send: options.waitForBackgrond is not an option (did you mean waitForBackground?).',
    );
    expect(await refusal(() => drain(run('hi', { max_turns: 2 })))).toBe(
      'run: options.max_turns is not an option (did you mean maxTurns?).',
    );
    expect(await refusal(() => fork({ prompt: 'sum up', skipTranscripts: true }))).toBe(
      'forkAfterTurn: options.skipTranscripts is not an option (did you mean skipTranscript?).',
    );
    expect(await refusal(() => resume({ agentId: 'a1', inFlightToolcalls: 'interrupt' }))).toBe(
      'resumeAgent: options.inFlightToolcalls is not an option (did you mean inFlightToolCalls?).',
    );
    expect(await refusal(() => settle({ mode: 'interrupt', result: {} }))).toBe(
      'settleInFlightToolCalls: options.result is not an option (did you mean results?).',
    );
    expect(await refusal(() => settle({ colour: 1 }))).toBe(
      'settleInFlightToolCalls: options.colour is not an option (the options here are mode, results).',
    );
    expect(sim.journal.entries).toHaveLength(0);
    // Every known key still goes through; `results` stays a map of any call ids.
    expect(await settle({ mode: 'interrupt', results: { toolu_anything: 'report' } })).toEqual({
      rerun: [],
      interrupted: [],
      recovered: [],
    });
    expect(
      (await session.send('hi', { maxTurns: 2, waitForBackground: false, onEvent: () => {} })).text,
    ).toBe('ok');
  });
});
