import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { DelegateError, errorMessage } from '@delegate/core';

/** True when `path` is `root` or lies below it (both real, absolute paths). */
export function isInside(root: string, path: string): boolean {
  const between = relative(root, path);
  // `..foo` is a name inside the root; only a first segment that is `..` itself leaves it.
  return (
    between === '' || (between !== '..' && !between.startsWith(`..${sep}`) && !isAbsolute(between))
  );
}

function refuse(field: string, message: string): never {
  throw new DelegateError('PATH_ESCAPE', `${field}: ${message}`, { details: { field } });
}

/**
 * Resolves a requested workspace to a real directory inside one of `roots` (real paths).
 * A relative path is taken from the first root; `..` segments, paths outside every root
 * (refused the same way whether or not they exist, before the file system is asked) and
 * symbolic links that end outside every root are refused, as are missing paths and files
 * inside a root.
 */
export async function resolveWorkspace(options: {
  requested: string | undefined;
  roots: readonly string[];
  /**
   * The roots as configured (absolute, before symbolic links were followed), when they may
   * differ from `roots`: a path written under one of them is inside too.
   */
  configuredRoots?: readonly string[];
  /** Field name for errors (`workspace`). */
  field?: string;
}): Promise<string> {
  const field = options.field ?? 'workspace';
  const [first] = options.roots;
  if (first === undefined) refuse(field, 'no workspace root is configured (--workspace-root).');
  const requested = options.requested ?? first;
  if (requested.includes('\0')) refuse(field, 'the path contains a NUL byte.');
  if (requested.split(/[\\/]+/).includes('..')) {
    refuse(
      field,
      `"${requested}" contains "..": give a path inside a workspace root without "..".`,
    );
  }
  const absolute = resolve(first, requested);
  const outside = (): never =>
    refuse(
      field,
      `"${requested}" is outside the workspace roots (${options.roots.join(', ')}). Use a directory inside one of them, or start the server with another --workspace-root.`,
    );
  // Refused before the file system is asked: the answer must not tell whether a path outside
  // the roots exists.
  const written = [...options.roots, ...(options.configuredRoots ?? [])];
  if (!written.some((root) => isInside(root, absolute))) outside();
  let real: string;
  try {
    real = await realpath(absolute);
  } catch (error) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${field}: "${requested}" does not exist (${errorMessage(error)}). Create the directory inside a workspace root first.`,
      { details: { field } },
    );
  }
  // Checked on the real path too, so a symbolic link that points outside is refused.
  if (!options.roots.some((root) => isInside(root, real))) outside();
  if (!(await stat(real)).isDirectory()) {
    throw new DelegateError('INVALID_ARGUMENT', `${field}: "${requested}" is not a directory.`, {
      details: { field },
    });
  }
  return real;
}

/**
 * Checks, before each turn of a run, that its workspace (the real path `POST /v1/runs`
 * resolved) is still that real directory inside `roots`: a directory on its path replaced
 * by a symbolic link since (a pull, a checkout, a hostile script) would move the turn
 * elsewhere. A PATH_ESCAPE naming the run's workspace when it leads somewhere else now;
 * otherwise the refusals of {@link resolveWorkspace} (gone, outside the roots, not a folder).
 */
export async function checkRunWorkspace(
  workspace: string,
  roots: readonly string[],
): Promise<void> {
  const real = await realpath(workspace).catch(() => undefined);
  if (real !== undefined && real !== workspace)
    refuse(
      'workspace',
      `the run's workspace ${workspace} now leads to ${real} (a directory on its path was replaced, by a symbolic link or a move), so no more turns run in it. Start a new run.`,
    );
  await resolveWorkspace({ requested: workspace, roots });
}
