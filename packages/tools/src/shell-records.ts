// Records of running background shells, so that a later registry can stop the shells of a
// host that was killed (SIGKILL, a crash) before its exit hook could. Linux only: a process is
// identified by its pid and its start time in /proc, so a reused pid is never taken for it.
import { readFileSync, readlinkSync, unlinkSync } from 'node:fs';
import { lstat, open, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { killProcessGroup } from './process-group.js';
import {
  EXCLUSIVE_CREATE_FLAGS,
  ensurePrivateDirectory,
  isPrivateDirectory,
  privateTempDirectory,
} from './private-directory.js';

/** What a record of a running shell says. */
export type ShellRecord = {
  /** Kernel boot id: start times count from that boot. */
  bootId: string;
  /** Pid namespace of the host (`/proc/self/ns/pid`): pids mean nothing in another one. */
  pidNamespace: string;
  /** Pid and start time of the host process that started the shell. */
  hostPid: number;
  hostStart: number;
  /** Pid and start time of the shell, leader of its process group. */
  pid: number;
  start: number;
};

const RECORD_NAME = /^t[0-9a-f]{12}\.json$/;

/**
 * Start time of a live process (clock ticks since boot, field 22 of `/proc/<pid>/stat`), or
 * undefined when there is no such process, it is a zombie, or there is no /proc.
 */
export function processStartTime(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces or parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    const start = Number(fields[19]);
    return Number.isSafeInteger(start) && start >= 0 ? start : undefined;
  } catch {
    return undefined;
  }
}

type HostIdentity = { bootId: string; pidNamespace: string; hostPid: number; hostStart: number };
let host: HostIdentity | null | undefined;

/** This process as records name it, or null where there is no /proc. */
function hostIdentity(): HostIdentity | null {
  if (host !== undefined && host?.hostPid === process.pid) return host;
  try {
    const hostStart = processStartTime(process.pid);
    host =
      hostStart === undefined
        ? null
        : {
            bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
            pidNamespace: readlinkSync('/proc/self/ns/pid'),
            hostPid: process.pid,
            hostStart,
          };
  } catch {
    host = null;
  }
  return host;
}

/** Where records are kept: `<os.tmpdir()>/delegate-<uid>/shells`, whatever a registry's output directory. */
export function shellRecordDirectory(): string {
  return join(privateTempDirectory(), 'shells');
}

/**
 * Records the running shell `pid` of task `taskId`; returns the record's path, or undefined when
 * there can be no record (no /proc, the shell already gone, the private directory refused). A
 * record is best effort: it never stops a shell from starting.
 */
export async function writeShellRecord(taskId: string, pid: number): Promise<string | undefined> {
  const identity = hostIdentity();
  const start = processStartTime(pid);
  if (identity === null || start === undefined) return undefined;
  const directory = shellRecordDirectory();
  const path = join(directory, `${taskId}.json`);
  try {
    await ensurePrivateDirectory(join(directory, '..'));
    await ensurePrivateDirectory(directory);
    const handle = await open(path, EXCLUSIVE_CREATE_FLAGS, 0o600);
    try {
      const record: ShellRecord = { ...identity, pid, start };
      await handle.writeFile(JSON.stringify(record));
    } finally {
      await handle.close();
    }
    return path;
  } catch {
    await unlink(path).catch(() => undefined);
    return undefined;
  }
}

/** Deletes a record (gone already is fine). */
export async function removeShellRecord(path: string): Promise<void> {
  await unlink(path).catch(() => undefined);
}

/** Deletes a record at once, for the host's `exit` hook. */
export function removeShellRecordSync(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already, or never to be read: a later registry deletes it.
  }
}

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

function parseRecord(text: string): ShellRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const record = value as Partial<ShellRecord> | null;
  if (
    typeof record?.bootId !== 'string' ||
    typeof record.pidNamespace !== 'string' ||
    !isCount(record.hostPid) ||
    !isCount(record.hostStart) ||
    !isCount(record.pid) ||
    !isCount(record.start)
  )
    return undefined;
  return record as ShellRecord;
}

/**
 * Stops the shells of dead hosts. For each record in the private record directory whose host
 * process is gone (no process with its pid and start time), the shell's process group is killed
 * (SIGKILL) when its leader still runs with the recorded start time (a reused pid has another
 * one and is left alone), and the record is deleted. Records of another boot are deleted; those
 * of another pid namespace, of a live host or that cannot be read are left. Reads only regular
 * files of this user in a private directory. Returns the pids of the groups killed.
 */
export async function reapOrphanedShells(): Promise<number[]> {
  const identity = hostIdentity();
  const directory = shellRecordDirectory();
  if (identity === null) return [];
  if (!(await isPrivateDirectory(join(directory, '..'))) || !(await isPrivateDirectory(directory)))
    return [];
  const uid = process.getuid?.();
  const killed: number[] = [];
  for (const name of await readdir(directory).catch(() => [] as string[])) {
    if (!RECORD_NAME.test(name)) continue;
    const path = join(directory, name);
    const stats = await lstat(path).catch(() => undefined);
    if (stats === undefined || !stats.isFile() || stats.size > 4096) continue;
    if (uid !== undefined && (stats.uid !== uid || (stats.mode & 0o022) !== 0)) continue;
    const record = parseRecord(await readFile(path, 'utf8').catch(() => ''));
    if (record === undefined) continue;
    if (record.bootId !== identity.bootId) {
      await removeShellRecord(path);
      continue;
    }
    if (record.pidNamespace !== identity.pidNamespace) continue;
    if (processStartTime(record.hostPid) === record.hostStart) continue;
    if (processStartTime(record.pid) === record.start && killProcessGroup(record.pid, 'SIGKILL'))
      killed.push(record.pid);
    await removeShellRecord(path);
  }
  return killed;
}
