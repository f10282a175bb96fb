import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_BIN, type Scratch, makeScratch } from './__fixtures__/run-cli.js';

let scratch: Scratch;
beforeEach(async () => {
  scratch = await makeScratch();
});
afterEach(async () => {
  await scratch.cleanup();
});

/** Runs the built CLI with stdout on `/dev/full`, where every write fails with ENOSPC. */
async function runIntoFullDisk(args: string[]) {
  const full = openSync('/dev/full', 'w');
  try {
    const child = spawn(process.execPath, [CLI_BIN, ...args], {
      cwd: scratch.project,
      env: { ...process.env, HOME: scratch.home, NO_COLOR: '1', ANTHROPIC_API_KEY: '' },
      stdio: ['ignore', full, 'pipe'],
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { code, stderr };
  } finally {
    closeSync(full);
  }
}

const FAILED =
  'delegate: cannot write the output (ENOSPC: no space left on device, write); what was not written is lost, so the command fails (exit code 1).\n';

describe.skipIf(!existsSync('/dev/full'))(
  'a write to stdout that fails (not a closed pipe)',
  () => {
    it('is a failure (exit code 1) said once on stderr, not exit code 141', async () => {
      for (const args of [
        ['config'],
        ['agents', 'list'],
        ['run', '--sim', '--output-format', 'json', 'hi'],
        ['run', '--sim', '--output-format', 'stream-json', 'hi'],
        ['run', '--sim', 'hi'],
        ['demo', '--fast', '--no-compare'],
      ]) {
        const result = await runIntoFullDisk(args);
        expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(1);
        expect(result.stderr.split(FAILED), args.join(' ')).toHaveLength(2);
      }
    });
  },
);
