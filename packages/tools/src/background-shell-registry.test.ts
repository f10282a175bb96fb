import { readFileSync, readlinkSync } from 'node:fs';
import {
  chmod,
  chown,
  lstat,
  mkdir,
  readFile,
  readdir,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
import { isProcessAlive, waitUntil } from './__fixtures__/process-liveness.js';
import { createTempDirectory, removeTempDirectory } from './__fixtures__/test-context.js';
import {
  BackgroundShellRegistry,
  STALE_BACKGROUND_LOG_MS,
  createLogFile,
  defaultBackgroundOutputDirectory,
  getBackgroundShellOutput,
  registriesHoldingShells,
  releaseBackgroundShell,
} from './background-shell-registry.js';
import { processStartTime, shellRecordDirectory } from './shell-records.js';

let temp: string;
let savedTmpdir: string | undefined;
const registries: BackgroundShellRegistry[] = [];

// Every registry of a test is disposed after it, so no shell outlives the test.
function newRegistry(outputDirectory?: string): BackgroundShellRegistry {
  const registry = new BackgroundShellRegistry({
    killGraceMs: 200,
    ...(outputDirectory === undefined ? {} : { outputDirectory }),
  });
  registries.push(registry);
  return registry;
}

const mode = async (path: string): Promise<number> => (await lstat(path)).mode & 0o777;
const exists = (path: string): Promise<boolean> =>
  lstat(path).then(
    () => true,
    () => false,
  );

beforeEach(async () => {
  temp = await createTempDirectory('delegate-bgshell-');
  // os.tmpdir() reads TMPDIR on every call: the default directory lands inside the test's folder.
  savedTmpdir = process.env['TMPDIR'];
  process.env['TMPDIR'] = temp;
});
afterEach(async () => {
  await Promise.all(registries.splice(0).map((registry) => registry.dispose()));
  if (savedTmpdir === undefined) delete process.env['TMPDIR'];
  else process.env['TMPDIR'] = savedTmpdir;
  await removeTempDirectory(temp);
});

describe('the default output directory', () => {
  it('is a directory of this user under the temp folder, mode 0700, with logs of mode 0600', async () => {
    const previousUmask = process.umask(0);
    try {
      const registry = newRegistry();
      const shell = await registry.start({ command: 'echo secret', cwd: temp, description: 'x' });
      await registry.wait(shell.taskId, 5000);
      const base = join(temp, `delegate-${process.getuid!()}`);
      expect(registry.outputDirectory).toBe(join(base, 'tasks'));
      expect(defaultBackgroundOutputDirectory()).toBe(join(base, 'tasks'));
      expect(shell.outputPath).toBe(join(base, 'tasks', `${shell.taskId}.log`));
      expect(await mode(base)).toBe(0o700);
      expect(await mode(join(base, 'tasks'))).toBe(0o700);
      expect(await mode(shell.outputPath)).toBe(0o600);
      expect(await readFile(shell.outputPath, 'utf8')).toBe('secret\n');
    } finally {
      process.umask(previousUmask);
    }
  });

  it.each([
    ['the per-user directory', ''],
    ['its tasks directory', 'tasks'],
  ])('is refused when %s is open to other users', async (_what, below) => {
    const base = join(temp, `delegate-${process.getuid!()}`);
    const path = join(base, below);
    await mkdir(base, { mode: 0o700 });
    await mkdir(path, { recursive: true });
    await chmod(path, 0o777);
    const registry = newRegistry();
    const error = await registry
      .start({ command: 'echo secret', cwd: temp, description: 'x' })
      .catch((caught: unknown) => caught);
    expect(DelegateError.hasCode(error, 'FILE_SYSTEM_ERROR')).toBe(true);
    expect((error as Error).message).toContain(
      `The background shell output directory ${path} is open to other users (mode 0777)`,
    );
    expect(registry.list()).toEqual([]);
  });

  it('is refused when it is a symbolic link, even to a private directory of this user', async () => {
    const elsewhere = join(temp, 'elsewhere');
    await mkdir(elsewhere, { mode: 0o700 });
    const base = join(temp, `delegate-${process.getuid!()}`);
    await symlink(elsewhere, base);
    const error = await newRegistry()
      .start({ command: 'echo secret', cwd: temp, description: 'x' })
      .catch((caught: unknown) => caught);
    expect((error as Error).message).toContain(`${base} is a symbolic link`);
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it.runIf(process.getuid?.() === 0)('is refused when another user owns it', async () => {
    const base = join(temp, `delegate-${process.getuid!()}`);
    await mkdir(base, { mode: 0o700 });
    await chown(base, 65534, 65534);
    const error = await newRegistry()
      .start({ command: 'echo secret', cwd: temp, description: 'x' })
      .catch((caught: unknown) => caught);
    expect((error as Error).message).toContain(`${base} belongs to another user (uid 65534`);
  });

  it('prunes only stale task logs on the first start, never following a symlink', async () => {
    const directory = join(temp, `delegate-${process.getuid!()}`, 'tasks');
    await mkdir(directory, { recursive: true, mode: 0o700 });
    const old = (Date.now() - STALE_BACKGROUND_LOG_MS - 60_000) / 1000;
    const target = join(temp, 'target.log');
    await writeFile(target, 'not a log of ours');
    const files = {
      stale: join(directory, 't000000000001.log'),
      recent: join(directory, 't000000000002.log'),
      notALog: join(directory, 'notes.txt'),
      almostALog: join(directory, 't000000000003.log.bak'),
      link: join(directory, 't000000000004.log'),
      folder: join(directory, 't000000000005.log'),
    };
    for (const path of [files.stale, files.recent, files.notALog, files.almostALog])
      await writeFile(path, 'old output');
    await symlink(target, files.link);
    await mkdir(files.folder);
    for (const path of [files.stale, files.notALog, files.almostALog, files.folder, target])
      await utimes(path, old, old);
    const registry = newRegistry();
    const shell = await registry.start({ command: 'true', cwd: temp, description: 'x' });
    await registry.wait(shell.taskId, 5000);
    expect(await exists(files.stale)).toBe(false);
    for (const path of [files.recent, files.notALog, files.almostALog, files.link, files.folder])
      expect(await exists(path)).toBe(true);
    expect(await readFile(target, 'utf8')).toBe('not a log of ours');
  });
});

describe('log files', () => {
  it('are created exclusively: a symlink planted at the path is not followed', async () => {
    const target = join(temp, 'victim');
    await writeFile(target, 'keep me');
    const planted = join(temp, 't0000000000aa.log');
    await symlink(target, planted);
    const error = await createLogFile(planted).catch((caught: unknown) => caught);
    expect(DelegateError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(`${planted} already exists`);
    expect(await readFile(target, 'utf8')).toBe('keep me');
    // A dangling symlink is not followed either (it would create its target).
    const dangling = join(temp, 't0000000000bb.log');
    await symlink(join(temp, 'created-through-link'), dangling);
    await expect(createLogFile(dangling)).rejects.toThrow(/already exists/);
    expect(await exists(join(temp, 'created-through-link'))).toBe(false);
  });

  it('are mode 0600 in a directory the caller gives, which is created 0700 when missing', async () => {
    const given = join(temp, 'given', 'output');
    const registry = newRegistry(given);
    const shell = await registry.start({ command: 'echo hi', cwd: temp, description: 'x' });
    await registry.wait(shell.taskId, 5000);
    expect(shell.outputPath).toBe(join(given, `${shell.taskId}.log`));
    expect(await mode(given)).toBe(0o700);
    expect(await mode(shell.outputPath)).toBe(0o600);
    // An existing directory the caller chose is used as it is, not checked like the default one.
    const shared = join(temp, 'shared');
    await mkdir(shared);
    await chmod(shared, 0o755);
    const other = newRegistry(shared);
    const second = await other.start({ command: 'echo hi', cwd: temp, description: 'x' });
    await other.wait(second.taskId, 5000);
    expect(await mode(second.outputPath)).toBe(0o600);
    expect((await getBackgroundShellOutput(second.taskId))?.output).toBe('hi\n');
  });
});

describe('release and dispose', () => {
  it('keep a finished shell readable until dispose, which deletes every log', async () => {
    const registry = newRegistry(join(temp, 'out'));
    const done = await registry.start({ command: 'echo finished', cwd: temp, description: 'x' });
    await registry.wait(done.taskId, 5000);
    const running = await registry.start({
      command: 'echo started; exec sleep 30',
      cwd: temp,
      description: 'y',
    });
    expect(await waitUntil(async () => (await stat(running.outputPath)).size > 0)).toBe(true);
    expect((await getBackgroundShellOutput(done.taskId))?.output).toBe('finished\n');

    await registry.dispose();
    expect(await exists(done.outputPath)).toBe(false);
    expect(await exists(running.outputPath)).toBe(false);
    expect(await getBackgroundShellOutput(done.taskId)).toBeUndefined();
    expect(await waitUntil(() => !isProcessAlive(running.pid ?? 0))).toBe(true);
    const error = await registry
      .start({ command: 'true', cwd: temp, description: 'z' })
      .catch((caught: unknown) => caught);
    expect(DelegateError.hasCode(error, 'ABORTED')).toBe(true);
    expect((error as Error).message).toMatch(/was disposed and starts no more shells/);
  });

  it('releases one shell by task id, in whichever registry started it', async () => {
    const registry = newRegistry(join(temp, 'out'));
    const first = await registry.start({ command: 'echo one', cwd: temp, description: 'x' });
    const second = await registry.start({ command: 'echo two', cwd: temp, description: 'y' });
    await registry.wait(first.taskId, 5000);
    await registry.wait(second.taskId, 5000);
    expect(await releaseBackgroundShell(first.taskId)).toBe(true);
    expect(await releaseBackgroundShell(first.taskId)).toBe(false);
    expect(await exists(first.outputPath)).toBe(false);
    expect(registry.has(first.taskId)).toBe(false);
    expect((await getBackgroundShellOutput(second.taskId))?.output).toBe('two\n');
  });

  it('releases a running shell once it has ended: killed, its onEnd called, its process gone', async () => {
    const registry = newRegistry(join(temp, 'out'));
    const ended: string[] = [];
    const shell = await registry.start({
      command: 'exec sleep 30',
      cwd: temp,
      description: 'long',
      onEnd: (state) => ended.push(state.status),
    });
    expect(await releaseBackgroundShell(shell.taskId)).toBe(true);
    // Nothing awaited since: the release itself waited for the end.
    expect(ended).toEqual(['killed']);
    expect(isProcessAlive(shell.pid ?? 0)).toBe(false);
    expect(await exists(shell.outputPath)).toBe(false);
  });

  it('lets go of a registry once its last shell is released, and takes it back at its next start', async () => {
    const before = registriesHoldingShells();
    const registry = newRegistry(join(temp, 'out'));
    expect(registriesHoldingShells()).toBe(before);
    const shell = await registry.start({ command: 'echo one', cwd: temp, description: 'x' });
    expect(registriesHoldingShells()).toBe(before + 1);
    await registry.wait(shell.taskId, 5000);
    expect(await releaseBackgroundShell(shell.taskId)).toBe(true);
    expect(registriesHoldingShells()).toBe(before);
    const again = await registry.start({ command: 'echo two', cwd: temp, description: 'y' });
    expect((await getBackgroundShellOutput(again.taskId))?.taskId).toBe(again.taskId);
    expect(registriesHoldingShells()).toBe(before + 1);
  });
});

/** Runs a fixture script of `__fixtures__` in a process of its own, under the test's TMPDIR. */
function spawnFixture(name: string): ChildProcessByStdio<null, Readable, null> {
  const fixture = fileURLToPath(new URL(`./__fixtures__/${name}`, import.meta.url));
  return spawn(process.execPath, ['--import', 'tsx', fixture], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    env: {
      ...process.env,
      TMPDIR: temp,
      // Workspace packages resolve to their source: the test needs no build.
      TSX_TSCONFIG_PATH: fileURLToPath(new URL('../../../tsconfig.source.json', import.meta.url)),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

describe.runIf(process.platform === 'linux')('kill', () => {
  it('SIGKILLs what ignores SIGTERM once the grace has passed', async () => {
    const registry = newRegistry();
    const shell = await registry.start({
      command: "trap '' TERM; sleep 30 & echo pid:$!; wait",
      cwd: temp,
      description: 'ignores SIGTERM',
    });
    const printed = await waitUntil(
      async () => /pid:\d+/.test(await readFile(shell.outputPath, 'utf8')),
      10_000,
    );
    expect(printed).toBe(true);
    const childPid = Number(/pid:(\d+)/.exec(await readFile(shell.outputPath, 'utf8'))?.[1]);
    expect(registry.kill(shell.taskId)).toBe(true);
    expect(await waitUntil(() => !isProcessAlive(childPid), 10_000)).toBe(true);
    expect((await registry.wait(shell.taskId, 5000))?.status).toBe('killed');
  });

  it('keeps no timer for the grace once the group has ended, so the host exits at once', async () => {
    const host = spawnFixture('kill-shell-then-exit.ts');
    let stdout = '';
    host.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    let exitedAt = 0;
    const exited = new Promise<void>((resolve) =>
      host.once('exit', () => {
        exitedAt = Date.now();
        resolve();
      }),
    );
    // The kill grace is 60 s: a process still running 20 s after its shell ended waits for it.
    const inTime = await waitUntil(() => exitedAt !== 0, 40_000);
    if (!inTime) host.kill('SIGKILL');
    await exited;
    const [status, endedAt] = stdout.trim().split(' ');
    expect(status).toBe('killed');
    expect(exitedAt - Number(endedAt)).toBeLessThan(20_000);
  }, 60_000);
});

/** Runs the SIGKILL fixture, kills it once its shell runs, and returns the shell's and its child's pids. */
async function orphanShell(): Promise<{ shellPid: number; childPid: number }> {
  const host = spawnFixture('sigkill-with-background-shell.ts');
  let stdout = '';
  host.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const exited = new Promise((resolve) => host.once('exit', resolve));
  const printed = await waitUntil(() => stdout.includes('\n'), 20_000);
  host.kill('SIGKILL');
  await exited;
  expect(printed).toBe(true);
  const [shellPid, childPid] = stdout.trim().split(' ').map(Number);
  return { shellPid: shellPid!, childPid: childPid! };
}

function recordOf(fields: Record<string, unknown>): string {
  const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  const pidNamespace = readlinkSync('/proc/self/ns/pid');
  return JSON.stringify({ bootId, pidNamespace, ...fields });
}

describe.runIf(process.platform === 'linux')('shells of a host killed with SIGKILL', () => {
  it('are stopped by the next registry that starts a shell, and their record deleted', async () => {
    const { shellPid, childPid } = await orphanShell();
    // The exit hook never ran: the shell and its child survive their host.
    expect(isProcessAlive(shellPid)).toBe(true);
    expect(isProcessAlive(childPid)).toBe(true);
    const records = shellRecordDirectory();
    expect(await readdir(records)).toHaveLength(1);

    const registry = newRegistry();
    const shell = await registry.start({ command: 'true', cwd: temp, description: 'x' });
    await registry.wait(shell.taskId, 5000);
    expect(await waitUntil(() => !isProcessAlive(shellPid) && !isProcessAlive(childPid))).toBe(
      true,
    );
    expect(await waitUntil(async () => (await readdir(records)).length === 0)).toBe(true);
  });

  it('never kills a process whose pid matches but whose start time does not', async () => {
    const stranger = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const gone = spawn('true');
    await new Promise((resolve) => gone.once('exit', resolve));
    try {
      const pid = stranger.pid!;
      const start = processStartTime(pid)!;
      const records = shellRecordDirectory();
      await mkdir(records, { recursive: true, mode: 0o700 });
      // A dead host; the pid now belongs to a process that started at another time.
      const reused = join(records, 't0000000000c1.json');
      await writeFile(
        reused,
        recordOf({ hostPid: gone.pid, hostStart: 1, pid, start: start + 1 }),
        { mode: 0o600 },
      );
      // A live host (this process): its shells are its own business.
      const live = join(records, 't0000000000c2.json');
      await writeFile(
        live,
        recordOf({ hostPid: process.pid, hostStart: processStartTime(process.pid), pid, start }),
        { mode: 0o600 },
      );
      // Written by someone else's hand: a record others could write is not trusted.
      const writable = join(records, 't0000000000c3.json');
      await writeFile(writable, recordOf({ hostPid: gone.pid, hostStart: 1, pid, start }));
      await chmod(writable, 0o666);

      const registry = newRegistry();
      const shell = await registry.start({ command: 'true', cwd: temp, description: 'x' });
      await registry.wait(shell.taskId, 5000);
      expect(isProcessAlive(pid)).toBe(true);
      expect(await exists(reused)).toBe(false);
      expect(await exists(live)).toBe(true);
      expect(await exists(writable)).toBe(true);
    } finally {
      stranger.kill('SIGKILL');
    }
  });
});
