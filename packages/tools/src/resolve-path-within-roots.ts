import { lstat, readlink, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { DelegateError, type ToolUseContext } from '@delegate/core';

/** Where a checked path points. */
export type ResolvedPath = {
  /** The absolute path as written (normalized, symlinks not followed); used as the cache key. */
  absolutePath: string;
  /** The path with every symlink followed (for a new file, through its nearest existing ancestor). */
  realPath: string;
  /** The allowed root (real path) that contains it. */
  root: string;
};

const maxSymlinkHops = 40;

function isNotFound(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * Refuses path arguments that the file system would misread: NUL bytes, and a leading
 * `~` (Node does not expand it, so `~/x` would silently create a directory named `~`
 * inside the working directory — one a later `rm -rf ~` would turn into a disaster).
 */
function assertUsablePath(path: string): void {
  if (path.includes('\0')) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Path ${JSON.stringify(path)} contains a NUL byte; give a plain file path.`,
      { details: { path } },
    );
  }
  if (/^~(?:[\w.-]*[/\\]|$)/.test(path)) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Path ${path} starts with ~, which is not expanded here. Give an absolute path or one relative to the working directory.`,
      { details: { path } },
    );
  }
}

/** Turns file-system errors met while resolving into DelegateErrors that name the path. */
function resolutionError(error: unknown, path: string): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ELOOP') {
    return new DelegateError(
      'INVALID_ARGUMENT',
      `Path ${path} runs into a loop of symbolic links; give a path that does not go through it.`,
      { cause: error, details: { path } },
    );
  }
  if (code === 'ENAMETOOLONG') {
    return new DelegateError('INVALID_ARGUMENT', `Path ${path} is too long for the file system.`, {
      cause: error,
      details: { path },
    });
  }
  return error;
}

/**
 * Follows every symlink of `path`, also when the path (or a tail of it) does not exist
 * yet: the nearest existing ancestor is resolved and the missing tail appended. A
 * dangling symlink is followed to where it points, since writing through it would
 * create its target.
 */
export async function realPathOfPossiblyMissing(path: string, hops = 0): Promise<string> {
  if (hops > maxSymlinkHops) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Path ${path} runs into a loop of symbolic links; give a path that does not go through it.`,
      { details: { path } },
    );
  }
  try {
    return await realpath(path);
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  const stats = await lstat(path).catch(() => undefined);
  if (stats?.isSymbolicLink()) {
    const target = await readlink(path);
    return realPathOfPossiblyMissing(resolve(dirname(path), target), hops + 1);
  }
  const parent = dirname(path);
  if (parent === path) return path;
  const realParent = await realPathOfPossiblyMissing(parent, hops);
  return join(realParent, path.slice(parent.length).replace(/^[/\\]+/, ''));
}

/** True when `child` is `parent` or lies below it (both absolute and normalized). */
export function isPathInside(child: string, parent: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith(sep) ? parent : parent + sep;
  return child.startsWith(prefix);
}

/**
 * Resolves `path` (absolute, or relative to `cwd`) and checks that, with symlinks
 * followed, it stays inside one of `roots`. Throws a PATH_ESCAPE DelegateError naming
 * the path and the allowed roots otherwise.
 */
export async function resolvePathWithinRoots(options: {
  path: string;
  cwd: string;
  roots: readonly string[];
}): Promise<ResolvedPath> {
  assertUsablePath(options.path);
  const absolutePath = resolve(options.cwd, options.path);
  const realRoots = await Promise.all(
    options.roots.map((root) => realPathOfPossiblyMissing(resolve(options.cwd, root))),
  );
  let realPath: string;
  try {
    realPath = await realPathOfPossiblyMissing(absolutePath);
  } catch (error) {
    throw resolutionError(error, absolutePath);
  }
  const root = realRoots.find((candidate) => isPathInside(realPath, candidate));
  if (root === undefined) {
    const shown =
      realPath === absolutePath ? absolutePath : `${absolutePath} (which resolves to ${realPath})`;
    throw new DelegateError(
      'PATH_ESCAPE',
      `Path ${shown} is outside the allowed directories: ${realRoots.join(', ')}. ` +
        'Use a path inside one of them, or add the directory to additionalWorkingDirectories.',
      { details: { path: options.path, absolutePath, realPath, roots: realRoots } },
    );
  }
  return { absolutePath, realPath, root };
}

/** The directories file tools may touch: the cwd plus the permission context's additional directories. */
export function getAllowedRoots(context: ToolUseContext): string[] {
  const additional = context.getAppState().toolPermissionContext.additionalWorkingDirectories;
  // Absolute, so a relative cwd is not resolved against itself again (`rel/rel`).
  const cwd = resolve(context.cwd);
  return [
    cwd,
    ...additional.map((directory) => (isAbsolute(directory) ? directory : resolve(cwd, directory))),
  ];
}

/** Resolves a tool's path argument against the context's cwd and allowed roots. */
export function resolveToolPath(path: string, context: ToolUseContext): Promise<ResolvedPath> {
  return resolvePathWithinRoots({ path, cwd: context.cwd, roots: getAllowedRoots(context) });
}
