import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readAgentFile } from './read-agent-file.js';

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'agent-defs-read-'));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('readAgentFile', () => {
  it.each([
    ['no options', undefined, 'options'],
    ['no filePath', { baseDir: '/tmp', source: 'projectSettings' }, 'options.filePath'],
    ['a path as the only argument', '/tmp/agent.md', 'options'],
    [
      'an unknown source',
      { filePath: '/tmp/a.md', baseDir: '/tmp', source: 'project' },
      'options.source',
    ],
  ])('rejects %s with INVALID_ARGUMENT naming the option', async (_case, options, option) => {
    await expect(readAgentFile(options as never)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining(`readAgentFile(): ${option} must be`),
    });
  });

  it(
    'refuses a FIFO at once instead of waiting forever for a writer',
    { timeout: 5_000 },
    async () => {
      // Listing skips FIFOs, but a file can be swapped for one between listing and reading.
      const fifo = join(directory, 'agent.md');
      execFileSync('mkfifo', [fifo]);
      const result = await readAgentFile({
        filePath: fifo,
        baseDir: directory,
        source: 'projectSettings',
      });
      expect(result).toMatchObject({
        ok: false,
        diagnostic: { severity: 'error', reason: expect.stringMatching(/not a regular file/) },
      });
    },
  );

  it('refuses a directory named like an agent file', async () => {
    const result = await readAgentFile({
      filePath: directory,
      baseDir: directory,
      source: 'userSettings',
    });
    expect(result.ok).toBe(false);
  });

  it('refuses UTF-16 text, saying to save it as UTF-8', async () => {
    const file = join(directory, 'utf16.md');
    const text = '---\nname: wide\ndescription: Saved by Notepad.\n---\nBody.\n';
    await writeFile(file, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    const result = await readAgentFile({
      filePath: file,
      baseDir: directory,
      source: 'userSettings',
    });
    expect(result).toMatchObject({
      ok: false,
      diagnostic: { severity: 'error', reason: expect.stringMatching(/UTF-16 .*save it as UTF-8/) },
    });
  });

  it('never puts the text of a file that is not an agent into its diagnostic', async () => {
    const file = join(directory, 'secret.md');
    await writeFile(file, 'AWS_SECRET_ACCESS_KEY=abc123\n---\nname: x\n');
    const result = await readAgentFile({
      filePath: file,
      baseDir: directory,
      source: 'projectSettings',
    });
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toMatch(/abc123|AWS_SECRET/);
  });
});
