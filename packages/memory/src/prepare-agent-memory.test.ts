import { existsSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type AgentMemoryScope, DelegateError } from '@delegate/core';
import { describe, expect, it, vi } from 'vitest';
import { useTempDirs } from './__fixtures__/temp-dirs.js';
import { describeMemoryScope } from './build-agent-memory-prompt.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { loadAgentMemoryPrompt } from './load-agent-memory-prompt.js';
import { type AgentMemoryPromptOptions, prepareAgentMemory } from './prepare-agent-memory.js';

const makeTempDir = useTempDirs();

async function setup(): Promise<{ cwd: string; homeDir: string }> {
  const base = await makeTempDir();
  const cwd = join(base, 'project');
  const homeDir = join(base, 'home');
  await mkdir(cwd);
  await mkdir(homeDir);
  return { cwd, homeDir };
}

async function writeIndex(
  paths: { cwd: string; homeDir: string },
  scope: AgentMemoryScope,
  content: string | Buffer,
): Promise<void> {
  const directory = getAgentMemoryDir('code-reviewer', scope, paths);
  await mkdir(directory, { recursive: true });
  await writeFile(join(directory, 'MEMORY.md'), content);
}

/** Builds the prompt and waits for the background mkdir, so temp dirs can be removed cleanly. */
async function promptFor(
  scope: AgentMemoryScope,
  options: AgentMemoryPromptOptions,
): Promise<string> {
  const prepared = prepareAgentMemory('code-reviewer', scope, options);
  await prepared.ready;
  return prepared.prompt;
}

describe('loadAgentMemoryPrompt', () => {
  it('returns the prompt synchronously and creates the folder without being awaited', async () => {
    const paths = await setup();
    const prompt = loadAgentMemoryPrompt('code-reviewer', 'project', paths);
    const directory = getAgentMemoryDir('code-reviewer', 'project', paths);
    expect(typeof prompt).toBe('string');
    expect(prompt).toContain(directory);
    await vi.waitFor(() => expect(existsSync(directory)).toBe(true));
  });

  it.each([
    ['user', /every project/, /general lessons/],
    ['project', /shared with the team through version control/, /specific to this project/],
    ['local', /kept out of version control/, /this project on this machine/],
  ] as const)('tells a %s-scope agent what its scope means', async (scope, first, second) => {
    const paths = await setup();
    const prompt = await promptFor(scope, paths);
    expect(prompt).toMatch(first);
    expect(prompt).toMatch(second);
    for (const other of ['user', 'project', 'local'] as const) {
      expect(prompt.includes(describeMemoryScope(other))).toBe(other === scope);
    }
  });

  it('has a heading, the folder, index guidance and the current MEMORY.md', async () => {
    const paths = await setup();
    await writeIndex(paths, 'project', '- [testing.md](testing.md): run tests with pnpm test\n');
    const prompt = await promptFor('project', paths);
    expect(prompt.startsWith('# ')).toBe(true);
    expect(prompt).toContain(join(paths.cwd, '.claude', 'agent-memory', 'code-reviewer'));
    expect(prompt).toMatch(/MEMORY\.md .*index/);
    expect(prompt).toMatch(/topic file/);
    expect(prompt).toContain('- [testing.md](testing.md): run tests with pnpm test');
  });

  it('says when MEMORY.md does not exist yet or is empty', async () => {
    const paths = await setup();
    expect(await promptFor('local', paths)).toMatch(/does not exist yet/);
    await writeIndex(paths, 'local', '');
    expect(await promptFor('local', paths)).toMatch(/MEMORY\.md is empty/);
  });

  it('cuts MEMORY.md past the line limit and says how much was left out', async () => {
    const paths = await setup();
    const lines = Array.from({ length: 300 }, (_, index) => `- note ${index + 1}`);
    await writeIndex(paths, 'project', `${lines.join('\n')}\n`);
    const prompt = await promptFor('project', paths);
    expect(prompt).toContain('- note 200\n');
    expect(prompt).not.toContain('- note 201');
    const omitted = Buffer.byteLength(
      lines
        .slice(200)
        .map((line) => `${line}\n`)
        .join(''),
    );
    expect(prompt).toMatch(/cut/);
    expect(prompt).toContain('300 lines');
    expect(prompt).toContain(`${omitted} of`);
  });

  it('honours a custom line limit', async () => {
    const paths = await setup();
    await writeIndex(paths, 'project', 'one\ntwo\nthree\nfour\n');
    const prompt = await promptFor('project', { ...paths, maxLines: 2 });
    expect(prompt).toContain('one\ntwo');
    expect(prompt).not.toContain('three');
    expect(prompt).toContain('4 lines and only the first 2');
  });

  it('does not cut a file of exactly the line limit', async () => {
    const paths = await setup();
    await writeIndex(paths, 'project', 'one\ntwo\n');
    const prompt = await promptFor('project', { ...paths, maxLines: 2 });
    expect(prompt).toContain('one\ntwo');
    expect(prompt).not.toMatch(/was cut/);
  });

  it('cuts MEMORY.md past the byte limit at a line end and says how much was cut', async () => {
    const paths = await setup();
    const line = `${'x'.repeat(99)}\n`;
    await writeIndex(paths, 'user', line.repeat(100)); // 10,000 bytes, 100 lines
    const prompt = await promptFor('user', { ...paths, maxBytes: 1050 });
    expect(prompt.split(line.trimEnd()).length - 1).toBe(10);
    expect(prompt).toContain('first 1000 bytes');
    expect(prompt).toContain('9000 of 10000 bytes were left out');
  });

  it('cuts by bytes with the default 25 KiB limit', async () => {
    const paths = await setup();
    const lines = Array.from({ length: 150 }, (_, index) => `${index}`.padEnd(299, '-'));
    await writeIndex(paths, 'project', `${lines.join('\n')}\n`); // 45,000 bytes in 150 lines
    const prompt = await promptFor('project', paths);
    expect(prompt).toContain(lines[84]);
    expect(prompt).not.toContain(lines[85]);
    expect(prompt).toContain('first 25500 bytes');
    expect(prompt).toContain('19500 of 45000 bytes');
  });

  it('never splits a UTF-8 character when a single huge line is cut', async () => {
    const paths = await setup();
    await writeIndex(paths, 'project', '€'.repeat(100)); // 300 bytes, no newline
    const prompt = await promptFor('project', { ...paths, maxBytes: 100 });
    expect(prompt).not.toContain('\ufffd');
    expect(prompt).toContain('€'.repeat(33));
    expect(prompt).not.toContain('€'.repeat(34));
    expect(prompt).toContain('first 99 bytes');
  });

  it('notes an unreadable MEMORY.md instead of throwing, and reports it', async () => {
    const paths = await setup();
    const directory = getAgentMemoryDir('code-reviewer', 'project', paths);
    await mkdir(join(directory, 'MEMORY.md'), { recursive: true });
    const errors: DelegateError[] = [];
    const prompt = await promptFor('project', {
      ...paths,
      onError: (error) => errors.push(error),
    });
    expect(prompt).toMatch(/could not be read/);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toContain(join(directory, 'MEMORY.md'));
  });
});

