import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_BIN, type Scratch, makeScratch } from './__fixtures__/run-cli.js';

// An MCP server that keeps running when its stdin closes (it ends on a signal).
const STUBBORN_SERVER = fileURLToPath(
  new URL('./__fixtures__/mcp/stubborn-server.mjs', import.meta.url),
);

let scratch: Scratch;
beforeEach(async () => {
  scratch = await makeScratch();
});
afterEach(async () => {
  await scratch.cleanup();
});

/** Whether a process runs (one that exited counts as gone, reaped or not). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Waits until `path` holds a process id, and returns it. */
async function readPid(path: string): Promise<number | undefined> {
  for (let tries = 0; tries < 500; tries++) {
    const text = await readFile(path, 'utf8').catch(() => '');
    if (text.trim() !== '') return Number(text.trim());
    await delay(20);
  }
  return undefined;
}

describe('stopping delegate run', () => {
  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)(
    'stops the MCP servers still connecting on %s, and exits with its code',
    async (signal, expected) => {
      const pidFile = join(scratch.project, 'server.pid');
      // A server that never answers: the run would wait up to 30 s for it to connect.
      const config = join(scratch.project, 'mcp.json');
      await writeFile(
        config,
        JSON.stringify({
          mcpServers: {
            silent: { command: 'sh', args: ['-c', `echo $$ > ${pidFile}; exec sleep 1000`] },
          },
        }),
      );
      const child = spawn(
        process.execPath,
        [CLI_BIN, 'run', '--sim', '--mcp-config', config, 'hi'],
        {
          cwd: scratch.project,
          env: { ...process.env, HOME: scratch.home, NO_COLOR: '1' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const pid = await readPid(pidFile);
      try {
        expect(pid, `the MCP server never started: ${stderr}`).toBeDefined();
        child.kill(signal);
        expect(await closed, stderr).toBe(expected);
        expect(stderr).toContain('while the run was starting. Nothing ran');
        // The server is stopped with the run, not left running on its own.
        for (let tries = 0; tries < 100 && alive(pid as number); tries++) await delay(20);
        expect(alive(pid as number)).toBe(false);
      } finally {
        if (pid !== undefined && alive(pid)) process.kill(pid, 'SIGKILL');
      }
    },
  );

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'stops an MCP server that ignores its closed stdin when %s comes while the run shuts down',
    async (signal) => {
      const pidFile = join(scratch.project, 'server.pid');
      const logFile = join(scratch.project, 'server.log');
      const config = join(scratch.project, 'mcp.json');
      await writeFile(
        config,
        JSON.stringify({
          mcpServers: {
            stubborn: {
              command: process.execPath,
              args: [STUBBORN_SERVER],
              env: { PID_FILE: pidFile, LOG_FILE: logFile },
            },
          },
        }),
      );
      const child = spawn(
        process.execPath,
        [CLI_BIN, 'run', '--sim', '--mcp-config', config, '--transcript-dir', 'tr', 'hi'],
        {
          cwd: scratch.project,
          env: { ...process.env, HOME: scratch.home, NO_COLOR: '1' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const closed = new Promise<[number | null, string | null]>((resolve) =>
        child.on('close', (code, signalName) => resolve([code, signalName])),
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const pid = await readPid(pidFile);
      try {
        expect(pid, `the MCP server never started: ${stderr}`).toBeDefined();
        // The run has answered and is closing the server: its stdin has ended, and the SDK
        // waits 2 s before it signals a server still running.
        for (let tries = 0; tries < 500; tries++) {
          if ((await readFile(logFile, 'utf8').catch(() => '')).includes('stdin end')) break;
          await delay(10);
        }
        expect(await readFile(logFile, 'utf8')).toContain('stdin end');
        child.kill(signal);
        const [code, signalName] = await closed;
        // Ended by the signal, as without the wait: 143 or 130 to a shell.
        expect(signalName ?? code, stderr).toBe(signal);
        expect(stderr).toContain('stopping the agents and MCP servers this run started');
        // The server did not outlive the CLI.
        expect(alive(pid as number)).toBe(false);
      } finally {
        if (pid !== undefined && alive(pid)) process.kill(pid, 'SIGKILL');
      }
    },
  );

  it.each(['text', 'json'])(
    'exits 141 when the reader of the %s output has gone away by the time the answer is written',
    async (format) => {
      // The reader (`true`) leaves before the run writes its answer, at the end. (With `| head -1`
      // head may read a short answer whole before it leaves: nothing is lost, and the exit is 0.)
      const script = `"$0" "$1" run --sim --output-format "$2" hi | true; exit "\${PIPESTATUS[0]}"`;
      const child = spawn('bash', ['-c', script, process.execPath, CLI_BIN, format], {
        cwd: scratch.project,
        env: { ...process.env, HOME: scratch.home, NO_COLOR: '1' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code, stderr).toBe(141);
      expect(stderr).not.toMatch(/EPIPE|Unhandled|at .*\.js:\d+/);
    },
  );
});
