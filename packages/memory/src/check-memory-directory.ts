import { lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { type AgentMemoryScope, DelegateError, checkObject, checkString } from '@delegate/core';
import { systemErrorCode } from './file-system-error.js';

/** What {@link checkMemoryDirectory} checks. */
export interface MemoryDirectoryCheck {
  /** The scope the folder belongs to. */
  scope: AgentMemoryScope;
  /** The scope root (from `getAgentMemoryRoot`). */
  root: string;
  /** The agent's memory folder (from `getAgentMemoryDir`). */
  directory: string;
  /** The project directory, which `project` and `local` memory must stay inside. */
  cwd: string;
  /** Accept an agent folder that is a symbolic link (clearing removes the link, not its target). */
  folderMayBeLink?: boolean;
}

function isInside(parent: string, child: string): boolean {
  const path = relative(parent, child);
  return path === '' || (!path.startsWith('..') && !isAbsolute(path));
}

// The real path of `path` (links resolved) for the part that exists, with the rest appended.
/** The real path of `path` (links resolved) for the part that exists, with the rest appended. */
export function realPathOfNearest(path: string): string {
  const missing: string[] = [];
  let current = resolve(path);
  for (;;) {
    try {
      return join(realpathSync(current), ...missing.reverse());
    } catch (error) {
      const code = systemErrorCode(error);
      const parent = dirname(current);
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || parent === current) throw error;
      missing.push(basename(current));
      current = parent;
    }
  }
}

function escape(check: MemoryDirectoryCheck, reason: string, target: string): DelegateError {
  return new DelegateError(
    'PATH_ESCAPE',
    `Refusing to use the ${check.scope} memory folder "${check.directory}": ${reason}. ` +
      'Agent memory never follows a symbolic link out of its root; replace the link with a real folder.',
    { details: { scope: check.scope, root: check.root, directory: check.directory, target } },
  );
}

/**
 * Throws a DelegateError (PATH_ESCAPE) when following symbolic links would take an agent's
 * memory folder somewhere else: when the agent folder itself is a symbolic link, or, for
 * `project` and `local` memory, when the scope root resolves outside the project (a cloned
 * repository could link `.claude/agent-memory` to any folder). The `user` root may be a link,
 * since the user owns it; a `project` or `local` root must not be a link at all (nor lie
 * behind one), even to a folder inside the project. A missing folder passes.
 */
export function checkMemoryDirectory(check: MemoryDirectoryCheck): void {
  checkObject('checkMemoryDirectory()', 'check', check);
  for (const field of ['root', 'directory', 'cwd'] as const) {
    checkString('checkMemoryDirectory()', `check.${field}`, check[field]);
  }
  if (check.scope !== 'user') {
    const realProject = realPathOfNearest(check.cwd);
    const realRoot = realPathOfNearest(check.root);
    if (!isInside(realProject, realRoot)) {
      throw escape(
        check,
        `its root resolves to "${realRoot}", outside the project "${realProject}"`,
        realRoot,
      );
    }
    // Inside the project is not enough: `.claude/agent-memory -> ../.git` would put an agent
    // `hooks`'s memory, which it writes without asking, in `.git/hooks`.
    const expected = join(realProject, relative(resolve(check.cwd), resolve(check.root)));
    if (isInside(realProject, expected) && realRoot !== expected) {
      throw escape(
        check,
        `its root resolves to "${realRoot}" instead of "${expected}" (a symbolic link on the way)`,
        realRoot,
      );
    }
  }
  if (check.folderMayBeLink === true) return;
  try {
    if (lstatSync(check.directory).isSymbolicLink()) {
      throw escape(check, 'it is a symbolic link', check.directory);
    }
  } catch (error) {
    if (error instanceof DelegateError) throw error;
    const code = systemErrorCode(error);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
  }
}

/**
 * The real path an agent's memory folder must have once `checkMemoryDirectory` passed:
 * the scope root with links resolved, plus the folder's own name (which is no link).
 */
export function expectedRealDirectory(check: MemoryDirectoryCheck): string {
  return join(realPathOfNearest(check.root), basename(check.directory));
}
