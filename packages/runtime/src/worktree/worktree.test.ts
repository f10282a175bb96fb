import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { DelegateError } from '@delegate/core';
import { agentCall, agentOf, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import { createApiClient } from '../session/model-config.js';
import { DelegateSession } from '../session/session.js';
import { cleanupAgentWorktree, createAgentWorktree } from './worktree.js';

let root: string;
let repo: string;

const git = (...args: string[]): string =>
  execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();

async function commitFile(name: string, content: string): Promise<void> {
  await writeFile(join(repo, name), content);
  git('add', '.');
  git('-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-qm', name);
}

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'delegate-worktree-')));
  repo = join(root, 'repo');
  await mkdir(repo);
  git('init', '-q', '-b', 'main');
});

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
  await rm(root, { recursive: true, force: true });
});

describe('createAgentWorktree', () => {
  it('explains that a repository without commits needs a first commit', async () => {
    const error = await createAgentWorktree({
      cwd: repo,
      slug: 'agent-a',
      root: join(root, 'trees'),
    }).catch((caught: unknown) => caught);
    expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    expect((error as Error).message).toMatch(/has no commits yet\. Make a first commit/);
    expect((error as Error).message).toContain(repo);
  });

  it('starts from the last commit, without the uncommitted changes of the parent checkout', async () => {
    await commitFile('a.txt', 'committed\n');
    await writeFile(join(repo, 'a.txt'), 'dirty\n');
    await writeFile(join(repo, 'untracked.txt'), 'new\n');
    const worktree = await createAgentWorktree({
      cwd: repo,
      slug: 'agent-b',
      root: join(root, 'trees'),
    });
    expect(await readFile(join(worktree.worktreePath, 'a.txt'), 'utf8')).toBe('committed\n');
    expect(existsSync(join(worktree.worktreePath, 'untracked.txt'))).toBe(false);
    // The parent's dirty files do not count as the agent's changes.
    expect(await cleanupAgentWorktree(worktree)).toBeUndefined();
    expect(existsSync(worktree.worktreePath)).toBe(false);
    expect(await readFile(join(repo, 'a.txt'), 'utf8')).toBe('dirty\n');
  });

  it('puts an agent started in a subdirectory in the same subdirectory of its worktree', async () => {
    await mkdir(join(repo, 'packages', 'app'), { recursive: true });
    await commitFile(join('packages', 'app', 'index.ts'), 'export {};\n');
    const worktree = await createAgentWorktree({
      cwd: join(repo, 'packages', 'app'),
      slug: 'agent-c',
      root: join(root, 'trees'),
    });
    expect(worktree.cwd).toBe(join(worktree.worktreePath, 'packages', 'app'));
    expect(existsSync(join(worktree.cwd, 'index.ts'))).toBe(true);
    const atRoot = await createAgentWorktree({
      cwd: repo,
      slug: 'agent-d',
      root: join(root, 'trees'),
    });
    expect(atRoot.cwd).toBe(atRoot.worktreePath);
  });

  it('refuses a name whose branch already exists and leaves that branch alone', async () => {
    await commitFile('a.txt', 'one\n');
    git('branch', 'delegate/agent-e');
    const before = git('rev-parse', 'delegate/agent-e');
    await commitFile('b.txt', 'two\n');
    const error = await createAgentWorktree({
      cwd: repo,
      slug: 'agent-e',
      root: join(root, 'trees'),
    }).catch((caught: unknown) => caught);
    expect((error as Error).message).toMatch(
      /branch delegate\/agent-e .* exists.*git branch -D delegate\/agent-e/,
    );
    expect(git('rev-parse', 'delegate/agent-e')).toBe(before);
    expect(existsSync(join(root, 'trees', 'agent-e'))).toBe(false);
  });
});

