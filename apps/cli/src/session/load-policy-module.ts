import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Policy } from '@delegate/api-sim';
import { UsageError } from '../exit-codes.js';

/** Imports a simulator policy module (its default export is the policy function). */
export async function loadPolicyModule(path: string, processCwd: string): Promise<Policy> {
  const absolute = resolve(processCwd, path);
  if (!existsSync(absolute)) {
    throw new UsageError(
      `Policy module ${absolute} does not exist. Pass a .js/.mjs file whose default export is a policy, or omit the module to use the echo policy.`,
    );
  }
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(absolute).href)) as { default?: unknown };
  } catch (error) {
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new UsageError(
      `Policy module ${absolute} failed to load: ${reason}. \`node --check ${path}\` shows the line of a syntax error; fix the module, or pass another one.`,
    );
  }
  if (typeof module.default !== 'function') {
    throw new UsageError(
      `Policy module ${absolute} must export a policy function as its default export (for example \`export default rules([...])\` from @delegate/api-sim).`,
    );
  }
  return module.default as Policy;
}
