import { resolve } from 'node:path';
import { UsageError } from '../exit-codes.js';
import { readFlagFile } from './read-flag-file.js';

/**
 * The `--agents` value as an object: JSON text (`{"name": {"description": …, "prompt": …}}`,
 * as `claude --agents` takes) or the path of a file holding it. Throws a `UsageError`
 * naming what is wrong.
 */
export function readAgentsFlag(value: string, processCwd: string): Record<string, unknown> {
  const trimmed = value.trim();
  let text = trimmed;
  let where = '--agents';
  if (!trimmed.startsWith('{')) {
    const path = resolve(processCwd, trimmed);
    where = `--agents ${path}`;
    text = readFlagFile({
      flag: '--agents',
      path,
      missingHint: '--agents takes JSON text (starting with "{") or the path of a JSON file',
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${where}: not valid JSON (${(error as Error).message}).`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(
      `${where}: expected an object of agents, such as {"reviewer": {"description": "…", "prompt": "…"}}.`,
    );
  }
  return parsed as Record<string, unknown>;
}
