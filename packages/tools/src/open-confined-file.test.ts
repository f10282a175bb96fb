import { execFileSync } from 'node:child_process';
import { link, mkdir, readdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
import { createTempDirectory, removeTempDirectory } from './__fixtures__/test-context.js';
import { openConfinedFile, readAtMost } from './open-confined-file.js';
import { resolvePathWithinRoots } from './resolve-path-within-roots.js';

let base: string;
let root: string;
let outside: string;
beforeEach(async () => {
  base = await createTempDirectory();
  root = join(base, 'root');
  outside = join(base, 'outside');
  await mkdir(join(root, 'dir'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(root, 'dir', 'file.txt'), 'inside');
  await writeFile(join(outside, 'file.txt'), 'outside');
});
afterEach(() => removeTempDirectory(base));

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
}

describe('openConfinedFile', () => {
  it('refuses to write when a parent directory was swapped for a symlink after the check', async () => {
    const checked = await resolvePathWithinRoots({
      path: 'dir/file.txt',
      cwd: root,
      roots: [root],
    });
    await rename(join(root, 'dir'), join(root, 'dir-old'));
    await symlink(outside, join(root, 'dir'));
    for (const purpose of ['write', 'read'] as const) {
      const error = await errorOf(openConfinedFile({ ...checked, purpose }));
      expect(DelegateError.hasCode(error, 'PATH_ESCAPE')).toBe(true);
    }
    expect(await readFile(join(outside, 'file.txt'), 'utf8')).toBe('outside');
  });

  it('refuses a file that was replaced by a symlink after the check', async () => {
    const checked = await resolvePathWithinRoots({
      path: 'dir/file.txt',
      cwd: root,
      roots: [root],
    });
    await rename(join(root, 'dir', 'file.txt'), join(root, 'dir', 'moved.txt'));
    await symlink(join(outside, 'file.txt'), join(root, 'dir', 'file.txt'));
    const error = await errorOf(openConfinedFile({ ...checked, purpose: 'write' }));
    expect(DelegateError.hasCode(error, 'PATH_ESCAPE')).toBe(true);
    expect(await readFile(join(outside, 'file.txt'), 'utf8')).toBe('outside');
  });

  it('refuses a FIFO at once instead of blocking on it', async () => {
    execFileSync('mkfifo', [join(root, 'pipe')]);
    const checked = await resolvePathWithinRoots({ path: 'pipe', cwd: root, roots: [root] });
    const error = await errorOf(openConfinedFile({ ...checked, purpose: 'read' }));
    expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    expect((error as DelegateError).message).toMatch(/not a regular file/);
  });

  it('opens a checked file inside the root, and `create` refuses one that exists', async () => {
    const checked = await resolvePathWithinRoots({
      path: 'dir/file.txt',
      cwd: root,
      roots: [root],
    });
    const handle = await openConfinedFile({ ...checked, purpose: 'read' });
    try {
      expect((await readAtMost(handle, 4)).bytes.toString()).toBe('insi');
    } finally {
      await handle.close();
    }
    const error = await errorOf(openConfinedFile({ ...checked, purpose: 'create' }));
    expect(DelegateError.hasCode(error, 'FILE_STALE')).toBe(true);
    expect((error as DelegateError).details).toMatchObject({ systemCode: 'EEXIST' });
  });

  it('refuses files with other hard links, unless allowed', async () => {
    await link(join(outside, 'file.txt'), join(root, 'dir', 'linked.txt'));
    const checked = await resolvePathWithinRoots({
      path: 'dir/linked.txt',
      cwd: root,
      roots: [root],
    });
    for (const purpose of ['read', 'write'] as const) {
      const error = await errorOf(openConfinedFile({ ...checked, purpose }));
      expect(DelegateError.hasCode(error, 'PATH_ESCAPE')).toBe(true);
      expect((error as DelegateError).message).toContain('2 hard links');
    }
    const handle = await openConfinedFile({ ...checked, purpose: 'read', allowHardLinks: true });
    await handle.close();
    expect(await readFile(join(outside, 'file.txt'), 'utf8')).toBe('outside');
  });

  it('creates a new file and its missing parents, but nothing under a parent swapped for a symlink', async () => {
    const checked = await resolvePathWithinRoots({
      path: 'dir/a/b/new.txt',
      cwd: root,
      roots: [root],
    });
    const handle = await openConfinedFile({ ...checked, purpose: 'create' });
    await handle.close();
    expect(await readFile(join(root, 'dir', 'a', 'b', 'new.txt'), 'utf8')).toBe('');

    const later = await resolvePathWithinRoots({
      path: 'dir/c/d/new.txt',
      cwd: root,
      roots: [root],
    });
    await rename(join(root, 'dir'), join(root, 'dir-old'));
    await symlink(outside, join(root, 'dir'));
    const error = await errorOf(openConfinedFile({ ...later, purpose: 'create' }));
    expect(DelegateError.hasCode(error, 'PATH_ESCAPE')).toBe(true);
    expect(await readdir(outside)).toEqual(['file.txt']);
  });

  it('turns file-system errors into DelegateErrors that name the path', async () => {
    const checked = await resolvePathWithinRoots({
      path: 'dir/file.txt/x',
      cwd: root,
      roots: [root],
    });
    for (const purpose of ['read', 'create'] as const) {
      const error = await errorOf(openConfinedFile({ ...checked, purpose }));
      expect(DelegateError.isInstance(error)).toBe(true);
      expect((error as DelegateError).message).toContain(join(root, 'dir', 'file.txt'));
    }
  });
});

describe('readAtMost', () => {
  it('reads whole small files and flags larger ones as truncated', async () => {
    const path = join(root, 'dir', 'file.txt');
    const checked = await resolvePathWithinRoots({ path, cwd: root, roots: [root] });
    for (const [maxBytes, expected, truncated] of [
      [100, 'inside', false],
      [6, 'inside', false],
      [5, 'insid', true],
    ] as const) {
      const handle = await openConfinedFile({ ...checked, purpose: 'read' });
      try {
        const result = await readAtMost(handle, maxBytes);
        expect(result.bytes.toString()).toBe(expected);
        expect(result.truncated).toBe(truncated);
      } finally {
        await handle.close();
      }
    }
  });
});
