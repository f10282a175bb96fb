import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/temp-dirs.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { getAgentMemoryRoot } from './get-agent-memory-root.js';
import { listMemory } from './list-memory.js';
import { writeMemoryIndex } from './write-memory-index.js';

const makeTempDir = useTempDirs();

async function setup(): Promise<{ cwd: string; homeDir: string }> {
  const base = await makeTempDir();
  return { cwd: join(base, 'project'), homeDir: join(base, 'home') };
}

describe('listMemory', () => {
  it('returns nothing when no memory exists', async () => {
    expect(await listMemory(await setup())).toEqual([]);
  });

  it('lists every agent folder across the three scopes with files and sizes', async () => {
    const paths = await setup();
    await writeMemoryIndex('code-reviewer', 'user', 'user notes\n', paths);
    await writeMemoryIndex('code-reviewer', 'project', 'team notes\n', paths);
    await writeMemoryIndex('planner', 'local', 'mine\n', paths);
    const topics = join(getAgentMemoryDir('planner', 'local', paths), 'topics');
    await mkdir(topics);
    await writeFile(join(topics, 'setup.md'), 'twelve bytes');

    const entries = await listMemory(paths);
    expect(
      entries.map(({ agentType, scope, directory, files, totalBytes }) => ({
        agentType,
        scope,
        directory,
        files,
        totalBytes,
      })),
    ).toEqual([
      {
        agentType: 'code-reviewer',
        scope: 'user',
        directory: getAgentMemoryDir('code-reviewer', 'user', paths),
        files: [{ path: 'MEMORY.md', size: 11 }],
        totalBytes: 11,
      },
      {
        agentType: 'code-reviewer',
        scope: 'project',
        directory: getAgentMemoryDir('code-reviewer', 'project', paths),
        files: [{ path: 'MEMORY.md', size: 11 }],
        totalBytes: 11,
      },
      {
        agentType: 'planner',
        scope: 'local',
        directory: getAgentMemoryDir('planner', 'local', paths),
        files: [
          { path: 'MEMORY.md', size: 5 },
          { path: 'topics/setup.md', size: 12 },
        ],
        totalBytes: 17,
      },
    ]);
  });

  it('decodes encoded folder names back to their agent types', async () => {
    const paths = await setup();
    const agentTypes = ['a/b', 'Foo', 'foo', 'plugin:reviewer', 'con', 'ünïcödé'];
    for (const agentType of agentTypes) await writeMemoryIndex(agentType, 'project', 'x', paths);
    const listed = (await listMemory(paths)).map((entry) => entry.agentType);
    expect([...listed].sort()).toEqual([...agentTypes].sort());
  });

  it('recognises shortened folder names only through knownAgentTypes', async () => {
    const paths = await setup();
    const longName = `agent-${'x'.repeat(200)}`;
    await writeMemoryIndex(longName, 'local', 'x', paths);
    const [unknown] = await listMemory(paths);
    expect(unknown?.agentType).toBeUndefined();
    expect(unknown?.folderName.length).toBeLessThanOrEqual(100);
    const [known] = await listMemory({ ...paths, knownAgentTypes: [longName, 'other'] });
    expect(known?.agentType).toBe(longName);
  });

  it('reports hand-made folders without an agent type and skips stray files', async () => {
    const paths = await setup();
    const root = getAgentMemoryRoot('project', paths);
    await mkdir(join(root, 'Made By Hand'), { recursive: true });
    await writeFile(join(root, 'stray.txt'), 'not a folder');
    const entries = await listMemory(paths);
    expect(entries.map((entry) => [entry.folderName, entry.agentType])).toEqual([
      ['Made By Hand', undefined],
    ]);
  });

  it('looks only in the requested scopes', async () => {
    const paths = await setup();
    await writeMemoryIndex('a', 'user', 'x', paths);
    await writeMemoryIndex('b', 'local', 'x', paths);
    const entries = await listMemory({ ...paths, scopes: ['local'] });
    expect(entries.map((entry) => `${entry.scope}:${entry.agentType}`)).toEqual(['local:b']);
  });
});
