import { stat } from 'node:fs/promises';
import { type UserMessage, DelegateError, createUserMessage } from '@delegate/core';
import type { AgentRuntime } from '../session/agent-runtime.js';
import { loadTools } from '../util/load-tools.js';
import {
  type AgentWorktree,
  findAgentWorktree,
  removeAgentWorktree,
  worktreeSourceCwd,
} from '../worktree/worktree.js';
import type { AgentSpec } from './agent-spec.js';
import { createFreshWorktree } from './continue-agent.js';

/** Where a resumed agent works. */
export type ResumedPlace = {
  /** Its working directory. */
  cwd: string;
  /** Its worktree, when it runs in one. */
  worktree?: AgentWorktree;
  /** Told before its next request: it works in a fresh worktree, not its previous one. */
  notice?: UserMessage;
  /** Removes what was made for the resume (a fresh worktree), when it cannot start after all. */
  undo: () => Promise<void>;
};

const nothingToUndo = async (): Promise<void> => undefined;

/** The real path of `path` when it is a directory inside this session's roots. */
async function directoryInSession(
  runtime: AgentRuntime,
  path: string,
): Promise<string | undefined> {
  try {
    const { resolveToolPath } = await loadTools();
    const resolved = await resolveToolPath(path, runtime.rootContext);
    if ((await stat(resolved.realPath)).isDirectory()) return resolved.realPath;
  } catch {
    // A removed folder or one outside this session.
  }
  return undefined;
}

/**
 * The folder of the checkout the recorded worktree was made from, checked to be a directory
 * inside this session's roots: the repository that holds it is the only one the agent may
 * work in again. Refused otherwise (a transcript is a file anyone could edit).
 */
async function checkedSourceCwd(
  runtime: AgentRuntime,
  spec: AgentSpec,
  recorded: AgentWorktree,
): Promise<string> {
  const source = worktreeSourceCwd(recorded);
  const checked = source === undefined ? undefined : await directoryInSession(runtime, source);
  if (checked) return checked;
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `Cannot resume agent ${spec.agentId} in a worktree: the folder its worktree was made from (${source ?? recorded.gitRoot}) is not a folder of this session (cwd ${runtime.rootContext.cwd}), so its repository cannot be checked. Resume it from a session whose cwd holds that folder, or start a new agent.`,
    { details: { agentId: spec.agentId, path: source ?? recorded.gitRoot } },
  );
}

function warn(runtime: AgentRuntime, agentId: string, message: string): void {
  runtime.events.emit({
    type: 'agent.warning',
    agentId,
    timestamp: new Date().toISOString(),
    code: 'WORKTREE_REPLACED',
    message,
  });
}

/** Why the agent gets a fresh worktree, in words for the host (`its`) or for it (`your`). */
function whyFresh(options: {
  recorded: AgentWorktree | undefined;
  unusable: string | undefined;
  whose: 'its' | 'your';
}): string {
  const { recorded, unusable, whose } = options;
  if (!recorded) return `where ${whose} previous worktree was is not recorded`;
  if (unusable)
    return `${whose} previous worktree ${recorded.worktreePath} could not be used (${unusable})`;
  return `${whose} previous worktree ${recorded.worktreePath} is gone`;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * Where a resumed worktree agent works: its recorded worktree when git confirms it is still
 * a worktree of its repository (one left by a crash included), else a fresh worktree of that
 * repository, in the same folder, with a notice saying so (its previous changes are not in
 * it). A settled one-shot agent that makes no request gets no fresh worktree.
 */
async function resumedWorktree(
  runtime: AgentRuntime,
  spec: AgentSpec,
  replay: boolean,
): Promise<ResumedPlace> {
  const recorded = spec.worktree;
  const sourceCwd = recorded ? await checkedSourceCwd(runtime, spec, recorded) : undefined;
  let unusable: string | undefined;
  if (recorded && sourceCwd) {
    const found = await findAgentWorktree({ recorded, sourceCwd });
    if (found.status === 'found')
      return { cwd: found.worktree.cwd, worktree: found.worktree, undo: nothingToUndo };
    if (found.status === 'unusable') unusable = found.reason;
  }
  if (recorded === undefined || unusable !== undefined) {
    const why = whyFresh({ recorded, unusable, whose: 'its' });
    warn(runtime, spec.agentId, `Agent ${spec.agentId}: ${why}; it goes on in a fresh worktree.`);
  }
  if (replay) return { cwd: runtime.rootContext.cwd, undo: nothingToUndo };
  const worktree = await createFreshWorktree(runtime, {
    agentType: spec.agentType,
    agentId: spec.agentId,
    sourceCwd,
  });
  const notice = createUserMessage({
    content: `${capitalized(whyFresh({ recorded, unusable, whose: 'your' }))}. You now work in a fresh worktree at ${worktree.worktreePath} (branch ${worktree.worktreeBranch}), in ${worktree.cwd}; use paths under it. It starts from the repository's current commit, so changes you made in the previous worktree are not in it.`,
    isMeta: true,
    agentId: spec.agentId,
  });
  return {
    cwd: worktree.cwd,
    worktree,
    notice,
    undo: () => removeAgentWorktree(worktree).catch(() => undefined),
  };
}

/**
 * Where a resumed agent works. A worktree agent goes on in its worktree (see
 * `resumedWorktree`), never in the session's checkout. Any other agent goes on in its
 * recorded cwd when that still exists inside this session's roots, else in the session's cwd.
 */
export async function resumedPlace(
  runtime: AgentRuntime,
  spec: AgentSpec,
  options: { replay: boolean },
): Promise<ResumedPlace> {
  if (spec.isolation === 'worktree') return resumedWorktree(runtime, spec, options.replay);
  const cwd = (await directoryInSession(runtime, spec.cwd)) ?? runtime.rootContext.cwd;
  return { cwd, undo: nothingToUndo };
}