describe('a worktree root that is a file', () => {
  it('is refused by DelegateSession.create, naming options.worktreeRoot', async () => {
    const file = join(root, 'trees');
    await writeFile(file, 'not a folder\n');
    for (const worktreeRoot of [file, join(file, 'inside')]) {
      const error = await DelegateSession.create({
        cwd: repo,
        client: createApiClient({ apiKey: 'k', baseURL: 'http://127.0.0.1:9' }),
        transcriptDir: false,
        worktreeRoot,
      }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT'), worktreeRoot).toBe(true);
      expect((error as Error).message).toContain(
        `options.worktreeRoot: ${JSON.stringify(worktreeRoot)}`,
      );
    }
  });

  it('is refused when the first worktree is made, naming the root, not a raw EEXIST', async () => {
    await commitFile('a.txt', 'committed\n');
    const file = join(root, 'trees');
    await writeFile(file, 'not a folder\n');
    const error = await createAgentWorktree({ cwd: repo, slug: 'agent-f', root: file }).catch(
      (caught: unknown) => caught,
    );
    expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    expect((error as Error).message).toBe(
      `The worktree root (the session's worktreeRoot option) ${file} cannot hold agent worktrees: a file is in the way of that folder. Remove the file, or set worktreeRoot to a folder.`,
    );
  });
});

describe('worktree agents in a session', () => {
  it('keeps a worktree that has changes and removes one that has none', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { agent: 'general-purpose', lastUserText: 'add a file', toolResult: false },
          reply: [
            {
              type: 'tool_use',
              name: 'Write',
              input: { file_path: 'added.txt', content: 'new\n' },
            },
          ],
        },
        { match: { agent: 'general-purpose', toolResult: 'Write' }, reply: 'Added added.txt.' },
        {
          match: { agent: 'general-purpose', lastUserText: 'look only' },
          reply: 'Nothing to change.',
        },
        {
          match: { when: isMain, lastUserText: 'edit', toolResult: false },
          reply: [
            agentCall({
              description: 'edit',
              prompt: 'add a file',
              subagent_type: 'general-purpose',
              isolation: 'worktree',
            }),
          ],
        },
        {
          match: { when: isMain, lastUserText: 'read', toolResult: false },
          reply: [
            agentCall({
              description: 'read',
              prompt: 'look only',
              subagent_type: 'general-purpose',
              isolation: 'worktree',
            }),
          ],
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => resultText(request),
        },
      ]),
      session: { permissionMode: 'acceptEdits' },
    });
    const { cwd, session } = current;
    const git = (...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
    git('init', '-q', '-b', 'main');
    await writeFile(join(cwd, 'README.md'), '# repo\n');
    git('add', '.');
    git('-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-qm', 'init');

    const edited = await session.send('edit');
    const path = /worktreePath: (\S+)/.exec(edited.text)?.[1];
    const branch = /worktreeBranch: (\S+)/.exec(edited.text)?.[1];
    expect(path).toBeDefined();
    expect(await readFile(join(path!, 'added.txt'), 'utf8')).toBe('new\n');
    expect(git('branch', '--list', branch!)).toContain(branch!);
    expect(existsSync(join(cwd, 'added.txt'))).toBe(false);

    const before = git('worktree', 'list');
    const read = await session.send('read');
    expect(read.text).toContain('Nothing to change.');
    expect(read.text).not.toContain('worktreePath');
    expect(git('worktree', 'list')).toBe(before);
    expect(git('branch', '--list', 'delegate/*').split('\n').filter(Boolean)).toHaveLength(1);
  });
});

