import { homedir } from 'node:os';
import { isAbsolute, join, resolve, sep } from 'node:path';
import {
  type AgentMemoryScope,
  DelegateError,
  invalidArgument,
  checkOptionalObject,
} from '@delegate/core';

/** Where agent memory lives; every field is optional. */
export interface AgentMemoryPathOptions {
  /** The project directory for `project` and `local` memory. Defaults to `process.cwd()`. */
  cwd?: string;
  /** The user's home directory. Defaults to `os.homedir()`; a relative path is taken from `cwd`. */
  homeDir?: string;
  /**
   * The folder that holds `agent-memory/` for `user` memory. Defaults to
   * `<homeDir>/<rootDirName>`; a relative path is taken from `cwd`.
   */
  memoryBase?: string;
  /** The configuration folder name inside the project and the home directory. Defaults to `.claude`. */
  rootDirName?: string;
}

/** The default configuration folder name. */
export const DEFAULT_ROOT_DIR_NAME = '.claude';

/** Every memory scope, in listing order. */
export const AGENT_MEMORY_SCOPES: readonly AgentMemoryScope[] = ['user', 'project', 'local'];

function checkRootDirName(rootDirName: string): string {
  if (typeof rootDirName !== 'string') {
    throw invalidArgument({
      where: 'getAgentMemoryRoot()',
      option: 'options.rootDirName',
      expected: 'a folder name such as ".claude"',
      value: rootDirName,
    });
  }
  if (
    rootDirName.length === 0 ||
    rootDirName === '.' ||
    rootDirName === '..' ||
    /[/\\\0]/.test(rootDirName)
  ) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `The memory root folder name "${rootDirName}" is not a single folder name. ` +
        'Pass a plain name such as ".claude" (no slashes, not "." or "..").',
      { details: { rootDirName } },
    );
  }
  return rootDirName;
}

type PathOptionName = 'cwd' | 'homeDir' | 'memoryBase';

function checkPathOption(name: PathOptionName, value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== 'string' || value.includes('\0')) {
    const got =
      typeof value === 'string'
        ? 'a path with a NUL byte'
        : `a ${value === null ? 'null' : typeof value}`;
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `options.${name} of agent memory must be a path without NUL bytes; got ${got}. ` +
        `Pass a folder path, or leave ${name} out for the default.`,
      { details: { option: name } },
    );
  }
}

// `os.homedir()` is `$HOME` as set: an empty or relative one would put the user's memory
// inside the working directory, where a cloned repository decides what the folder links to.
function knownHome(): string {
  const home = homedir();
  if (isAbsolute(home)) return home;
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `User memory needs the home directory, and it is not known: HOME is ${home === '' ? 'empty' : `"${home}", not an absolute path`}. Set HOME, or pass homeDir or memoryBase.`,
    { details: { home } },
  );
}

/**
 * Returns the absolute folder that holds every agent's memory folder for one scope
 * (no trailing separator): `<memoryBase>/agent-memory` for `user`,
 * `<cwd>/<root>/agent-memory` for `project`, `<cwd>/<root>/agent-memory-local` for `local`.
 */
export function getAgentMemoryRoot(
  scope: AgentMemoryScope,
  options: AgentMemoryPathOptions = {},
): string {
  checkOptionalObject('getAgentMemoryRoot()', 'options', options);
  const rootDirName = checkRootDirName(options.rootDirName ?? DEFAULT_ROOT_DIR_NAME);
  checkPathOption('cwd', options.cwd);
  checkPathOption('homeDir', options.homeDir);
  checkPathOption('memoryBase', options.memoryBase);
  const cwd = resolve(options.cwd ?? process.cwd());
  let root: string;
  switch (scope) {
    case 'user': {
      const memoryBase = options.memoryBase ?? join(options.homeDir ?? knownHome(), rootDirName);
      root = join(resolve(cwd, memoryBase), 'agent-memory');
      break;
    }
    case 'project':
      root = join(cwd, rootDirName, 'agent-memory');
      break;
    case 'local':
      root = join(cwd, rootDirName, 'agent-memory-local');
      break;
    default: {
      const unknownScope: never = scope;
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `Unknown agent memory scope "${String(unknownScope)}". Use "user", "project" or "local".`,
        { details: { scope: unknownScope } },
      );
    }
  }
  return root.length > 1 && root.endsWith(sep) ? root.slice(0, -1) : root;
}
