import { realpathSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTempDirectory, removeTempDirectory } from './__fixtures__/test-context.js';
import { physicalPathSync } from './physical-path.js';

let base: string;
beforeEach(async () => {
  base = await createTempDirectory();
  await mkdir(join(base, 'project', 'a', 'b'), { recursive: true });
  await mkdir(join(base, 'outside', 'sub'), { recursive: true });
  await writeFile(join(base, 'outside', 'secret.txt'), 'secret\n');
  await writeFile(join(base, 'project', 'a', 'f'), 'file\n');
  await symlink(join(base, 'outside', 'sub'), join(base, 'project', 'out'));
  await symlink('a/b', join(base, 'project', 'rel'));
  await symlink('../..', join(base, 'project', 'a', 'up'));
});
afterEach(() => removeTempDirectory(base));

describe('physicalPathSync', () => {
  it('applies .. after following a link, as the kernel does', () => {
    const project = join(base, 'project');
    expect(physicalPathSync({ base: project, path: 'out/../secret.txt' })).toBe(
      join(base, 'outside', 'secret.txt'),
    );
    expect(physicalPathSync({ base: project, path: 'rel/..' })).toBe(join(project, 'a'));
    expect(physicalPathSync({ base: '/', path: join(project, 'a/up/outside') })).toBe(
      join(base, 'outside'),
    );
    expect(physicalPathSync({ base: project, path: 'a/./b/../f' })).toBe(join(project, 'a', 'f'));
  });

  it('appends a missing tail, and refuses a .. after a missing or non-folder component', () => {
    const project = join(base, 'project');
    expect(physicalPathSync({ base: project, path: 'out/new/file' })).toBe(
      join(base, 'outside', 'sub', 'new', 'file'),
    );
    expect(() => physicalPathSync({ base: project, path: 'missing/../a' })).toThrow(/not exist/);
    expect(() => physicalPathSync({ base: project, path: 'a/f/../b' })).toThrow(/not a folder/);
  });

  it('refuses a loop of links', async () => {
    await symlink('loop-b', join(base, 'loop-a'));
    await symlink('loop-a', join(base, 'loop-b'));
    expect(() => physicalPathSync({ base, path: 'loop-a/x' })).toThrow(/symbolic links/);
  });

  it('reaches what the kernel reaches for any path over links and ..', () => {
    const project = join(base, 'project');
    const path = fc
      .array(fc.constantFrom('a', 'b', 'f', 'out', 'rel', 'up', '..', '.', 'sub', 'secret.txt'), {
        minLength: 1,
        maxLength: 6,
      })
      .map((parts) => parts.join('/'));
    fc.assert(
      fc.property(path, (relative) => {
        let kernel: string;
        try {
          // As written: `join` would apply the dots to the text first.
          kernel = realpathSync.native(`${project}/${relative}`);
        } catch {
          return;
        }
        expect({ relative, path: physicalPathSync({ base: project, path: relative }) }).toEqual({
          relative,
          path: kernel,
        });
      }),
      { numRuns: 500 },
    );
  });
});
