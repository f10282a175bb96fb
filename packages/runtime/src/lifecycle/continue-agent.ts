import { type UserMessage, createUserMessage } from '@delegate/core';
import type { AgentToolOutput } from '../agent-tool/agent-tool-output.js';
import type { AgentRuntime } from '../session/agent-runtime.js';
import {
  type AgentWorktree,
  createAgentWorktree,
  worktreeSourceCwd,
} from '../worktree/worktree.js';
import { agentWorktreeSlug } from '../worktree/worktree-names.js';
import { type AgentRecord, continuationController } from './agent-record.js';
import { prepareContinuation, queueMessage, useWorktree } from './record-transitions.js';
import { startAgentRun } from './start-agent-run.js';

/**
 * A fresh worktree for an agent that had one: of the repository its last worktree belonged
 * to, in the same folder (the session's folder when nothing records one).
 */
export function createFreshWorktree(
  runtime: AgentRuntime,
  agent: { agentType: string; agentId: string; sourceCwd: string | undefined },
): Promise<AgentWorktree> {
  return createAgentWorktree({
    cwd: agent.sourceCwd ?? runtime.rootCwd,
    slug: agentWorktreeSlug({
      agentType: agent.agentType,
      agentId: agent.agentId,
      attempt: Date.now().toString(36),
    }),
    ...(runtime.options.worktreeRoot ? { root: runtime.options.worktreeRoot } : {}),
  });
}

/** Continues an agent whose worktree was removed (it had made no changes) in a fresh one. */
async function continueInNewWorktree(options: {
  runtime: AgentRuntime;
  record: AgentRecord;
  message: UserMessage;
}): Promise<AgentToolOutput> {
  const { runtime, record, message } = options;
  const previous = record.spec.worktree;
  const worktree = await createFreshWorktree(runtime, {
    agentType: record.agentType,
    agentId: record.agentId,
    sourceCwd: previous ? worktreeSourceCwd(previous) : undefined,
  });
  useWorktree(record, worktree);
  // A resume reads where the agent works from its metadata.
  void runtime.transcript?.writeAgentMeta(record.agentId, record.spec);
  const notice = createUserMessage({
    content: `Your previous worktree had no changes and was removed. You now work in a fresh worktree at ${worktree.worktreePath} (branch ${worktree.worktreeBranch}), in ${worktree.cwd}; use paths under it.`,
    isMeta: true,
  });
  return startAgentRun(runtime, record, { newMessages: [notice, message] });
}

/**
 * Continues an agent that has finished, with its context intact: the message is added
 * to its conversation and it runs again in the background (in the foreground when
 * background tasks are disabled). A running agent gets the message at its next turn
 * instead (returns `queued`).
 */
export function continueAgent(options: {
  runtime: AgentRuntime;
  record: AgentRecord;
  message: UserMessage;
  /** The caller's abort controller (a foreground continuation stops with it). */
  parentController: AbortController;
}): Promise<AgentToolOutput> | 'queued' {
  const { runtime, record, message, parentController } = options;
  if (record.status === 'running') {
    queueMessage(record, message);
    return 'queued';
  }
  // The previous run released its abort link; link a fresh controller. A background
  // continuation stops with the session, not with the caller's turn.
  const isBackground = !runtime.options.backgroundTasksDisabled;
  prepareContinuation(record, {
    isBackground,
    abortController: continuationController({ runtime, isBackground, parentController }),
  });
  if (record.isolation === 'worktree' && !record.worktree)
    return continueInNewWorktree({ runtime, record, message });
  return startAgentRun(runtime, record, { newMessages: [message] });
}
