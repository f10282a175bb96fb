import { existsSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Policy } from '@delegate/api-sim';
import { UsageError } from '../exit-codes.js';

/** Extensions of TypeScript modules, which Node.js 20 imports only under a TypeScript loader. */
const TYPESCRIPT_EXTENSIONS = new Set(['.ts', '.mts', '.cts']);

/** What a failed import of a policy module says to do. */
function loadFailureHint(path: string, error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (TYPESCRIPT_EXTENSIONS.has(extname(path)) && code === 'ERR_UNKNOWN_FILE_EXTENSION') {
    return `Node.js ${process.version} cannot import a TypeScript module without a loader. Compile it to JavaScript (${path} to a .mjs file, for example with tsc or esbuild) and pass that, or run delegate with a TypeScript loader: NODE_OPTIONS="--import tsx" delegate …`;
  }
  return `\`node --check ${path}\` shows the line of a syntax error; fix the module, or pass another one.`;
}

/**
 * Imports a simulator policy module (its default export is the policy function). `flag` is
 * where the path came from (`--sim`, `--policy`): an error names it.
 */
export async function loadPolicyModule(options: {
  path: string;
  processCwd: string;
  flag: '--sim' | '--policy';
}): Promise<Policy> {
  const { path, flag } = options;
  const absolute = resolve(options.processCwd, path);
  // `--sim` takes its next word for a module only by its extension: the prompt may have been meant.
  const taken =
    flag === '--sim'
      ? `--sim took "${path}" for a policy module (a single word ending in ${extname(path)}); to run it as the prompt, put the prompt before --sim (delegate run "<prompt>" --sim). `
      : '';
  if (!existsSync(absolute)) {
    throw new UsageError(
      `${taken}Policy module ${absolute} does not exist. Pass a .js/.mjs file whose default export is a policy, or omit the module to use the echo policy.`,
    );
  }
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(absolute).href)) as { default?: unknown };
  } catch (error) {
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new UsageError(
      `Policy module ${absolute} failed to load: ${reason}. ${loadFailureHint(path, error)}`,
    );
  }
  if (typeof module.default !== 'function') {
    throw new UsageError(
      `Policy module ${absolute} must export a policy function as its default export (for example \`export default rules([...])\` from @delegate/api-sim).`,
    );
  }
  return module.default as Policy;
}
