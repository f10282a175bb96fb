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
