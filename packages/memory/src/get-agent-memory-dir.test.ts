import { homedir } from 'node:os';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { DelegateError } from '@delegate/core';
import { describe, expect, it } from 'vitest';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { getAgentMemoryFile } from './get-agent-memory-file.js';
import { getAgentMemoryRoot } from './get-agent-memory-root.js';
import { clearMemory } from './clear-memory.js';
import { listMemory } from './list-memory.js';
import { readMemory } from './read-memory.js';
import { writeMemoryIndex } from './write-memory-index.js';

const cwd = resolve('/projects/shop');
const homeDir = resolve('/home/ada');

describe('getAgentMemoryDir', () => {
  it('puts user memory under ~/.claude/agent-memory', () => {
    expect(getAgentMemoryDir('code-reviewer', 'user', { cwd, homeDir })).toBe(
      join(homeDir, '.claude', 'agent-memory', 'code-reviewer'),
    );
  });

  it('puts project memory under <cwd>/.claude/agent-memory', () => {
    expect(getAgentMemoryDir('code-reviewer', 'project', { cwd, homeDir })).toBe(
      join(cwd, '.claude', 'agent-memory', 'code-reviewer'),
    );
  });

  it('puts local memory under <cwd>/.claude/agent-memory-local', () => {
    expect(getAgentMemoryDir('code-reviewer', 'local', { cwd, homeDir })).toBe(
      join(cwd, '.claude', 'agent-memory-local', 'code-reviewer'),
    );
  });

  it('uses an explicit memory base for user memory', () => {
    const memoryBase = resolve('/srv/memory');
    expect(getAgentMemoryDir('planner', 'user', { cwd, homeDir, memoryBase })).toBe(
      join(memoryBase, 'agent-memory', 'planner'),
    );
  });

  it('uses the configured root folder name in every scope', () => {
    const options = { cwd, homeDir, rootDirName: '.delegate' };
    expect(getAgentMemoryDir('x', 'user', options)).toBe(
      join(homeDir, '.delegate', 'agent-memory', 'x'),
    );
    expect(getAgentMemoryDir('x', 'project', options)).toBe(
      join(cwd, '.delegate', 'agent-memory', 'x'),
    );
    expect(getAgentMemoryDir('x', 'local', options)).toBe(
      join(cwd, '.delegate', 'agent-memory-local', 'x'),
    );
  });

  it('defaults to the real home directory and working directory', () => {
    expect(getAgentMemoryDir('x', 'user')).toBe(join(homedir(), '.claude', 'agent-memory', 'x'));
    expect(getAgentMemoryDir('x', 'project')).toBe(
      join(process.cwd(), '.claude', 'agent-memory', 'x'),
    );
  });

  it('refuses user memory when HOME is empty or relative, instead of a folder in the working directory', () => {
    const saved = process.env['HOME'];
    try {
      for (const home of ['', 'relative/home']) {
        process.env['HOME'] = home;
        expect(() => getAgentMemoryRoot('user', { cwd: '/repo' })).toThrow(
          /User memory needs the home directory, and it is not known: HOME is/,
        );
        // Project memory does not need it, and an explicit homeDir still works.
        expect(getAgentMemoryRoot('project', { cwd: '/repo' })).toBe('/repo/.claude/agent-memory');
        expect(getAgentMemoryRoot('user', { cwd: '/repo', homeDir: '/home/me' })).toBe(
          '/home/me/.claude/agent-memory',
        );
      }
    } finally {
      process.env['HOME'] = saved;
    }
  });

  it('returns absolute paths without a trailing separator, even for a relative cwd', () => {
    for (const scope of ['user', 'project', 'local'] as const) {
      const directory = getAgentMemoryDir('x', scope, {
        cwd: 'relative/dir',
        homeDir: 'relative-home',
      });
      expect(isAbsolute(directory)).toBe(true);
      expect(directory.endsWith(sep)).toBe(false);
    }
  });

  it('takes a relative home directory or memory base from cwd', () => {
    expect(getAgentMemoryDir('x', 'user', { cwd, homeDir: 'home' })).toBe(
      join(cwd, 'home', '.claude', 'agent-memory', 'x'),
    );
    expect(getAgentMemoryDir('x', 'user', { cwd, memoryBase: 'base' })).toBe(
      join(cwd, 'base', 'agent-memory', 'x'),
    );
  });

  it.each(['../../etc', '/etc/passwd', '..', 'C:\\Windows', 'a/../../b'])(
    'keeps the traversal attempt %j inside the scope root',
    (agentType) => {
      for (const scope of ['user', 'project', 'local'] as const) {
        const root = getAgentMemoryRoot(scope, { cwd, homeDir });
        const directory = getAgentMemoryDir(agentType, scope, { cwd, homeDir });
        expect(directory.startsWith(root + sep)).toBe(true);
        expect(directory.slice(root.length + 1)).not.toContain(sep);
      }
    },
  );

  it.each(['', '.', '..', 'a/b', 'a\\b'])('rejects the root folder name %j', (rootDirName) => {
    expect(() => getAgentMemoryDir('x', 'project', { cwd, rootDirName })).toThrow(DelegateError);
  });

  it('names MEMORY.md inside the folder', () => {
    expect(getAgentMemoryFile('x', 'local', { cwd })).toBe(
      join(cwd, '.claude', 'agent-memory-local', 'x', 'MEMORY.md'),
    );
  });
});

describe('memory path options', () => {
  const calls: Record<string, (options: object) => Promise<unknown>> = {
    listMemory: (options: object) => listMemory(options),
    readMemory: (options: object) => readMemory('x', 'user', options),
    clearMemory: (options: object) => clearMemory('x', 'local', options),
    writeMemoryIndex: (options: object) => writeMemoryIndex('x', 'project', 'notes', options),
  };

  it.each(Object.entries(calls))(
    '%s refuses a cwd, homeDir or memoryBase with a NUL byte, naming the option',
    async (_name, call) => {
      for (const option of ['cwd', 'homeDir', 'memoryBase']) {
        const error = await Promise.resolve()
          .then(() => call({ cwd, homeDir, [option]: `${cwd}\0evil` }))
          .then(
            () => undefined,
            (thrown: unknown) => thrown,
          );
        expect(error).toBeInstanceOf(DelegateError);
        expect(error).toMatchObject({ code: 'INVALID_ARGUMENT' });
        expect((error as Error).message).toContain(`options.${option}`);
      }
    },
  );

  it('refuses a cwd that is not a string', () => {
    expect(() => getAgentMemoryRoot('project', { cwd: 42 as unknown as string })).toThrow(
      /options\.cwd .*got a number/,
    );
  });
});
