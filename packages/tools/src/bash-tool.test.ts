import { execFile, spawn } from 'node:child_process';
import { appendFile, mkdtemp, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
import { isProcessAlive, waitUntil } from './__fixtures__/process-liveness.js';
import {
  createAppStateStore,
  contentText,
  createTempDirectory,
  createTestContext,
  removeTempDirectory,
  testExtras,
} from './__fixtures__/test-context.js';
import { BackgroundShellRegistry, getBackgroundShellOutput } from './background-shell-registry.js';
import { createBashTool } from './bash-tool.js';
import { reapOrphanedShells } from './shell-records.js';
import { isShellParserLoaded, loadShellParser } from './shell-parser.js';

let directory: string;
let outputDirectory: string;
let registry: BackgroundShellRegistry;

beforeAll(async () => {
  outputDirectory = await createTempDirectory('delegate-tasks-');
});
afterAll(() => removeTempDirectory(outputDirectory));
beforeEach(async () => {
  directory = await createTempDirectory();
  registry = new BackgroundShellRegistry({ outputDirectory, killGraceMs: 200 });
});
afterEach(async () => {
  registry.killAll();
  await removeTempDirectory(directory);
});

function pidsIn(text: string): number[] {
  return [...text.matchAll(/^pid:(\d+)$/gm)].map((match) => Number(match[1]));
}

async function allGone(pids: number[]): Promise<boolean> {
  return waitUntil(() => pids.every((pid) => !isProcessAlive(pid)), 3000);
}

describe('Bash', () => {
  it('returns combined stdout and stderr with the exit code', async () => {
    const context = createTestContext({ cwd: directory });
    const result = await createBashTool().call(
      { command: 'echo out; echo err >&2; pwd' },
      context,
      testExtras,
    );
    expect(result.isError).toBeUndefined();
    expect(result.content).toContain('out');
    expect(result.content).toContain('err');
    expect(result.content).toContain(directory);
    expect(result.content).toMatch(/Exit code: 0$/);
  });

  it('turns a non-zero exit into an error result, not a throw', async () => {
    const context = createTestContext({ cwd: directory });
    const result = await createBashTool().call(
      { command: 'echo broken >&2; exit 3' },
      context,
      testExtras,
    );
    expect(result.isError).toBe(true);
    expect(result.data?.exitCode).toBe(3);
    expect(result.content).toBe('broken\nExit code: 3');
  });

  it('kills the whole process group on timeout, grandchildren included', async () => {
    const context = createTestContext({ cwd: directory });
    const result = await createBashTool().call(
      { command: 'sleep 30 & echo pid:$!; sleep 30 & echo pid:$!; wait', timeout: 300 },
      context,
      testExtras,
    );
    expect(result.isError).toBe(true);
    expect(result.data?.timedOut).toBe(true);
    expect(result.content).toMatch(/timed out after 300 ms/);
    const pids = pidsIn(contentText(result));
    expect(pids).toHaveLength(2);
    expect(await allGone(pids)).toBe(true);
  });

  it('follows SIGTERM with SIGKILL for processes that ignore it', async () => {
    const context = createTestContext({ cwd: directory });
    const result = await createBashTool({ killGraceMs: 200 }).call(
      { command: "trap '' TERM; sleep 30 & echo pid:$!; wait", timeout: 200 },
      context,
      testExtras,
    );
    expect(result.data?.timedOut).toBe(true);
    const pids = pidsIn(contentText(result));
    expect(pids).toHaveLength(1);
    expect(await allGone(pids)).toBe(true);
  });

  it(
    'kills the group quickly when the abort signal fires mid-command',
    { timeout: 5000 },
    async () => {
      const controller = new AbortController();
      const context = createTestContext({ cwd: directory, abortController: controller });
      const pidFile = join(directory, 'pid.txt');
      const running = createBashTool().call(
        { command: `sleep 30 & echo $! > ${pidFile}; wait` },
        context,
        testExtras,
      );
      expect(
        await waitUntil(
          async () => (await readFile(pidFile, 'utf8').catch(() => '')).trim() !== '',
        ),
      ).toBe(true);
      const pid = Number((await readFile(pidFile, 'utf8')).trim());
      controller.abort();
      const error = await running.catch((caught: unknown) => caught);
      expect(DelegateError.hasCode(error, 'ABORTED')).toBe(true);
      expect(await allGone([pid])).toBe(true);
    },
  );

  it('caps long output, keeping head and tail and saying how much was cut', async () => {
    const context = createTestContext({ cwd: directory });
    const result = await createBashTool({ maxOutputBytes: 1000 }).call(
      { command: "printf 'START'; head -c 100000 /dev/zero | tr '\\0' a; printf 'END'" },
      context,
      testExtras,
    );
    expect(contentText(result).startsWith('START')).toBe(true);
    expect(result.content).toContain('END\nExit code: 0');
    expect(result.content).toContain('[… 99008 bytes of output cut from the middle …]');
    expect(result.data?.cutBytes).toBe(99008);
  });

  it('stops processes the command leaves running when it exits', async () => {
    const context = createTestContext({ cwd: directory });
    const result = await createBashTool().call(
      { command: 'sleep 30 & echo pid:$!' },
      context,
      testExtras,
    );
    expect(result.data?.exitCode).toBe(0);
    expect(await allGone(pidsIn(contentText(result)))).toBe(true);
  });

  it('rejects a timeout above ten minutes in its schema', () => {
    const tool = createBashTool();
    expect(tool.inputSchema.safeParse({ command: 'ls', timeout: 600_001 }).success).toBe(false);
    expect(tool.inputSchema.safeParse({ command: 'ls', timeout: 600_000 }).success).toBe(true);
  });

  it('treats only allow-listed read-only commands as read-only and concurrency-safe', async () => {
    const tool = createBashTool();
    // Until the bash parser is loaded nothing counts as read-only.
    if (!isShellParserLoaded()) expect(tool.isReadOnly({ command: 'ls' })).toBe(false);
    await loadShellParser();
    for (const command of [
      'ls -la',
      'cat a.txt | wc -l',
      'git status',
      'git diff HEAD~1',
      'grep -rn foo src',
    ]) {
      expect(tool.isReadOnly({ command })).toBe(true);
      expect(tool.isConcurrencySafe({ command })).toBe(true);
    }
    for (const command of [
      'rm -rf x',
      'cat a > b',
      'ls; rm x',
      'git push',
      'find . -delete',
      'echo $(rm x)',
      'ls && touch y',
      'env rm x',
      'FOO=1 cat a',
      'PAGER=rm git log',
      'cat $(rm x)',
      'git diff --output=/tmp/x',
      'find . $ACTION',
      'bash -c "ls"',
      'echo `touch y`',
      'ls | bash',
      '$CMD a',
    ]) {
      expect(tool.isReadOnly({ command })).toBe(false);
      expect(tool.isConcurrencySafe({ command })).toBe(false);
    }
    expect(tool.isReadOnly()).toBe(false);
  });
  it.each(['crashes', 'exits'])(
    'kills a foreground command and what it started when the host process %s while it runs',
    async (verb) => {
      const how = verb === 'crashes' ? 'crash' : 'exit';
      const fixture = fileURLToPath(
        new URL('./__fixtures__/crash-with-foreground-command.ts', import.meta.url),
      );
      const { code, stdout, stderr } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', fixture, how, directory],
        {
          cwd: fileURLToPath(new URL('..', import.meta.url)),
          env: {
            ...process.env,
            TSX_TSCONFIG_PATH: fileURLToPath(
              new URL('../../../tsconfig.source.json', import.meta.url),
            ),
          },
        },
      ).then(
        (done) => ({ ...done, code: 0 }),
        // A crash exits with code 1: execFile rejects, and the error still holds the output.
        (error: { code?: number; stdout?: string; stderr?: string }) => ({
          code: error.code,
          stdout: error.stdout ?? '',
          stderr: error.stderr ?? '',
        }),
      );
      if (verb === 'crashes') {
        expect(code).toBe(1);
        expect(stderr).toContain('the host crashed while its command ran');
      } else {
        expect(code).toBe(0);
      }
      const grandchild = Number(stdout.trim());
      expect(grandchild).toBeGreaterThan(0);
      expect(await allGone([grandchild])).toBe(true);
    },
  );
  it('leaves a record of a foreground command, so the next process stops it when the host was SIGKILLed', async () => {
    const fixture = fileURLToPath(
      new URL('./__fixtures__/crash-with-foreground-command.ts', import.meta.url),
    );
    // Its own temp folder: the records of this test's host only.
    const temp = await mkdtemp(join(directory, 'tmp-'));
    const env = { ...process.env, TMPDIR: temp };
    const { stdout, killedBy } = await new Promise<{ stdout: string; killedBy: string | null }>(
      (resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', fixture, 'sigkill', directory], {
          cwd: fileURLToPath(new URL('..', import.meta.url)),
          env: {
            ...env,
            TSX_TSCONFIG_PATH: fileURLToPath(
              new URL('../../../tsconfig.source.json', import.meta.url),
            ),
          },
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.on('close', (_code, signal) => resolve({ stdout: out, killedBy: signal }));
      },
    );
    expect(killedBy).toBe('SIGKILL');
    const grandchild = Number(stdout.trim());
    expect(grandchild).toBeGreaterThan(0);
    try {
      // No exit hook ran: the command outlived its host.
      expect(isProcessAlive(grandchild)).toBe(true);
      const saved = process.env['TMPDIR'];
      process.env['TMPDIR'] = temp;
      try {
        expect((await reapOrphanedShells()).length).toBe(1);
      } finally {
        if (saved === undefined) delete process.env['TMPDIR'];
        else process.env['TMPDIR'] = saved;
      }
      expect(await allGone([grandchild])).toBe(true);
    } finally {
      if (isProcessAlive(grandchild)) process.kill(grandchild, 'SIGKILL');
    }
  });
});

