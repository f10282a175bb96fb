import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { getBuiltInAgents } from '@delegate/agent-defs';
import {
  type AssistantMessage,
  DelegateError,
  type Message,
  type PermissionDecision,
  type ToolResultBlock,
  createUserMessage,
} from '@delegate/core';
import { createCanUseTool } from '../permissions.js';
import { createApiClient } from '../session/model-config.js';
import { DelegateSession } from '../session/session.js';
import { readTranscript } from '../transcripts/read-transcript.js';
import { isMain, lastUserBlocks, readThenWriteCalls } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession, waitUntil } from '../__fixtures__/test-session.js';
import {
  IN_FLIGHT_AGENT_CALL_TEXT,
  IN_FLIGHT_CALL_TEXT,
  settleInFlightToolCalls,
} from './settle-in-flight-calls.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

function assistantWith(calls: Array<{ name: string; input: unknown }>): AssistantMessage {
  return {
    type: 'assistant',
    uuid: 'assistant-1',
    timestamp: new Date().toISOString(),
    message: {
      id: 'msg_1',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: calls.map((call, index) => ({
        type: 'tool_use' as const,
        id: `toolu_${index}`,
        name: call.name,
        input: call.input,
      })),
      stop_reason: 'tool_use',
      usage: { input_tokens: 1, output_tokens: 1 },
    },
  };
}

function textOf(result: ToolResultBlock | undefined): string {
  return JSON.stringify(result?.content);
}

describe('settleInFlightToolCalls', () => {
  it('gives a call with a known result that text (redacted), neither running nor interrupting it', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'ok' }) });
    await writeFile(join(current.cwd, 'seen.txt'), 'x');
    const messages: Message[] = [
      createUserMessage({ content: 'look around' }),
      assistantWith([
        { name: 'Agent', input: { description: 'd', prompt: 'p', subagent_type: 'Explore' } },
        { name: 'Glob', input: { pattern: '*.txt' } },
        { name: 'Agent', input: { description: 'e', prompt: 'q', subagent_type: 'Explore' } },
      ]),
    ];
    const settled = await settleInFlightToolCalls({
      messages,
      mode: 'rerun-read-only',
      context: current.session.context,
      canUseTool: createCanUseTool(),
      results: { toolu_0: 'the report, key sk-secret-value' },
      redact: (text) => text.replace('sk-secret-value', '[REDACTED]'),
    });
    expect(settled?.recovered).toEqual(['Agent']);
    expect(settled?.rerun).toEqual(['Glob']);
    expect(settled?.interrupted).toEqual(['Agent']);
    const results = settled!.messages[0].message.content as ToolResultBlock[];
    expect(results.map((result) => result.tool_use_id)).toEqual(['toolu_0', 'toolu_1', 'toolu_2']);
    expect(textOf(results[0])).toContain('the report, key [REDACTED]');
    expect(results[0]?.is_error).toBeUndefined();
    expect(textOf(results[2])).toContain(JSON.stringify(IN_FLIGHT_AGENT_CALL_TEXT).slice(1, -1));
  });

  it('runs only valid read-only calls again: never an Agent call, never a call whose input does not parse', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'ok' }) });
    await writeFile(join(current.cwd, 'seen.txt'), 'x');
    const messages: Message[] = [
      createUserMessage({ content: 'look around' }),
      assistantWith([
        { name: 'Agent', input: { description: 'd', prompt: 'p', subagent_type: 'Explore' } },
        { name: 'Read', input: { path_of_file: 'seen.txt' } },
        { name: 'Glob', input: { pattern: '*.txt' } },
      ]),
    ];
    const settled = await settleInFlightToolCalls({
      messages,
      mode: 'rerun-read-only',
      context: current.session.context,
      canUseTool: createCanUseTool(),
    });
    expect(settled?.rerun).toEqual(['Glob']);
    expect(settled?.interrupted).toEqual(['Agent', 'Read']);
    const [message] = settled!.messages;
    const results = message.message.content as ToolResultBlock[];
    // One result per call, in call order.
    expect(results.map((result) => result.tool_use_id)).toEqual(['toolu_0', 'toolu_1', 'toolu_2']);
    expect(textOf(results[0])).toContain(JSON.stringify(IN_FLIGHT_AGENT_CALL_TEXT).slice(1, -1));
    expect(textOf(results[1])).toContain(JSON.stringify(IN_FLIGHT_CALL_TEXT).slice(1, -1));
    expect(textOf(results[2])).toContain('seen.txt');

    const interruptOnly = await settleInFlightToolCalls({
      messages,
      mode: 'interrupt',
      context: current.session.context,
      canUseTool: createCanUseTool(),
    });
    expect(interruptOnly?.rerun).toEqual([]);
    expect(interruptOnly?.interrupted).toEqual(['Agent', 'Read', 'Glob']);
  });

  it("runs a call again through the agent's hooks: a PreToolUse block is its result", async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'ok' }) });
    const settled = await settleInFlightToolCalls({
      messages: [assistantWith([{ name: 'Glob', input: { pattern: '*' } }])],
      mode: 'rerun-read-only',
      context: current.session.context,
      canUseTool: createCanUseTool(),
      hooks: { beforeToolCall: async (call) => `blocked ${call.toolName} by the hook` },
    });
    expect(settled?.rerun).toEqual(['Glob']);
    expect(textOf(settled!.messages[0].message.content[0] as ToolResultBlock)).toContain(
      'blocked Glob by the hook',
    );
  });

  it('settles nothing when the conversation does not end with tool calls', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'ok' }) });
    const settled = await settleInFlightToolCalls({
      messages: [createUserMessage({ content: 'hello' })],
      mode: 'rerun-read-only',
      context: current.session.context,
      canUseTool: createCanUseTool(),
    });
    expect(settled).toBeUndefined();
    await expect(current.session.settleInFlightToolCalls()).resolves.toEqual({
      rerun: [],
      interrupted: [],
      recovered: [],
    });
    // Results must be texts by call id.
    await expect(
      current.session.settleInFlightToolCalls({ results: { toolu_1: 42 } as never }),
    ).rejects.toThrow(/settleInFlightToolCalls: results must map tool call ids to result texts/);
  });
});

