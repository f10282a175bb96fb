import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Policy, rules } from '@delegate/api-sim';
import type { AgentMemoryScope } from '@delegate/core';
import { getAgentMemoryDir } from '@delegate/memory';
import { DelegateSession } from '../session/session.js';
import { createApiClient } from '../session/model-config.js';
import { agentCall, customAgent, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

function keeper(scope: AgentMemoryScope, extra = '') {
  // `permissionMode: default` would ask before any write; memory writes must not need it.
  return customAgent(
    `---\nname: notes-keeper\ndescription: keeps notes\ntools: Read, Write\npermissionMode: default\nmemory: ${scope}\n${extra}---\nYou keep notes.`,
  );
}

/**
 * The keeper reads MEMORY.md, writes `write(previous)` to it, reads it again and reports
 * what it read, with what its system prompt showed of its memory.
 */
function keeperPolicy(file: () => string, write: (previous: string) => string): Policy {
  const keeperAgent = { agent: 'notes-keeper' };
  return rules([
    {
      match: { when: isMain, toolResult: false },
      reply: [
        agentCall({
          description: 'notes',
          prompt: 'update your notes',
          subagent_type: 'notes-keeper',
        }),
      ],
    },
    { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
    {
      match: { ...keeperAgent, toolResult: false },
      reply: () => [{ type: 'tool_use', name: 'Read', input: { file_path: file() } }],
    },
    {
      match: { ...keeperAgent, toolResult: 'Read', when: (request) => request.turnIndex === 1 },
      reply: (request) => [
        {
          type: 'tool_use',
          name: 'Write',
          input: { file_path: file(), content: write(request.toolResults[0]?.content ?? '') },
        },
      ],
    },
    {
      match: { ...keeperAgent, toolResult: 'Write' },
      reply: (request) =>
        request.toolResults[0]?.isError
          ? `write failed: ${resultText(request)}`
          : [{ type: 'tool_use', name: 'Read', input: { file_path: file() } }],
    },
    {
      match: { ...keeperAgent, toolResult: 'Read' },
      reply: (request) =>
        `prompt showed: ${request.system.includes('- build: pnpm') ? 'build note' : 'nothing'}; file now: ${resultText(request)}`,
    },
  ]);
}

const firstNote = () => '- build: pnpm\n';
const secondNote = (previous: string) =>
  `${previous.includes('build: pnpm') ? '- build: pnpm\n' : ''}- tests: vitest\n`;

describe('agent memory', () => {
  for (const scope of ['user', 'project', 'local'] as const) {
    it(`reads, updates and re-reads ${scope} memory across two sessions, without approval`, async () => {
      let memoryFile = '';
      let write: (previous: string) => string = firstNote;
      current = await createTestSession({
        policy: keeperPolicy(
          () => memoryFile,
          (previous) => write(previous),
        ),
        agents: [keeper(scope)],
      });
      const { cwd, homeDir, sim } = current;
      memoryFile = join(getAgentMemoryDir('notes-keeper', scope, { cwd, homeDir }), 'MEMORY.md');

      // Session 1: no memory yet; the keeper writes its first note.
      const first = await current.session.send('go');
      expect(first.text).toContain('prompt showed: nothing');
      expect(first.text).toMatch(/file now:[^]*- build: pnpm/);
      expect(await readFile(memoryFile, 'utf8')).toBe('- build: pnpm\n');

      // Session 2, on the same project and home: the note is in the prompt; the keeper adds one.
      write = secondNote;
      const second = await DelegateSession.create({
        cwd,
        homeDir,
        client: createApiClient({ apiKey: 'k', baseURL: sim.url }),
        transcriptDir: false,
        agentDefinitions: { activeAgents: [keeper(scope)], allAgents: [keeper(scope)] },
      });
      const again = await second.send('go again');
      await second.flush();
      expect(again.text).toContain('prompt showed: build note');
      expect(again.text).toMatch(/file now:[^]*- build: pnpm[^]*- tests: vitest/);
      expect(await readFile(memoryFile, 'utf8')).toBe('- build: pnpm\n- tests: vitest\n');
    });
  }
});

/** One keeper turn that writes each of `paths`, then reports every result. */
function writerPolicy(paths: () => string[]): Policy {
  return rules([
    {
      match: { when: isMain, toolResult: false },
      reply: [agentCall({ description: 'notes', prompt: 'write', subagent_type: 'notes-keeper' })],
    },
    { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
    {
      match: { agent: 'notes-keeper', toolResult: false },
      reply: () =>
        paths().map((path) => ({
          type: 'tool_use' as const,
          name: 'Write',
          input: { file_path: path, content: 'note\n' },
        })),
    },
    {
      match: { agent: 'notes-keeper', toolResult: 'Write' },
      reply: (request) =>
        request.toolResults
          .map((result) => `${result.isError ? 'REFUSED' : 'OK'}: ${result.content}`)
          .join('\n'),
    },
  ]);
}

describe('agent memory boundaries', () => {
  it('opens only its own memory folder beyond its cwd, even when every call is approved', async () => {
    let targets: string[] = [];
    current = await createTestSession({
      policy: writerPolicy(() => targets),
      agents: [keeper('user')],
      session: { permissionMode: 'bypassPermissions' },
    });
    const { homeDir, cwd } = current;
    const own = getAgentMemoryDir('notes-keeper', 'user', { cwd, homeDir });
    const other = getAgentMemoryDir('someone-else', 'user', { cwd, homeDir });
    targets = [join(own, 'MEMORY.md'), join(other, 'MEMORY.md'), join(homeDir, 'outside.txt')];
    const { text } = await current.session.send('go');
    const lines = text.split('\n').filter((line) => /^(OK|REFUSED):/.test(line));
    expect(lines[0]).toMatch(/^OK:/);
    expect(lines[1]).toMatch(/^REFUSED:.*outside the allowed directories/);
    expect(lines[2]).toMatch(/^REFUSED:.*outside the allowed directories/);
    expect(await readFile(join(own, 'MEMORY.md'), 'utf8')).toBe('note\n');
    expect(existsSync(join(other, 'MEMORY.md'))).toBe(false);
    expect(existsSync(join(homeDir, 'outside.txt'))).toBe(false);
  });

  it('writes memory without approval under a dontAsk parent, where other writes are denied', async () => {
    let targets: string[] = [];
    current = await createTestSession({
      policy: writerPolicy(() => targets),
      agents: [keeper('local')],
      session: { permissionMode: 'dontAsk' },
    });
    const { cwd } = current;
    const memoryFile = join(getAgentMemoryDir('notes-keeper', 'local', { cwd }), 'MEMORY.md');
    targets = [memoryFile, join(cwd, 'elsewhere.txt')];
    const { text } = await current.session.send('go');
    const lines = text.split('\n').filter((line) => /^(OK|REFUSED):/.test(line));
    expect(lines[0]).toMatch(/^OK:/);
    expect(lines[1]).toMatch(/^REFUSED:.*Permission denied/);
    expect(await readFile(memoryFile, 'utf8')).toBe('note\n');
    expect(existsSync(join(cwd, 'elsewhere.txt'))).toBe(false);
  });

  it('still refuses memory writes under a plan-mode parent', async () => {
    let targets: string[] = [];
    current = await createTestSession({
      policy: writerPolicy(() => targets),
      agents: [keeper('project')],
      session: { permissionMode: 'plan' },
    });
    const memoryFile = join(
      getAgentMemoryDir('notes-keeper', 'project', { cwd: current.cwd }),
      'MEMORY.md',
    );
    targets = [memoryFile];
    const { text } = await current.session.send('go');
    expect(text).toMatch(/REFUSED:.*plan mode/);
    expect(existsSync(memoryFile)).toBe(false);
  });

  it("keeps a worktree agent's project memory in the session's project, not in its worktree", async () => {
    let targets: string[] = [];
    current = await createTestSession({
      policy: writerPolicy(() => targets),
      agents: [keeper('project', 'isolation: worktree\n')],
    });
    const { cwd } = current;
    const git = (...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
    git('init', '-q', '-b', 'main');
    await writeFile(join(cwd, 'README.md'), '# repo\n');
    git('add', '.');
    git('-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-qm', 'init');
    const memoryFile = join(getAgentMemoryDir('notes-keeper', 'project', { cwd }), 'MEMORY.md');
    targets = [memoryFile];
    const { text } = await current.session.send('go');
    expect(text).toMatch(/^OK:/m);
    expect(await readFile(memoryFile, 'utf8')).toBe('note\n');
    // The worktree had no changes of its own, so it was removed: nothing was written there.
    expect(text).not.toContain('worktreePath');
    expect(git('worktree', 'list').split('\n')).toHaveLength(1);
  });
});