describe('Bash in the background', () => {
  it('registers a local_bash task at the root from an isolated context and marks it completed', async () => {
    const store = createAppStateStore();
    const child = createTestContext({ cwd: directory, store, isolated: true });
    const result = await createBashTool({ backgroundShells: registry }).call(
      {
        command: 'echo started; sleep 0.2; echo done',
        run_in_background: true,
        description: 'two echoes',
      },
      child,
      testExtras,
    );
    const taskId = result.data?.taskId ?? '';
    expect(result.content).toContain(taskId);
    const task = store.getAppState().tasks[taskId];
    expect(task).toMatchObject({
      id: taskId,
      type: 'local_bash',
      status: 'running',
      description: 'two echoes',
    });
    expect(typeof task?.kill).toBe('function');
    await registry.wait(taskId, 5000);
    expect(store.getAppState().tasks[taskId]).toMatchObject({ status: 'completed' });
    expect(store.getAppState().tasks[taskId]?.endTime).toBeGreaterThan(0);
    const output = await getBackgroundShellOutput(taskId, { registry });
    expect(output?.output).toBe('started\ndone\n');
    expect(output?.outputPath.startsWith(outputDirectory)).toBe(true);
    expect(await getBackgroundShellOutput('t000000000000', { registry })).toBeUndefined();
  });

  it('waits until the shell ends for timeoutMs Infinity, and refuses a negative one', async () => {
    const context = createTestContext({ cwd: directory });
    const result = await createBashTool({ backgroundShells: registry }).call(
      { command: 'sleep 0.3; echo finished', run_in_background: true },
      context,
      testExtras,
    );
    const taskId = result.data?.taskId ?? '';
    // Node runs a timer it cannot hold after 1 ms: this used to return the shell still running.
    expect(await registry.wait(taskId, Number.POSITIVE_INFINITY)).toMatchObject({
      status: 'completed',
    });
    await expect(registry.wait(taskId, -1)).rejects.toThrow(
      /BackgroundShellRegistry\.wait: timeoutMs must be a number of milliseconds, 0 or more/,
    );
  });

  it('writes output under backgroundOutputDirectory, readable by task id alone', async () => {
    const ownDirectory = join(directory, 'task-output');
    const store = createAppStateStore();
    const context = createTestContext({ cwd: directory, store });
    const result = await createBashTool({ backgroundOutputDirectory: ownDirectory }).call(
      { command: 'echo from-own-registry', run_in_background: true },
      context,
      testExtras,
    );
    const taskId = result.data?.taskId ?? '';
    expect(result.data?.outputPath?.startsWith(ownDirectory)).toBe(true);
    expect(await waitUntil(() => store.getAppState().tasks[taskId]?.status === 'completed')).toBe(
      true,
    );
    expect((await getBackgroundShellOutput(taskId))?.output).toBe('from-own-registry\n');
  });

  it('kills running background shells when the host process exits', async () => {
    const fixture = fileURLToPath(
      new URL('./__fixtures__/exit-with-background-shell.ts', import.meta.url),
    );
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', fixture, outputDirectory],
      {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
        // Workspace packages resolve to their source: the test needs no build.
        env: {
          ...process.env,
          TSX_TSCONFIG_PATH: fileURLToPath(
            new URL('../../../tsconfig.source.json', import.meta.url),
          ),
        },
      },
    );
    const pids = stdout.trim().split(' ').map(Number);
    expect(pids).toHaveLength(2);
    expect(await allGone(pids)).toBe(true);
  });

  it('marks a failing command failed with its exit code', async () => {
    const store = createAppStateStore();
    const context = createTestContext({ cwd: directory, store });
    const result = await createBashTool({ backgroundShells: registry }).call(
      { command: 'exit 4', run_in_background: true },
      context,
      testExtras,
    );
    const taskId = result.data?.taskId ?? '';
    await registry.wait(taskId, 5000);
    expect(store.getAppState().tasks[taskId]).toMatchObject({ status: 'failed' });
    expect(store.getAppState().tasks[taskId]?.error).toMatch(/code 4/);
  });

  it('kills the task group when the root abort signal fires', async () => {
    const root = new AbortController();
    const store = createAppStateStore();
    const context = createTestContext({ cwd: directory, store, abortController: root });
    const result = await createBashTool({ backgroundShells: registry }).call(
      { command: 'sleep 30 & echo pid:$!; wait', run_in_background: true },
      context,
      testExtras,
    );
    const taskId = result.data?.taskId ?? '';
    expect(
      await waitUntil(
        async () =>
          pidsIn((await getBackgroundShellOutput(taskId, { registry }))?.output ?? '').length === 1,
      ),
    ).toBe(true);
    const [sleepPid] = pidsIn((await getBackgroundShellOutput(taskId, { registry }))?.output ?? '');
    const shellPid = registry.get(taskId)?.pid ?? 0;
    root.abort();
    await registry.wait(taskId, 5000);
    expect(store.getAppState().tasks[taskId]).toMatchObject({ status: 'killed' });
    expect(await allGone([shellPid, sleepPid ?? 0])).toBe(true);
  });

  it('stops through the kill function stored in the task', async () => {
    const store = createAppStateStore();
    const context = createTestContext({ cwd: directory, store });
    const result = await createBashTool({ backgroundShells: registry }).call(
      { command: 'sleep 30', run_in_background: true },
      context,
      testExtras,
    );
    const taskId = result.data?.taskId ?? '';
    store.getAppState().tasks[taskId]?.kill?.();
    await registry.wait(taskId, 5000);
    expect(store.getAppState().tasks[taskId]?.status).toBe('killed');
    expect(registry.get(taskId)?.status).toBe('killed');
  });
});

