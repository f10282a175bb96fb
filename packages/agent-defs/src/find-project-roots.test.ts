import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, parse } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findProjectAgentDirectories, findProjectRoots } from './find-project-roots.js';
import {
  clearAgentDefinitionsCache,
  getAgentDefinitionsWithOverrides,
} from './get-agent-definitions-with-overrides.js';

let root: string;
let home: string;

beforeEach(async () => {
  clearAgentDefinitionsCache();
  root = await realpath(await mkdtemp(join(tmpdir(), 'agent-defs-roots-')));
  home = join(root, 'home');
  await mkdir(home);
});

afterEach(async () => {
  clearAgentDefinitionsCache();
  await rm(root, { recursive: true, force: true });
});

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, {
    cwd,
    stdio: 'ignore',
    env: {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 'test@example.com',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 'test@example.com',
    },
  });
}

async function agentFile(path: string, name: string, prompt: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `---\nname: ${name}\ndescription: ${name}.\n---\n${prompt}\n`);
}

// A repository `main` with one commit and a linked worktree `wt` of it, made by git itself.
async function repositoryWithWorktree(): Promise<{ main: string; worktree: string }> {
  const main = join(root, 'main');
  const worktree = join(root, 'wt');
  await mkdir(main);
  git(main, 'init', '-q');
  await writeFile(join(main, 'README.md'), 'x\n');
  git(main, 'add', 'README.md');
  git(main, 'commit', '-q', '-m', 'first');
  git(main, 'worktree', 'add', '-q', worktree);
  return { main, worktree };
}

function load(cwd: string) {
  return getAgentDefinitionsWithOverrides({ cwd, homeDir: home });
}

describe('findProjectRoots', () => {
  it('walks up to the file-system root, nearest first, outside a repository and the home directory', async () => {
    const cwd = join(root, 'a', 'b');
    const roots = await findProjectRoots(cwd, { homeDir: home });
    expect(roots.slice(0, 3)).toEqual([cwd, join(root, 'a'), root]);
    expect(roots.at(-1)).toBe(parse(root).root);
  });

  it('stops before the home directory, whose agents are the user’s', async () => {
    const cwd = join(home, 'work', 'app');
    expect(await findProjectRoots(cwd, { homeDir: home })).toEqual([cwd, join(home, 'work')]);
    expect(await findProjectRoots(home, { homeDir: home })).toEqual([]);
  });

  it('stops at the repository root', async () => {
    await mkdir(join(root, 'repo', '.git'), { recursive: true });
    const cwd = join(root, 'repo', 'src');
    expect(await findProjectRoots(cwd, { homeDir: home })).toEqual([cwd, join(root, 'repo')]);
  });
});

describe('project agents in a linked git worktree', () => {
  it("reads the main checkout's agents when the worktree's root has no .claude/agents", async () => {
    const { main, worktree } = await repositoryWithWorktree();
    // Not committed, so the worktree does not have it.
    await agentFile(join(main, '.claude', 'agents', 'local.md'), 'local', 'from main');
    await mkdir(join(worktree, 'src'));
    const result = await load(join(worktree, 'src'));
    const local = result.activeAgents.find((agent) => agent.agentType === 'local');
    expect(local).toMatchObject({
      source: 'projectSettings',
      filePath: join(main, '.claude', 'agents', 'local.md'),
    });
    expect(local?.getSystemPrompt()).toBe('from main');
    expect(result.diagnostics).toEqual([]);
  });

  it("reads only the worktree's own folder when it has one", async () => {
    const { main, worktree } = await repositoryWithWorktree();
    await agentFile(join(main, '.claude', 'agents', 'local.md'), 'local', 'from main');
    await agentFile(join(worktree, '.claude', 'agents', 'own.md'), 'own', 'from worktree');
    const result = await load(worktree);
    const types = result.activeAgents.map((agent) => agent.agentType);
    expect(types).toContain('own');
    expect(types).not.toContain('local');
  });

  it('lists the main checkout’s folders first (the lowest level), confined to the main checkout', async () => {
    const { main, worktree } = await repositoryWithWorktree();
    await mkdir(join(worktree, 'src'));
    const directories = await findProjectAgentDirectories(join(worktree, 'src'), {
      homeDir: home,
    });
    expect(directories).toEqual([
      { path: join(main, '.claude', 'agents'), confineTo: main },
      { path: join(main, '.delegate', 'agents'), confineTo: main },
      { path: join(worktree, '.claude', 'agents'), confineTo: worktree },
      { path: join(worktree, '.delegate', 'agents'), confineTo: worktree },
      { path: join(worktree, 'src', '.claude', 'agents'), confineTo: worktree },
      { path: join(worktree, 'src', '.delegate', 'agents'), confineTo: worktree },
    ]);
  });

  it('lets a worktree subdirectory’s agent beat the main checkout’s of the same name, as Claude Code does', async () => {
    const { main, worktree } = await repositoryWithWorktree();
    await agentFile(join(main, '.claude', 'agents', 'x.md'), 'x', 'from main');
    await agentFile(join(main, '.claude', 'agents', 'only.md'), 'only', 'from main');
    await agentFile(join(worktree, 'sub', '.claude', 'agents', 'x.md'), 'x', 'from sub');
    const result = await load(join(worktree, 'sub'));
    const prompt = (type: string): string | undefined =>
      result.activeAgents.find((agent) => agent.agentType === type)?.getSystemPrompt();
    expect(prompt('x')).toBe('from sub');
    expect(prompt('only')).toBe('from main');
  });

  it('does not follow a hand-made .git file to a folder git did not link back', async () => {
    const { main } = await repositoryWithWorktree();
    await agentFile(join(main, '.claude', 'agents', 'local.md'), 'local', 'from main');
    const fake = join(root, 'fake');
    await mkdir(fake);
    // Points into the main repository's worktree records, but no worktree there points back.
    await writeFile(join(fake, '.git'), `gitdir: ${join(main, '.git', 'worktrees', 'wt')}\n`);
    const result = await load(fake);
    expect(result.activeAgents.some((agent) => agent.agentType === 'local')).toBe(false);
  });
});
