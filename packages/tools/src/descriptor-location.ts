import { existsSync } from 'node:fs';
import { type FileHandle, readlink, realpath, stat } from 'node:fs/promises';

let procAvailable: boolean | undefined;

/**
 * True when `/proc/self/fd` shows where open descriptors point (Linux). There, a path
 * `/proc/self/fd/N/name` is looked up inside the very directory descriptor N holds,
 * which gives `openat`-style calls to Node.
 */
export function hasProcDescriptors(): boolean {
  procAvailable ??= existsSync('/proc/self/fd');
  return procAvailable;
}

/** The path through an open directory descriptor: `name` looked up inside that very directory. */
export function pathInDescriptor(handle: FileHandle, name?: string): string {
  const base = `/proc/self/fd/${handle.fd}`;
  return name === undefined ? base : `${base}/${name}`;
}

const DELETED_MARK = ' (deleted)';

/**
 * The kernel adds ` (deleted)` to the link of a descriptor whose file lost its name. A file
 * can also be named `… (deleted)`: stripping the mark from a live file's link would make an
 * outside `/w/root (deleted)` read as the root `/w/root` itself. So the mark is taken off
 * only when the file has no name left (no links): its last name is where it was.
 */
async function withoutDeletedMark(link: string, handle: FileHandle): Promise<string | undefined> {
  if (!link.endsWith(DELETED_MARK)) return link;
  const stats = await handle.stat().catch(() => undefined);
  if (stats === undefined) return undefined;
  return stats.nlink === 0 ? link.slice(0, -DELETED_MARK.length) : link;
}

/**
 * Where an open descriptor really points: `/proc/self/fd` on Linux, else a fresh
 * realpath of `path` accepted only when it is the same file (device and inode).
 */
export async function descriptorLocation(
  handle: FileHandle,
  path: string,
): Promise<string | undefined> {
  if (hasProcDescriptors()) {
    const viaProc = await readlink(pathInDescriptor(handle)).catch(() => undefined);
    if (viaProc !== undefined) return withoutDeletedMark(viaProc, handle);
  }
  const [opened, again] = await Promise.all([
    handle.stat(),
    realpath(path).then(async (real) => ({ real, stats: await stat(real) })),
  ]).catch(() => [undefined, undefined] as const);
  if (opened === undefined || again === undefined) return undefined;
  const same = opened.dev === again.stats.dev && opened.ino === again.stats.ino;
  return same ? again.real : undefined;
}