describe('Bash resource bounds', () => {
  it('reads only the head and tail of a huge background log instead of loading it whole', async () => {
    const shell = await registry.start({ command: 'true', cwd: directory, description: 'nothing' });
    await registry.wait(shell.taskId, 5000);
    // A 3 GB (sparse) log: more than a Buffer can hold, so a whole-file read cannot work.
    await writeFile(shell.outputPath, 'first line\n');
    await truncate(shell.outputPath, 3_000_000_000);
    await appendFile(shell.outputPath, 'last line\n');
    const output = await getBackgroundShellOutput(shell.taskId, { registry, maxBytes: 100 });
    expect(output?.output.startsWith('first line\n')).toBe(true);
    expect(output?.output.endsWith('last line\n')).toBe(true);
    expect(output?.cutBytes).toBe(3_000_000_010 - 100);
  });

  it('keeps memory bounded for a command that prints far more than the cap', async () => {
    const result = await createBashTool({ maxOutputBytes: 1000 }).call(
      { command: 'head -c 50000000 /dev/zero | tr "\\0" x; echo; echo end' },
      createTestContext({ cwd: directory }),
      testExtras,
    );
    expect(result.data?.cutBytes).toBe(50_000_005 - 1000);
    expect(contentText(result)).toMatch(/end\nExit code: 0$/);
  });

  it('stops a background command whose log passes maxLogBytes, and says why in its task', async () => {
    const capped = new BackgroundShellRegistry({
      outputDirectory,
      killGraceMs: 200,
      maxLogBytes: 64 * 1024,
    });
    const store = createAppStateStore();
    // About 100 KB a second, for a minute unless it is stopped.
    const result = await createBashTool({ backgroundShells: capped }).call(
      {
        command: "for i in $(seq 6000); do printf '%01000d\\n' 0; sleep 0.01; done",
        run_in_background: true,
      },
      createTestContext({ cwd: directory, store }),
      testExtras,
    );
    const taskId = result.data?.taskId ?? '';
    try {
      const ended = await capped.wait(taskId, 30_000);
      expect(ended).toMatchObject({ status: 'killed' });
      expect(ended?.stopReason).toMatch(/output passed 64 KiB \(maxLogBytes\)/);
      expect(store.getAppState().tasks[taskId]).toMatchObject({ status: 'killed' });
      expect(store.getAppState().tasks[taskId]?.error).toMatch(
        /^Stopped: its output passed 64 KiB/,
      );
      // The log keeps what it wrote up to the stop.
      expect((await getBackgroundShellOutput(taskId, { registry: capped }))?.output).toMatch(
        /^0{1000}\n/,
      );
    } finally {
      await capped.dispose();
    }
  });

  it('refuses a maxLogBytes that is not a positive whole number or Infinity', () => {
    for (const maxLogBytes of [0, -1, 1.5, Number.NaN, '10']) {
      expect(
        () => new BackgroundShellRegistry({ outputDirectory, maxLogBytes: maxLogBytes as number }),
      ).toThrow(/maxLogBytes must be a whole number of bytes above 0, or Infinity/);
    }
    expect(
      () => new BackgroundShellRegistry({ outputDirectory, maxLogBytes: Infinity }),
    ).not.toThrow();
  });

  it('fails with a DelegateError when the working directory does not exist', async () => {
    const error = await createBashTool()
      .call({ command: 'true' }, createTestContext({ cwd: join(directory, 'gone') }), testExtras)
      .catch((caught: unknown) => caught);
    expect(DelegateError.hasCode(error, 'TOOL_FAILED')).toBe(true);
    expect((error as DelegateError).message).toContain(join(directory, 'gone'));
  });
});
