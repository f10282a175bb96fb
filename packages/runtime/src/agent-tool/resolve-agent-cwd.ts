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
 * confined to its cwd, so an outside cwd would widen what it may touch). The result is the
 * real path (symbolic links followed at the spawn), so a link in `requested` that is pointed
 * elsewhere afterwards does not move the agent.
 */
export async function resolveAgentCwd(
  context: ToolUseContext,
  requested: string | undefined,
): Promise<string> {
  if (!requested) return context.cwd;
  const { resolveToolPath } = await loadTools();
  const resolved = await resolveToolPath(requested, context);
  // The real path: a link on the way, pointed elsewhere later, must not move the agent's root.
  if (await isDirectory(resolved.realPath)) return resolved.realPath;
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `The Agent tool's cwd "${requested}" is not an existing directory (resolved to ${resolved.absolutePath}). Pass an existing directory, or leave cwd out to use the caller's.`,
  );
}
