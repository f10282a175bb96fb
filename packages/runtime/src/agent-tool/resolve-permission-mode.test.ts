import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { agentCall, customAgent, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import { resolveAgentPermissionMode } from './resolve-permission-mode.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe('the permission mode of a sub-agent', () => {
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

  it('keeps a sub-agent that would ask in dontAsk under a dontAsk parent', () => {
    // No mode in the definition means acceptEdits, which never asks under a dontAsk parent
    // (its questions become denials; see the next test).
    expect(resolveAgentPermissionMode({ parentMode: 'dontAsk', agent: {}, isFork: false })).toBe(
      'acceptEdits',
    );
    expect(resolveAgentPermissionMode({ parentMode: 'dontAsk', agent: {}, isFork: true })).toBe(
      'dontAsk',
    );
    expect(
      resolveAgentPermissionMode({
        parentMode: 'dontAsk',
        agent: { permissionMode: 'default' },
        isFork: false,
      }),
    ).toBe('dontAsk');
    expect(
      resolveAgentPermissionMode({
        parentMode: 'dontAsk',
        agent: { permissionMode: 'bubble' },
        isFork: false,
      }),
    ).toBe('dontAsk');
    expect(
      resolveAgentPermissionMode({
        parentMode: 'dontAsk',
        agent: { permissionMode: 'plan' },
        isFork: false,
      }),
    ).toBe('plan');
    expect(
      resolveAgentPermissionMode({
        parentMode: 'dontAsk',
        agent: { permissionMode: 'acceptEdits' },
        isFork: false,
      }),
    ).toBe('acceptEdits');
  });

  it('never asks the person for a sub-agent of a dontAsk session', async () => {
    const asked: string[] = [];
    current = await createTestSession({
      agents: [
        customAgent(
          '---\nname: writer\ndescription: Writes files\npermissionMode: default\n---\nYou write files.',
        ),
      ],
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'write', prompt: 'write it', subagent_type: 'writer' })],
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
        {
          match: { agent: 'writer', toolResult: false },
          reply: [
            { type: 'tool_use', name: 'Write', input: { file_path: 'out.txt', content: 'x' } },
          ],
        },
        {
          match: { agent: 'writer', toolResult: 'Write' },
          reply: (request) => resultText(request),
        },
      ]),
      session: {
        permissionMode: 'dontAsk',
        ask: async (request) => {
          asked.push(request.tool.name);
          return { behavior: 'allow' };
        },
      },
    });
    const { text } = await current.session.send('go');
    expect(asked).toEqual([]);
    expect(text).toMatch(/needs approval and no one can be asked here \(permission mode dontAsk\)/);
    expect(existsSync(join(current.cwd, 'out.txt'))).toBe(false);
    await expect(readFile(join(current.cwd, 'out.txt'), 'utf8')).rejects.toThrow();
  });
});
