import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_AGENT_FILES_PER_DIRECTORY, listMarkdownFiles } from './list-markdown-files.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'agent-defs-list-'));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('listMarkdownFiles', () => {
  it('lists neither FIFOs, sockets, devices nor broken links named like agent files, and warns about each', async () => {
    const agents = join(root, 'agents');
    await mkdir(agents);
    execFileSync('mkfifo', [join(agents, 'fifo.md')]);
    execFileSync('mkfifo', [join(agents, 'notes.txt')]);
    await symlink('/dev/zero', join(agents, 'zero.md'));
    await symlink(join(agents, 'loop.md'), join(agents, 'loop.md'));
    await symlink(join(agents, 'gone.md'), join(agents, 'dangling.md'));
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(join(agents, 'socket.md'), resolve));
    try {
      await writeFile(join(agents, 'real.md'), 'x');
      const listed = listMarkdownFiles(agents);
      expect(listed.files).toEqual([join(agents, 'real.md')]);
      const reasons = Object.fromEntries(
        listed.diagnostics.map((diagnostic) => [diagnostic.filePath, diagnostic.reason]),
      );
      expect(reasons).toEqual({
        [join(agents, 'dangling.md')]: expect.stringMatching(/link to a file that does not exist/),
        [join(agents, 'fifo.md')]: expect.stringMatching(/is a named pipe \(FIFO\)/),
        [join(agents, 'loop.md')]: expect.stringMatching(/loops back on itself/),
        [join(agents, 'socket.md')]: expect.stringMatching(/is a socket/),
        [join(agents, 'zero.md')]: expect.stringMatching(/symbolic link to a device/),
      });
      expect(listed.diagnostics.every((diagnostic) => diagnostic.severity === 'warning')).toBe(
        true,
      );
    } finally {
      server.close();
    }
  });

  it('skips, with a warning, a linked file or directory that leaves the confining directory', async () => {
    const repository = join(root, 'repo');
    const agents = join(repository, '.claude', 'agents');
    const outside = join(root, 'outside');
    await mkdir(agents, { recursive: true });
    await mkdir(join(outside, 'more'), { recursive: true });
    await writeFile(join(outside, 'secret.md'), '---\nname: s\ndescription: s\n---\nsecret');
    await writeFile(join(outside, 'more', 'other.md'), 'x');
    await writeFile(join(repository, 'inside.md'), 'x');
    await symlink(join(outside, 'secret.md'), join(agents, 'secret.md'));
    await symlink(join(outside, 'more'), join(agents, 'more'));
    await symlink(join(repository, 'inside.md'), join(agents, 'inside.md'));

    const confined = await listMarkdownFiles(agents, { confineTo: repository });
    expect(confined.files).toEqual([join(agents, 'inside.md')]);
    expect(confined.diagnostics).toEqual([
      expect.objectContaining({ filePath: join(agents, 'more'), severity: 'warning' }),
      expect.objectContaining({ filePath: join(agents, 'secret.md'), severity: 'warning' }),
    ]);
    // Without confinement (user and policy directories) links are followed as before.
    expect((await listMarkdownFiles(agents)).files).toHaveLength(3);
  });

  it('skips an agents directory that is itself a link out of the confining directory', async () => {
    const repository = join(root, 'repo');
    const outside = join(root, 'outside');
    await mkdir(join(repository, '.claude'), { recursive: true });
    await mkdir(outside);
    await writeFile(join(outside, 'a.md'), 'x');
    await symlink(outside, join(repository, '.claude', 'agents'));
    const result = await listMarkdownFiles(join(repository, '.claude', 'agents'), {
      confineTo: repository,
    });
    expect(result.files).toEqual([]);
    expect(result.diagnostics).toHaveLength(1);
  });

  it(`takes at most ${MAX_AGENT_FILES_PER_DIRECTORY} files, with one warning`, async () => {
    await Promise.all(
      Array.from({ length: MAX_AGENT_FILES_PER_DIRECTORY + 5 }, (_, index) =>
        writeFile(join(root, `agent-${String(index).padStart(5, '0')}.md`), 'x'),
      ),
    );
    const result = await listMarkdownFiles(root);
    expect(result.files).toHaveLength(MAX_AGENT_FILES_PER_DIRECTORY);
    expect(result.diagnostics).toEqual([
      expect.objectContaining({ filePath: root, reason: expect.stringMatching(/more than/) }),
    ]);
  });
});
