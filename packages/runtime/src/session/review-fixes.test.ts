import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { createRootToolUseContext } from '@delegate/context-isolation';
import { type AssistantMessage, type Tool, createUuid } from '@delegate/core';
import { z } from 'zod';
import { resolveAgentPermissionMode } from '../agent-tool/resolve-permission-mode.js';
import { type ToolRunUpdate, runToolUses } from '../query/run-tools.js';
import { agentCall, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;
let outside: string | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
  if (outside) await rm(outside, { recursive: true, force: true });
  outside = undefined;
});

describe('sub-agent boundaries', () => {
  it("refuses an Agent cwd outside the caller's allowed directories", async () => {
    outside = await mkdtemp(join(tmpdir(), 'delegate-outside-'));
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'x',
              prompt: 'write there',
              subagent_type: 'general-purpose',
              cwd: outside,
            }),
          ],
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [
            { type: 'tool_use', name: 'Write', input: { file_path: 'pwned.txt', content: 'x' } },
          ],
        },
        { match: { agent: 'general-purpose' }, reply: 'done' },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
      ]),
      session: { permissionMode: 'acceptEdits' },
    });
    const { text } = await current.session.send('go');
    expect(text).toMatch(/outside/i);
    expect(existsSync(join(outside, 'pwned.txt'))).toBe(false);
  });

  it("keeps a plan-mode parent's sub-agents from editing", async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({ description: 'x', prompt: 'edit it', subagent_type: 'general-purpose' }),
          ],
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [
            { type: 'tool_use', name: 'Write', input: { file_path: 'plan.txt', content: 'x' } },
          ],
        },
        {
          match: { agent: 'general-purpose' },
          reply: (request) => `child saw: ${resultText(request)}`,
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
      ]),
      session: { permissionMode: 'plan' },
    });
    const { text } = await current.session.send('go');
    expect(text).toContain('Permission denied');
    expect(existsSync(join(current.cwd, 'plan.txt'))).toBe(false);
  });

  it("picks the sub-agent permission mode: the parent's bypass and plan first, then the definition's, else acceptEdits", () => {
    expect(
      resolveAgentPermissionMode({
        parentMode: 'bypassPermissions',
        agent: { permissionMode: 'plan' },
        isFork: false,
      }),
    ).toBe('bypassPermissions');
    // A fork bubbles its questions to the parent's check, which judges them in acceptEdits.
    expect(resolveAgentPermissionMode({ parentMode: 'acceptEdits', agent: {}, isFork: true })).toBe(
      'bubble',
    );
    expect(resolveAgentPermissionMode({ parentMode: 'default', agent: {}, isFork: true })).toBe(
      'bubble',
    );
    expect(
      resolveAgentPermissionMode({
        parentMode: 'plan',
        agent: { permissionMode: 'acceptEdits' },
        isFork: false,
      }),
    ).toBe('plan');
    expect(
      resolveAgentPermissionMode({
        parentMode: 'default',
        agent: { permissionMode: 'acceptEdits' },
        isFork: false,
      }),
    ).toBe('acceptEdits');
    // No mode in the definition: acceptEdits, whatever the parent's (but the three above).
    expect(resolveAgentPermissionMode({ parentMode: 'default', agent: {}, isFork: false })).toBe(
      'acceptEdits',
    );
    expect(
      resolveAgentPermissionMode({
        parentMode: 'acceptEdits',
        agent: { permissionMode: 'default' },
        isFork: false,
      }),
    ).toBe('default');
  });
});

describe('messages and listeners', () => {
  it("delivers a SendMessage that arrives while the agent's last response is streaming", async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: '<task-notification>' },
          reply: (request) => request.lastUserText,
        },
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'slow',
              prompt: 'first task',
              subagent_type: 'general-purpose',
              name: 'slowpoke',
              run_in_background: true,
            }),
          ],
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: [
            {
              type: 'tool_use',
              name: 'SendMessage',
              input: { to: 'slowpoke', message: 'second task' },
            },
          ],
        },
        {
          match: { when: isMain, toolResult: 'SendMessage' },
          reply: (request) => resultText(request),
        },
        {
          match: { agent: 'general-purpose', lastUserText: 'second task' },
          reply: 'did the second task',
        },
        { match: { agent: 'general-purpose' }, reply: 'did the first task' },
      ]),
      // The agent's first answer is slow, and the parent's SendMessage comes while it streams.
      sim: {
        faults: [
          { kind: 'slow_first_byte', delayMs: 600, times: 1, match: { agent: 'general-purpose' } },
          {
            kind: 'slow_first_byte',
            delayMs: 150,
            times: 1,
            match: { when: isMain, toolResult: 'Agent' },
          },
        ],
      },
    });
    const first = await current.session.send('go');
    expect(first.text).toContain('it will read your message at its next turn');
    const { text } = await current.session.send('', { waitForBackground: true });
    expect(text).toContain('did the second task');
    const agentRequests = current.sim.journal.filter(
      (entry) => entry.headers['x-delegate-agent'] === 'general-purpose' && entry.status === 200,
    );
    expect(agentRequests).toHaveLength(2);
  });

  it("reports a failing permission check on its own call and keeps its siblings' results", async () => {
    const slow: Tool = {
      name: 'SlowRead',
      inputSchema: z.object({}),
      description: () => 'slow read',
      isReadOnly: () => true,
      isConcurrencySafe: () => true,
      call: async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return { content: 'slow result' };
      },
    };
    const risky: Tool = { ...slow, name: 'Risky', call: async () => ({ content: 'risky result' }) };
    const context = createRootToolUseContext({ cwd: tmpdir(), tools: [slow, risky], model: 'm' });
    const assistant: AssistantMessage = {
      type: 'assistant',
      uuid: createUuid(),
      timestamp: new Date().toISOString(),
      message: {
        id: 'msg',
        role: 'assistant',
        model: 'm',
        content: [],
        stop_reason: 'tool_use',
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    };
    const updates: ToolRunUpdate[] = [];
    for await (const update of runToolUses({
      toolUses: [
        { type: 'tool_use', id: 'a', name: 'SlowRead', input: {} },
        { type: 'tool_use', id: 'b', name: 'Risky', input: {} },
      ],
      assistantMessage: assistant,
      context,
      canUseTool: async (tool) => {
        if (tool.name === 'Risky') throw new Error('the approval window was closed');
        return { behavior: 'allow' };
      },
      maxConcurrency: 4,
    })) {
      updates.push(update);
    }
    const results = updates.flatMap((update) =>
      update.type === 'result' ? [JSON.stringify(update.result)] : [],
    );
    expect(results[0]).toContain('slow result');
    expect(results[1]).toContain('the permission check failed: the approval window was closed');
  });
});
