import { stat } from 'node:fs/promises';
import { type ToolUseContext, DelegateError } from '@delegate/core';
import { loadTools } from '../util/load-tools.js';

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The working directory of a new agent: the caller's, or `requested` when it is an
 * existing directory inside the caller's allowed roots (a sub-agent's file tools are
 * confined to its cwd, so an outside cwd would widen what it may touch).
 */
export async function resolveAgentCwd(
  context: ToolUseContext,
  requested: string | undefined,
): Promise<string> {
  if (!requested) return context.cwd;
  const { resolveToolPath } = await loadTools();
  const resolved = await resolveToolPath(requested, context);
  if (await isDirectory(resolved.realPath)) return resolved.absolutePath;
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `The Agent tool's cwd "${requested}" is not an existing directory (resolved to ${resolved.absolutePath}). Pass an existing directory, or leave cwd out to use the caller's.`,
  );
}