describe('prepareAgentMemory', () => {
  it('creates the memory folder in the background', async () => {
    const paths = await setup();
    const prepared = prepareAgentMemory('code-reviewer', 'local', paths);
    await prepared.ready;
    expect(statSync(prepared.directory).isDirectory()).toBe(true);
    expect(prepared.directory).toBe(
      join(paths.cwd, '.claude', 'agent-memory-local', 'code-reviewer'),
    );
    expect(prepared.indexFile).toBe(join(prepared.directory, 'MEMORY.md'));
  });

  it('reports a failing mkdir through onError and ready, without throwing', async () => {
    const base = await makeTempDir();
    const file = join(base, 'not-a-folder');
    await writeFile(file, 'plain file');
    const errors: DelegateError[] = [];
    const prepared = prepareAgentMemory('code-reviewer', 'project', {
      cwd: join(file, 'project'),
      onError: (error) => errors.push(error),
    });
    expect(prepared.prompt).toMatch(/does not exist yet/);
    await expect(prepared.ready).rejects.toBeInstanceOf(DelegateError);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toContain(prepared.directory);
    expect(errors[0]?.details?.systemCode).toBe('ENOTDIR');
    expect(existsSync(prepared.directory)).toBe(false);
  });

  it('does not leave an unhandled rejection when nobody awaits ready', async () => {
    const base = await makeTempDir();
    const file = join(base, 'not-a-folder');
    await writeFile(file, 'plain file');
    const unhandled: unknown[] = [];
    const listener = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', listener);
    try {
      const reported = new Promise<DelegateError>((settle) => {
        loadAgentMemoryPrompt('code-reviewer', 'project', { cwd: file, onError: settle });
      });
      expect((await reported).code).toBeDefined();
      await new Promise((settle) => setTimeout(settle, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });

  it('keeps going when the onError callback itself throws', async () => {
    const base = await makeTempDir();
    const file = join(base, 'not-a-folder');
    await writeFile(file, 'plain file');
    const prepared = prepareAgentMemory('code-reviewer', 'project', {
      cwd: file,
      onError: () => {
        throw new Error('reporter broke');
      },
    });
    await expect(prepared.ready).rejects.toThrow(/create the memory folder/);
  });

  it('throws synchronously only for bad arguments', () => {
    expect(() => prepareAgentMemory('', 'user')).toThrow(DelegateError);
    expect(() => prepareAgentMemory('a', 'user', { maxLines: 0 })).toThrow(/maxLines/);
    expect(() => prepareAgentMemory('a', 'user', { maxBytes: Number.NaN })).toThrow(/maxBytes/);
  });
});