describe('session.settleInFlightToolCalls', () => {
  /**
   * A main agent cut while its Read and Write were in flight (the Write waits for a
   * permission answer), `notes.txt` changed meanwhile, and the session picked up from its
   * transcript by a new process (as the server does).
   */
  async function cutMidTurn(): Promise<{
    cwd: string;
    again: DelegateSession;
    transcriptPath: string;
    finish: () => Promise<void>;
  }> {
    let asked = false;
    let answer: ((decision: PermissionDecision) => void) | undefined;
    let cwd = '';
    current = await createTestSession({
      policy: rules([
        { match: { when: isMain, toolResult: 'Read' }, reply: 'Read it.' },
        {
          match: { when: isMain, toolResult: false },
          reply: () => readThenWriteCalls(cwd),
        },
      ]),
      session: {
        sessionId: 'main-session',
        askRules: ['Write'],
        ask: () => {
          asked = true;
          return new Promise((resolve) => (answer = resolve));
        },
      },
    });
    cwd = current.cwd;
    await writeFile(join(cwd, 'notes.txt'), 'first version');
    const turn = current.session.send('copy the notes');
    expect(await waitUntil(() => asked)).toBe(true);
    await current.session.flush();
    await writeFile(join(cwd, 'notes.txt'), 'second version');

    const again = await DelegateSession.create({
      cwd,
      client: createApiClient({ apiKey: 'k', baseURL: current.sim.url }),
      agentDefinitions: { activeAgents: getBuiltInAgents(), allAgents: getBuiltInAgents() },
      transcriptDir: current.transcriptDir,
      sessionId: 'main-session',
      resume: true,
    });
    return {
      cwd,
      again,
      transcriptPath: again.transcript!.sessionPath(),
      finish: async () => {
        again.abort();
        answer?.({ behavior: 'deny', message: 'test over' });
        await turn;
      },
    };
  }

  /** The tool results of the main agent's last request. */
  function lastMainResults(): ToolResultBlock[] {
    const request = current!.sim.journal
      .filter((entry) => entry.headers['x-delegate-agent'] === undefined)
      .at(-1)!;
    return lastUserBlocks(request).filter(
      (block): block is ToolResultBlock => block.type === 'tool_result',
    );
  }

  it("runs the main agent's in-flight Read again after a restart with rerun-read-only and reports its Write as interrupted", async () => {
    const { cwd, again, transcriptPath, finish } = await cutMidTurn();
    try {
      const settled = await again.settleInFlightToolCalls({ mode: 'rerun-read-only' });
      expect(settled).toEqual({ rerun: ['Read'], interrupted: ['Write'], recovered: [] });
      const { text } = await again.send('');
      await again.flush();
      expect(text).toBe('Read it.');
      const results = lastMainResults();
      expect(JSON.stringify(results[0]?.content)).toContain('second version');
      expect(JSON.stringify(results[1]?.content)).toContain('Interrupted: the run stopped');
      // The results are in the transcript, so a later restart does not settle them again.
      const entries = await readTranscript(transcriptPath);
      expect(JSON.stringify(entries)).toContain('second version');
    } finally {
      await finish();
    }
    await expect(readFile(join(cwd, 'copy.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('by default reports every in-flight call as interrupted and runs none again', async () => {
    const { cwd, again, finish } = await cutMidTurn();
    try {
      expect(await again.settleInFlightToolCalls()).toEqual({
        rerun: [],
        interrupted: ['Read', 'Write'],
        recovered: [],
      });
      await again.send('');
      await again.flush();
      const results = lastMainResults();
      expect(results).toHaveLength(2);
      for (const result of results) {
        expect(JSON.stringify(result.content)).toContain(IN_FLIGHT_CALL_TEXT.slice(0, 40));
        expect(JSON.stringify(result.content)).not.toContain('version');
      }
    } finally {
      await finish();
    }
    await expect(readFile(join(cwd, 'copy.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('refuses options that are not an object and a mode that is neither, naming the option', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'ok' }) });
    const { session } = current;
    const refusal = (options: unknown) =>
      session
        .settleInFlightToolCalls(options as Parameters<typeof session.settleInFlightToolCalls>[0])
        .catch((error: unknown) => error);
    for (const [options, message] of [
      [null, /settleInFlightToolCalls: options must be an object .* got null/],
      ['interrupt', /settleInFlightToolCalls: options must be an object .* got "interrupt"/],
      [
        { mode: 'rerun' },
        /settleInFlightToolCalls: mode must be 'interrupt' or 'rerun-read-only', got "rerun"/,
      ],
      [{ mode: null }, /settleInFlightToolCalls: mode must be .* got null/],
    ] as const) {
      const error = await refusal(options);
      expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
      expect((error as Error).message).toMatch(message);
    }
  });
});
