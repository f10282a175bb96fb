import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
import {
  createTempDirectory,
  createTestContext,
  removeTempDirectory,
} from './__fixtures__/test-context.js';
import {
  getAllowedRoots,
  isPathInside,
  resolvePathWithinRoots,
  resolveToolPath,
} from './resolve-path-within-roots.js';

let base: string;
let root: string;
let outside: string;

beforeAll(async () => {
  base = await createTempDirectory();
  root = join(base, 'root');
  outside = join(base, 'outside');
  await mkdir(join(root, 'a', 'b'), { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'secret.txt'), 'secret');
  await symlink(outside, join(root, 'out'));
  await symlink(join(root, 'a'), join(root, 'in'));
  await symlink(join(outside, 'new.txt'), join(root, 'dangling'));
});

afterAll(() => removeTempDirectory(base));

async function expectEscape(path: string): Promise<DelegateError> {
  const error = await resolvePathWithinRoots({ path, cwd: root, roots: [root] }).catch(
    (caught: unknown) => caught,
  );
  expect(DelegateError.hasCode(error, 'PATH_ESCAPE')).toBe(true);
  return error as DelegateError;
}

describe('resolvePathWithinRoots', () => {
  it('resolves relative and absolute paths inside the root', async () => {
    const relative = await resolvePathWithinRoots({
      path: 'a/b/../b/file.txt',
      cwd: root,
      roots: [root],
    });
    expect(relative.absolutePath).toBe(join(root, 'a', 'b', 'file.txt'));
    const absolute = await resolvePathWithinRoots({
      path: join(root, 'x.txt'),
      cwd: root,
      roots: [root],
    });
    expect(absolute.realPath).toBe(join(root, 'x.txt'));
  });

  it('refuses .. that leaves the root, naming the path and the allowed roots', async () => {
    const error = await expectEscape('../outside/secret.txt');
    expect(error.message).toContain(join(outside, 'secret.txt'));
    expect(error.message).toContain(root);
  });

  it('refuses a symlink that points outside, also for files that do not exist yet', async () => {
    await expectEscape('out/secret.txt');
    await expectEscape('out/new-dir/new.txt');
    const error = await expectEscape('out');
    expect(error.message).toContain('resolves to');
  });

  it('refuses a dangling symlink whose target lies outside', async () => {
    await expectEscape('dangling');
  });

  it('accepts a symlink that stays inside, and additional roots', async () => {
    const inside = await resolvePathWithinRoots({ path: 'in/b', cwd: root, roots: [root] });
    expect(inside.realPath).toBe(join(root, 'a', 'b'));
    const extra = await resolvePathWithinRoots({
      path: '../outside/secret.txt',
      cwd: root,
      roots: [root, outside],
    });
    expect(extra.root).toBe(outside);
  });

  it('never resolves outside the root for random sequences of .., . and names', async () => {
    const segment = fc.constantFrom(
      '..',
      '.',
      'a',
      'b',
      'in',
      'out',
      'new',
      'root',
      'outside',
      'dangling',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(segment, { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        async (segments, absolute) => {
          const path = absolute ? join(root, ...segments) : segments.join('/');
          // `..` is applied to the written path first; only then are symlinks followed.
          const lexical = resolve(root, path);
          const shouldEscape =
            !isPathInside(lexical, root) ||
            isPathInside(lexical, join(root, 'out')) ||
            isPathInside(lexical, join(root, 'dangling'));
          const outcome = await resolvePathWithinRoots({ path, cwd: root, roots: [root] }).then(
            (resolved) => resolved,
            (error: unknown) => error,
          );
          if (shouldEscape) {
            expect(DelegateError.hasCode(outcome, 'PATH_ESCAPE')).toBe(true);
          } else {
            expect(DelegateError.isInstance(outcome)).toBe(false);
            expect(isPathInside((outcome as { realPath: string }).realPath, root)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('accepts every path that stays lexically inside the root and crosses no symlink', async () => {
    const segment = fc.constantFrom('.', 'a', 'b', 'c', '..');
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 8 }), async (segments) => {
        let depth = 0;
        for (const part of segments) {
          if (part === '..') depth--;
          else if (part !== '.') depth++;
          if (depth < 0) return;
        }
        const resolved = await resolvePathWithinRoots({
          path: segments.join('/'),
          cwd: root,
          roots: [root],
        });
        expect(isPathInside(resolved.realPath, root)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});

describe('resolvePathWithinRoots with odd input', () => {
  async function expectInvalid(path: string): Promise<DelegateError> {
    const error = await resolvePathWithinRoots({ path, cwd: root, roots: [root] }).catch(
      (caught: unknown) => caught,
    );
    expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    return error as DelegateError;
  }

  it('refuses a NUL byte with a DelegateError instead of a raw TypeError', async () => {
    await expectInvalid('a/file.txt\0../../outside/secret.txt');
  });

  it('refuses a leading ~ instead of creating a directory named ~ in the root', async () => {
    expect((await expectInvalid('~/.bashrc')).message).toMatch(/not expanded/);
    await expectInvalid('~');
    await expectInvalid('~root/.ssh/id_rsa');
    // Names that merely start with ~ are ordinary files.
    const lockFile = await resolvePathWithinRoots({
      path: '~$report.docx',
      cwd: root,
      roots: [root],
    });
    expect(lockFile.realPath).toBe(join(root, '~$report.docx'));
  });

  it('reports a symlink loop and an over-long path as INVALID_ARGUMENT', async () => {
    await symlink(join(root, 'loop-b'), join(root, 'loop-a'));
    await symlink(join(root, 'loop-a'), join(root, 'loop-b'));
    expect((await expectInvalid('loop-a/file.txt')).message).toMatch(/loop of symbolic links/);
    await expectInvalid(`${'x'.repeat(300)}/file.txt`);
  });

  it('treats trailing slashes and doubled separators like the plain path', async () => {
    const resolved = await resolvePathWithinRoots({ path: 'a//b/', cwd: root, roots: [root] });
    expect(resolved.realPath).toBe(join(root, 'a', 'b'));
    await expectEscape('out/');
    await expectEscape('..//outside//');
  });
});

describe('resolveToolPath with a relative context.cwd', () => {
  it('takes the cwd (and additional directories) from the process working directory once', async () => {
    await writeFile(join(root, 'a', 'note.txt'), 'note');
    const context = createTestContext({
      cwd: relative(process.cwd(), root),
      additionalWorkingDirectories: ['../outside'],
    });
    expect(getAllowedRoots(context)).toEqual([root, outside]);
    await expect(resolveToolPath('a/note.txt', context)).resolves.toMatchObject({
      realPath: join(root, 'a', 'note.txt'),
      root,
    });
    await expect(resolveToolPath('../outside/secret.txt', context)).resolves.toMatchObject({
      root: outside,
    });
  });
});
