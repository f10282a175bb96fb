import type * as FileSystem from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_AGENT_FILES_PER_DIRECTORY, listMarkdownFiles } from './list-markdown-files.js';

// A file system that lists each folder's entries in reverse name order (many list them in an
// order of their own: by hash, by creation), so the files kept at the cap cannot come from
// the listing order by chance.
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof FileSystem>();
  const readdirSync = (...args: Parameters<typeof actual.readdirSync>): unknown => {
    const entries = actual.readdirSync(...args) as unknown as Array<string | { name: string }>;
    const name = (entry: string | { name: string }): string =>
      typeof entry === 'string' ? entry : entry.name;
    return [...entries].sort((left, right) => (name(left) < name(right) ? 1 : -1));
  };
  return { ...actual, readdirSync };
});

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'agent-defs-order-'));
  await mkdir(join(root, 'a'));
  const inFolder = MAX_AGENT_FILES_PER_DIRECTORY - 1;
  await Promise.all([
    writeFile(join(root, 'a-b.md'), 'x'),
    writeFile(join(root, 'a.md'), 'x'),
    writeFile(join(root, 'b.md'), 'x'),
    ...Array.from({ length: inFolder }, (_, index) =>
      writeFile(join(root, 'a', `x-${String(index).padStart(5, '0')}.md`), 'x'),
    ),
  ]);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('listMarkdownFiles at the file cap', () => {
  it(`keeps the first ${MAX_AGENT_FILES_PER_DIRECTORY} files in sorted path order, whatever order the file system lists them in`, () => {
    const result = listMarkdownFiles(root);
    // Sorted by path: a-b.md, a.md (before a/…, since "." sorts before "/"), a/x-00000.md …
    // a/x-09998.md, b.md. The last two are past the cap.
    const last = join(
      root,
      'a',
      `x-${String(MAX_AGENT_FILES_PER_DIRECTORY - 3).padStart(5, '0')}.md`,
    );
    expect(result.files).toHaveLength(MAX_AGENT_FILES_PER_DIRECTORY);
    expect(result.files.slice(0, 3)).toEqual([
      join(root, 'a-b.md'),
      join(root, 'a.md'),
      join(root, 'a', 'x-00000.md'),
    ]);
    expect(result.files.at(-1)).toBe(last);
    expect(result.files).not.toContain(join(root, 'b.md'));
    expect(result.diagnostics).toEqual([
      expect.objectContaining({
        filePath: root,
        severity: 'warning',
        reason: expect.stringContaining(
          `the first ${MAX_AGENT_FILES_PER_DIRECTORY} in sorted path order were read and the rest skipped, starting with ${join(root, 'a', 'x-09998.md')}`,
        ),
      }),
    ]);
  });
});
