import { DelegateError, checkString } from '@delegate/core';

/**
 * Returns the notice a fork receives when it runs in its own git worktree: the inherited
 * conversation names paths under the parent's directory, which the fork must translate
 * to the worktree, and files may have changed, so it re-reads them before editing.
 */
export function buildWorktreeNotice(parentCwd: string, worktreeCwd: string): string {
  checkString('buildWorktreeNotice()', 'parentCwd', parentCwd);
  checkString('buildWorktreeNotice()', 'worktreeCwd', worktreeCwd);
  if (parentCwd.trim() === '' || worktreeCwd.trim() === '') {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `buildWorktreeNotice needs both directories, got parent "${parentCwd}" and worktree "${worktreeCwd}". Pass the parent's working directory and the worktree path.`,
    );
  }
  return [
    `You are working in a separate git worktree at ${worktreeCwd}.`,
    `The conversation you inherited took place in ${parentCwd}, so every path it mentions points into the parent's copy.`,
    `Translate each such path to the same relative location under ${worktreeCwd} before you use it.`,
    'The files here can differ from what the conversation shows: read a file again before you edit it.',
    "Your changes stay in this worktree and do not touch the parent's checkout.",
  ].join('\n');
}
