import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInside, resolveWorkspace } from './resolve-workspace.js';

describe('resolveWorkspace', () => {
  let base: string;
  let root: string;
  let outside: string;

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'delegate-workspace-')));
    root = join(base, 'root');
    outside = join(base, 'outside');
    await mkdir(join(root, 'project', 'src'), { recursive: true });
    await mkdir(outside);
    await writeFile(join(root, 'file.txt'), 'x');
    await symlink(outside, join(root, 'escape'));
    await symlink(join(root, 'project'), join(root, 'alias'));
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  it('defaults to the first root and resolves relative and absolute paths inside it', async () => {
    expect(await resolveWorkspace({ requested: undefined, roots: [root] })).toBe(root);
    expect(await resolveWorkspace({ requested: 'project/src', roots: [root] })).toBe(
      join(root, 'project', 'src'),
    );
    expect(await resolveWorkspace({ requested: join(root, 'project'), roots: [root] })).toBe(
      join(root, 'project'),
    );
    expect(await resolveWorkspace({ requested: 'alias', roots: [root] })).toBe(
      join(root, 'project'),
    );
  });

  it('accepts a path inside any of several roots', async () => {
    expect(await resolveWorkspace({ requested: outside, roots: [root, outside] })).toBe(outside);
  });

  it('refuses traversal, links out of the root and outside paths, naming the field', async () => {
    await expect(resolveWorkspace({ requested: '../outside', roots: [root] })).rejects.toThrow(
      /^workspace: .*contains "\.\."/,
    );
    await expect(
      resolveWorkspace({ requested: 'project/../../outside', roots: [root] }),
    ).rejects.toThrow(/contains "\.\."/);
    await expect(resolveWorkspace({ requested: 'escape', roots: [root] })).rejects.toThrow(
      /outside the workspace roots/,
    );
    await expect(resolveWorkspace({ requested: outside, roots: [root] })).rejects.toThrow(
      /outside the workspace roots/,
    );
    await expect(resolveWorkspace({ requested: '/', roots: [root] })).rejects.toThrow(
      /outside the workspace roots/,
    );
    await expect(resolveWorkspace({ requested: 'a\0b', roots: [root] })).rejects.toThrow(/NUL/);
  });

  it('answers a path outside the roots the same whether it exists or not, telling nothing of the host', async () => {
    const existing = await resolveWorkspace({ requested: outside, roots: [root] }).catch(
      (error: unknown) => error as Error & { code?: string },
    );
    if (typeof existing === 'string') throw new Error('expected a refusal');
    const missing = await resolveWorkspace({
      requested: join(outside, 'no-such-dir'),
      roots: [root],
    }).catch((error: unknown) => error as Error & { code?: string });
    if (typeof missing === 'string') throw new Error('expected a refusal');
    expect(existing.code).toBe('PATH_ESCAPE');
    expect(missing.code).toBe('PATH_ESCAPE');
    for (const error of [existing, missing]) {
      expect(error.message).toMatch(/outside the workspace roots/);
      expect(error.message).not.toMatch(/ENOENT|does not exist|realpath/);
    }
  });

  it('refuses missing paths and files', async () => {
    await expect(resolveWorkspace({ requested: 'nope', roots: [root] })).rejects.toThrow(
      /does not exist/,
    );
    await expect(resolveWorkspace({ requested: 'file.txt', roots: [root] })).rejects.toThrow(
      /not a directory/,
    );
  });

  it('accepts a folder whose name starts with two dots, and still refuses ..', async () => {
    await mkdir(join(root, '..dotted'));
    expect(await resolveWorkspace({ requested: '..dotted', roots: [root] })).toBe(
      join(root, '..dotted'),
    );
    expect(isInside(root, join(root, '..dotted', 'x'))).toBe(true);
    expect(isInside(root, join(root, '..'))).toBe(false);
    expect(isInside(root, join(root, '..', 'outside'))).toBe(false);
  });

  it('does not take a sibling with a common prefix for the root', () => {
    expect(isInside('/data/root', '/data/root-other')).toBe(false);
    expect(isInside('/data/root', '/data/root/a')).toBe(true);
    expect(isInside('/data/root', '/data/root')).toBe(true);
  });
});
