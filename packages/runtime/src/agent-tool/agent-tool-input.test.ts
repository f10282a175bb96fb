import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { type SimRequest, rules } from '@delegate/api-sim';
import { createAgentId, createTaskId } from '@delegate/core';
import { agentCall, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import { AgentToolInput } from './agent-tool-input.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const valid = { description: 'count files', prompt: 'Count the files' };

function issuesOf(input: Record<string, unknown>): string[] {
  const parsed = AgentToolInput.safeParse({ ...valid, ...input });
  return parsed.success ? [] : parsed.error.issues.map((issue) => issue.message);
}

describe('Agent tool input', () => {
  it('refuses a prompt with no visible text', () => {
    for (const prompt of ['', ' ', '\n\t  \r\n', '\u00a0\u3000', '\u200b\u200b\ufeff']) {
      expect(issuesOf({ prompt }), JSON.stringify(prompt)).toEqual([
        'prompt must contain the task: it is empty or only whitespace',
      ]);
    }
    expect(issuesOf({ prompt: '  do it  ' })).toEqual([]);
  });

  it('refuses control and bidirectional characters in name and description, naming the character', () => {
    expect(issuesOf({ description: 'fix\nstatus: completed' })).toEqual([
      'description must be one line of plain text: it contains the control character U+000A (line breaks and tabs included)',
    ]);
    expect(issuesOf({ name: 'worker\u0007' })).toEqual([
      expect.stringContaining('control character U+0007'),
    ]);
    expect(issuesOf({ name: 'abc\u202egnp.exe' })).toEqual([
      'name must not contain bidirectional control characters, which reorder what a reader sees: it contains U+202E',
    ]);
    expect(issuesOf({ description: 'x\u2066y' })).toEqual([expect.stringContaining('U+2066')]);
    expect(issuesOf({ description: '   ' })).toEqual([
      'description must contain visible text, not only whitespace',
    ]);
    expect(
      issuesOf({ name: 'code-reviewer', description: 'review the diff (français, 日本語)' }),
    ).toEqual([]);
  });

  it('refuses invisible characters and line separators in a name', () => {
    expect(issuesOf({ name: 'wor\u200bker' })).toEqual([
      expect.stringContaining('name must not contain invisible characters'),
    ]);
    expect(issuesOf({ name: 'worker\u{e0041}' })).toEqual([
      expect.stringContaining('invisible characters'),
    ]);
    expect(issuesOf({ description: 'one\u2028two' })).toEqual([
      expect.stringContaining('control character U+2028'),
    ]);
  });

  it('refuses every character Unicode says to show as nothing, and spaces at either end of a name', () => {
    // A combining grapheme joiner, a variation selector, Hangul fillers, a Khmer inherent
    // vowel, a Mongolian variation selector and an invisible operator: each reads as nothing.
    for (const hidden of [
      '\u034f',
      '\ufe0f',
      '\u3164',
      '\u115f',
      '\uffa0',
      '\u17b4',
      '\u180b',
      '\u2065',
      '\u{e0100}',
    ]) {
      const code = `U+${hidden.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
      expect(issuesOf({ name: `wor${hidden}ker` }), code).toEqual([
        expect.stringMatching(
          new RegExp(`^name must not contain invisible characters.*${code.replace('+', '\\+')}`),
        ),
      ]);
    }
    for (const name of ['worker ', ' worker', 'worker\u00a0', '\u3000worker']) {
      expect(issuesOf({ name }), JSON.stringify(name)).toEqual([
        expect.stringContaining('name must not begin or end with a space'),
      ]);
    }
    expect(issuesOf({ name: 'code reviewer' })).toEqual([]);
  });

  it('refuses names shaped like agent or task ids', () => {
    for (const name of [createAgentId(), createAgentId('worker'), createTaskId()]) {
      expect(issuesOf({ name })).toEqual([
        expect.stringContaining('must not look like an agent id'),
      ]);
    }
  });

  it('never accepts a control or bidirectional character anywhere in a name (property)', () => {
    const bad = fc.constantFrom(
      '\n',
      '\r',
      '\t',
      '\u0000',
      '\u001b',
      '\u007f',
      '\u0085',
      '\u202a',
      '\u202e',
      '\u2067',
      '\u200f',
    );
    fc.assert(
      fc.property(
        fc.string({ maxLength: 20 }),
        bad,
        fc.string({ maxLength: 20 }),
        (before, char, after) => {
          expect(
            AgentToolInput.safeParse({ ...valid, name: `${before}${char}${after}` }).success,
          ).toBe(false);
        },
      ),
    );
  });
});

describe('agent names', () => {
  it('are unique in a session, and SendMessage by name reaches the agent that holds it', async () => {
    const mainTurn = (turn: number) => (request: SimRequest) =>
      isMain(request) && request.turnIndex === turn;
    let firstResult = '';
    current = await createTestSession({
      policy: rules([
        {
          match: { when: mainTurn(0) },
          reply: [
            agentCall({
              ...valid,
              prompt: 'First job',
              name: 'worker',
              subagent_type: 'general-purpose',
            }),
          ],
        },
        {
          match: { when: mainTurn(1) },
          reply: (request) => {
            firstResult = resultText(request);
            return [
              agentCall({
                ...valid,
                prompt: 'Second job',
                name: 'worker',
                subagent_type: 'general-purpose',
              }),
            ];
          },
        },
        {
          match: { when: mainTurn(2) },
          reply: [
            { type: 'tool_use', name: 'SendMessage', input: { to: 'worker', message: 'More' } },
          ],
        },
        { match: { when: isMain }, reply: 'ok' },
        { match: { agent: 'general-purpose', lastUserText: 'First job' }, reply: 'First done.' },
        {
          match: { agent: 'general-purpose', lastUserText: 'More' },
          reply: 'More done by the first.',
        },
        { match: { agent: 'general-purpose' }, reply: 'Second agent ran.' },
      ]),
    });
    const results: string[] = [];
    await current.session.send('Go', {
      waitForBackground: true,
      onEvent: (event) => {
        if (event.type === 'user') {
          for (const block of Array.isArray(event.message.content) ? event.message.content : []) {
            if (block.type === 'tool_result') results.push(JSON.stringify(block.content));
          }
        }
      },
    });
    expect(firstResult).toContain('First done.');
    expect(results[1]).toContain(
      'Agent name \\"worker\\" is already taken in this session by agent',
    );
    const sent = current.sim.journal.entries.filter((entry) =>
      JSON.stringify(entry.body).includes('Second job'),
    );
    // The refused call started nothing.
    expect(sent.filter((entry) => entry.headers['x-delegate-agent'] !== undefined)).toEqual([]);
    await current.session.flush();
    // Two runs, both of the first agent: its job, and the message sent to its name.
    const runs = current.session.tasks.list().filter((task) => task.type === 'local_agent');
    expect(runs.map((task) => task.result)).toEqual([
      expect.stringContaining('First done.'),
      expect.stringContaining('More done by the first.'),
    ]);
    expect(new Set(runs.map((task) => task.agentId)).size).toBe(1);
  });
});