describe('output that .gitignore ignores', () => {
  it('counts as a change: the worktree is kept, not deleted with the file', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [
            {
              type: 'tool_use',
              name: 'Write',
              input: { file_path: 'out/report.txt', content: 'the report\n' },
            },
          ],
        },
        { match: { agent: 'general-purpose' }, reply: 'Wrote the report to out/report.txt.' },
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'report',
              prompt: 'write the report',
              subagent_type: 'general-purpose',
              isolation: 'worktree',
            }),
          ],
        },
        { match: { when: isMain }, reply: (request) => resultText(request) },
      ]),
      session: { permissionMode: 'acceptEdits' },
    });
    const { cwd, session } = current;
    const git = (...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
    git('init', '-q', '-b', 'main');
    await writeFile(join(cwd, '.gitignore'), 'out/\n');
    git('add', '.');
    git('-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-qm', 'init');

    const result = await session.send('go');
    const path = /worktreePath: (\S+)/.exec(result.text)?.[1];
    expect(path).toBeDefined();
    expect(await readFile(join(path!, 'out', 'report.txt'), 'utf8')).toBe('the report\n');
  });

  it('made by the checkout itself (a post-checkout hook) does not count', async () => {
    await commitFile('.gitignore', '.stamp\n*.log\n');
    await mkdir(join(repo, '.git', 'hooks'), { recursive: true });
    await writeFile(join(repo, '.git', 'hooks', 'post-checkout'), '#!/bin/sh\ntouch .stamp\n', {
      mode: 0o755,
    });
    const untouched = await createAgentWorktree({
      cwd: repo,
      slug: 'agent-g',
      root: join(root, 'trees'),
    });
    expect(existsSync(join(untouched.worktreePath, '.stamp'))).toBe(true);
    expect(await cleanupAgentWorktree(untouched)).toBeUndefined();
    expect(existsSync(untouched.worktreePath)).toBe(false);

    const touched = await createAgentWorktree({
      cwd: repo,
      slug: 'agent-h',
      root: join(root, 'trees'),
    });
    await writeFile(join(touched.worktreePath, 'build.log'), 'made by the agent\n');
    expect(await cleanupAgentWorktree(touched)).toEqual({
      path: touched.worktreePath,
      branch: touched.worktreeBranch,
    });
  });
});

describe('an agent started in a folder the commit does not have', () => {
  it('is refused, saying why, and leaves no worktree or branch behind', async () => {
    await commitFile('a.txt', 'committed\n');
    for (const folder of ['untracked-only', 'empty']) {
      await mkdir(join(repo, folder));
      if (folder === 'untracked-only') await writeFile(join(repo, folder, 'new.txt'), 'new\n');
      const error = await createAgentWorktree({
        cwd: join(repo, folder),
        slug: `agent-${folder}`,
        root: join(root, 'trees'),
      }).catch((caught: unknown) => caught);
      expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT'), folder).toBe(true);
      expect((error as Error).message).toContain(
        `the folder ${join(repo, folder)} is not in it (it is new, or holds only untracked or ignored files)`,
      );
      expect(existsSync(join(root, 'trees', `agent-${folder}`))).toBe(false);
    }
    expect(git('worktree', 'list').split('\n')).toHaveLength(1);
    expect(git('branch', '--list', 'delegate/*')).toBe('');
  });

  it('gets the refusal as its Agent call result, and runs no tool', async () => {
    let newFolder = '';
    current = await createTestSession({
      policy: rules([
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'pwd' } }],
        },
        { match: { agent: 'general-purpose' }, reply: (request) => resultText(request) },
        {
          match: { when: isMain, toolResult: false },
          reply: () => [
            agentCall({
              description: 'work',
              prompt: 'work here',
              subagent_type: 'general-purpose',
              isolation: 'worktree',
              cwd: newFolder,
            }),
          ],
        },
        { match: { when: isMain }, reply: (request) => resultText(request) },
      ]),
    });
    const { cwd, session, sim } = current;
    newFolder = join(cwd, 'newdir');
    const inRepo = (...args: string[]) =>
      execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
    inRepo('init', '-q', '-b', 'main');
    await writeFile(join(cwd, 'README.md'), '# repo\n');
    inRepo('add', '.');
    inRepo('-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-qm', 'init');
    await mkdir(newFolder);
    await writeFile(join(newFolder, 'draft.txt'), 'untracked\n');

    const result = await session.send('go');
    expect(result.text).toContain(`the folder ${newFolder} is not in it`);
    expect(sim.journal.entries.filter((entry) => agentOf(entry) !== undefined)).toEqual([]);
    expect(inRepo('worktree', 'list').split('\n')).toHaveLength(1);
  });
});
