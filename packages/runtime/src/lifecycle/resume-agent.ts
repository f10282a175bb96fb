import {
  type AgentDefinition,
  type AgentDefinitionsResult,
  type Message,
  type Tool,
  type UserMessage,
  DelegateError,
  createUserMessage,
} from '@delegate/core';
import { allowMemoryWrites, setUpAgentMemory } from '../agent-tool/agent-memory.js';
import type { AgentToolOutput } from '../agent-tool/agent-tool-output.js';
import { assembleWorkerTools } from '../agent-tool/assemble-worker-tools.js';
import { readDefinitionExtras } from '../agent-tool/definition-extras.js';
import { resolveAgentPermissionMode } from '../agent-tool/resolve-permission-mode.js';
import type { AgentRuntime } from '../session/agent-runtime.js';
import {
  type QueuedNotification,
  type RestoredSession,
  queuedNotificationEntry,
  restoreSessionTranscript,
} from '../transcripts/queued-notification.js';
import { readTranscript } from '../transcripts/read-transcript.js';
import { TranscriptStore } from '../transcripts/transcript-store.js';
import { redactOption } from '../util/redact-secrets.js';
import { type AgentRecord, createAgentRecord } from './agent-record.js';
import { type AgentSpec, parseAgentSpec } from './agent-spec.js';
import { isCompacted } from './agent-directory.js';
import { queueMessage } from './record-transitions.js';
import { type ResumedPlace, resumedPlace } from './resumed-place.js';
import {
  type InFlightToolCalls,
  checkInFlightToolCalls,
  settleInFlightToolCalls,
} from './settle-in-flight-calls.js';
import { startAgentRun } from './start-agent-run.js';

/** Options of {@link resumeAgentFromTranscript}. */
export type ResumeAgentOptions = {
  /** The agent to resume. */
  agentId: string;
  /** The session that recorded it, when not this one (same transcript directory). */
  sessionId?: string;
  /** What to tell it (default: a note that its previous run was interrupted). */
  message?: string;
  /**
   * What happens to the tool calls that were in flight when its transcript ends with an
   * assistant message whose calls have no results. `interrupt` (default): each gets a result
   * saying it was interrupted. `rerun-read-only`: read-only calls (Read, Glob, Grep, a
   * read-only Bash command; never Agent or task tools, never a call whose input does not
   * parse) run again with the agent's own tools, permissions and hooks before its next
   * request, and the others get the interrupted result.
   */
  inFlightToolCalls?: InFlightToolCalls;
};

const INTERRUPTED_NOTE =
  'Your previous run was interrupted. Continue the task from where you left off, then give your report.';

function requireStore(runtime: AgentRuntime): TranscriptStore {
  if (runtime.transcript) return runtime.transcript;
  throw new DelegateError(
    'INVALID_ARGUMENT',
    'Resuming needs transcripts, and this session was created with transcriptDir: false. Create the session with a transcriptDir (the one the agent was recorded in).',
  );
}

function refuseRunning(runtime: AgentRuntime, agentId: string): void {
  const entry = runtime.agents.get(agentId);
  // A resume still reading the transcript has not registered its run yet: a second call in
  // the meantime would run the agent twice, both writing one transcript.
  if (
    (entry && !isCompacted(entry) && entry.status === 'running') ||
    runtime.resumingAgents.has(agentId)
  ) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Agent ${agentId} is still running in this session; send it a message with SendMessage instead of resuming it.`,
    );
  }
}

/**
 * The recorded conversation, with the transcript-only fields and lines removed, and the
 * notifications recorded in its inbox that no request carried. A torn last line is skipped
 * and reported as an `agent.warning`; a transcript with no complete message is refused (it
 * would resume an agent that has no task).
 */
async function readHistory(
  runtime: AgentRuntime,
  source: TranscriptStore,
  agentId: string,
): Promise<RestoredSession> {
  const path = source.agentPath(agentId);
  const warn = (code: string) => (message: string) =>
    runtime.events.emit({
      type: 'agent.warning',
      agentId,
      timestamp: new Date().toISOString(),
      code,
      message,
    });
  const entries = await readTranscript(path, { onWarning: warn('TRANSCRIPT_TORN_LINE') });
  if (!entries.some((entry) => entry.type === 'user' || entry.type === 'assistant')) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Cannot resume agent ${agentId}: its transcript ${path} holds no complete message (a crash cut its only line, or the file is empty), so there is no task to continue. Start a new agent with the task instead.`,
      { details: { path, agentId } },
    );
  }
  return restoreSessionTranscript(entries, path, warn('TRANSCRIPT_BAD_RECORD'));
}

/**
 * Queues the notifications owed to the agent into its inbox again (its first request
 * carries them); returns their record lines when its transcript goes on in another file,
 * which must hold them too.
 */
function requeueInbox(options: {
  runtime: AgentRuntime;
  record: AgentRecord;
  pending: readonly QueuedNotification[];
  sameFile: boolean;
}): Message[] {
  const { runtime, record, pending, sameFile } = options;
  const lines: Message[] = [];
  runtime.tasks.restoreQueued(pending, {
    deliver: (queued) => {
      queueMessage(record, queued.message);
      if (!sameFile) lines.push(queuedNotificationEntry(queued, record.agentId));
    },
  });
  return lines;
}

/** Whether the conversation ends with a report: an assistant answer that calls no tool. */
function endsWithReport(history: readonly Message[]): boolean {
  const last = history.findLast(
    (message) => message.type === 'user' || message.type === 'assistant',
  );
  if (last?.type !== 'assistant' || last.isApiErrorMessage) return false;
  // The loop ends an agent on any answer without a tool call, whatever its stop reason.
  return !last.message.content.some((block) => block.type === 'tool_use');
}

/**
 * Whether the agent is a one-shot built-in (Explore, Plan) that already gave its report. It is
 * done, as `SendMessage` says: a follow-up `message` is refused, and resuming it without one
 * (its notification was lost in a crash) settles it on the report it gave, without a request.
 * One cut off before its report resumes as any agent does.
 */
function finishedOneShot(
  runtime: AgentRuntime,
  spec: AgentSpec,
  history: readonly Message[],
  message: string | undefined,
): boolean {
  if (!spec.isBuiltIn || !runtime.oneShotAgentTypes.has(spec.agentType)) return false;
  if (!endsWithReport(history)) return false;
  // Its report already reached its parent through this session: settled again, it would
  // arrive twice.
  if (message === undefined && runtime.tasks.list().some((task) => task.agentId === spec.agentId))
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Agent ${spec.agentId} is a one-shot ${spec.agentType} agent that already gave its report in this session; there is nothing to resume.`,
      { details: { agentId: spec.agentId, agentType: spec.agentType } },
    );
  if (message === undefined) return true;
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `Cannot continue agent ${spec.agentId}: it is a one-shot ${spec.agentType} agent that already gave its report. Start a new ${spec.agentType} agent with the follow-up in its prompt.`,
    { details: { agentId: spec.agentId, agentType: spec.agentType } },
  );
}

function findDefinition(runtime: AgentRuntime, spec: AgentSpec): AgentDefinition | undefined {
  if (spec.isFork) return runtime.forkAgent;
  const definition = runtime
    .getAgentDefinitions()
    .activeAgents.find((agent) => agent.agentType === spec.agentType);
  if (definition) return definition;
  throw new DelegateError(
    'AGENT_NOT_FOUND',
    `Cannot resume ${spec.agentId}: agent type "${spec.agentType}" is no longer defined. Restore its definition file, or start a new agent.`,
  );
}

/** Its tools: a fork gets the main agent's (forks are spawned by it); others are assembled again. */
function resumedTools(
  runtime: AgentRuntime,
  spec: AgentSpec,
  definition: AgentDefinition | undefined,
): { tools: Tool[]; definitions: AgentDefinitionsResult } {
  const definitions = runtime.getAgentDefinitions();
  if (spec.isFork || !definition) return { tools: runtime.rootContext.options.tools, definitions };
  const assembled = assembleWorkerTools(runtime, runtime.rootContext, definition, true);
  return {
    tools: assembled.tools,
    definitions: assembled.allowedAgentTypes
      ? { ...definitions, allowedAgentTypes: assembled.allowedAgentTypes }
      : definitions,
  };
}

async function rebuildRecord(
  runtime: AgentRuntime,
  spec: AgentSpec,
  options: { replay: boolean },
): Promise<{ record: AgentRecord; notice?: UserMessage }> {
  const definition = findDefinition(runtime, spec);
  const { tools, definitions } = resumedTools(runtime, spec, definition);
  // What the old session allowed does not carry over: the mode comes from this session,
  // and the agent's directory must exist and lie inside this session's roots (a worktree
  // agent's, in a worktree of a repository inside them).
  spec.permissionMode = resolveAgentPermissionMode({
    parentMode: runtime.rootContext.getAppState().toolPermissionContext.mode,
    agent: definition ?? {},
    isFork: spec.isFork,
  });
  const place = await resumedPlace(runtime, spec, options);
  spec.cwd = place.cwd;
  // The record's spec gets the checked worktree, never the one the file named.
  delete spec.worktree;
  try {
    const record = await createResumedRecord({
      runtime,
      spec,
      definition,
      tools,
      definitions,
      place,
    });
    return { record, ...(place.notice ? { notice: place.notice } : {}) };
  } catch (error) {
    await place.undo();
    throw error;
  }
}

async function createResumedRecord(options: {
  runtime: AgentRuntime;
  spec: AgentSpec;
  definition: AgentDefinition | undefined;
  tools: Tool[];
  definitions: AgentDefinitionsResult;
  place: ResumedPlace;
}): Promise<AgentRecord> {
  const { runtime, spec, definition, tools, definitions, place } = options;
  const memory =
    !spec.isFork && definition ? await setUpAgentMemory(runtime, definition) : undefined;
  const memoryDirectory = memory?.directory;
  const extras =
    !spec.isFork && definition
      ? readDefinitionExtras({
          runtime,
          agent: definition,
          agentId: spec.agentId,
          mcpClients: runtime.rootContext.getAppState().mcp.clients,
        })
      : undefined;
  return createAgentRecord({
    runtime,
    parent: runtime.rootContext,
    spec,
    tools,
    definitions,
    isBackground: !runtime.options.backgroundTasksDisabled,
    ...(memoryDirectory
      ? { memoryDirectory, wrapCanUseTool: (check) => allowMemoryWrites(check, memoryDirectory) }
      : {}),
    ...(spec.isFork && runtime.mainToolHooks ? { toolHooks: runtime.mainToolHooks } : {}),
    ...(extras?.toolHooks ? { toolHooks: extras.toolHooks } : {}),
    ...(extras?.mcpServers
      ? {
          mcpServers: extras.mcpServers,
          ...(definition?.disallowedTools
            ? { mcpDisallowedTools: definition.disallowedTools }
            : {}),
        }
      : {}),
    ...(definition?.color && !spec.isFork ? { color: definition.color } : {}),
    ...(place.worktree ? { worktree: place.worktree } : {}),
  });
}

/**
 * Resumes a sub-agent from its transcript (this session's, or `sessionId`'s in the same
 * transcript directory): its conversation is restored, the tool calls it left in flight are
 * settled (`inFlightToolCalls`), and it runs on in the background with `message` (or a note
 * that it was interrupted). Notifications its transcript records as queued into its inbox
 * and no request carried are queued into its inbox again, once: its first request carries
 * them. Its transcript continues under this session; in the session that recorded it, the
 * same file continues without the history written again.
 */
export async function resumeAgentFromTranscript(
  runtime: AgentRuntime,
  options: ResumeAgentOptions,
): Promise<AgentToolOutput> {
  checkInFlightToolCalls(options.inFlightToolCalls, 'resumeAgent: inFlightToolCalls');
  const store = requireStore(runtime);
  refuseRunning(runtime, options.agentId);
  runtime.resumingAgents.add(options.agentId);
  try {
    return await restoreAndStart(runtime, options, store);
  } finally {
    runtime.resumingAgents.delete(options.agentId);
  }
}

async function restoreAndStart(
  runtime: AgentRuntime,
  options: ResumeAgentOptions,
  store: TranscriptStore,
): Promise<AgentToolOutput> {
  const source = options.sessionId
    ? new TranscriptStore({ directory: store.directory, sessionId: options.sessionId })
    : store;
  const sameFile = source.agentPath(options.agentId) === store.agentPath(options.agentId);
  const spec = parseAgentSpec(
    await source.readAgentMeta(options.agentId),
    source.agentMetaPath(options.agentId),
  );
  const restored = await readHistory(runtime, source, options.agentId);
  const history = restored.messages;
  const finished = finishedOneShot(runtime, spec, history, options.message);
  const { record, notice } = await rebuildRecord(runtime, spec, { replay: finished });
  if (sameFile && restored.lastUuid) store.continueAfter(options.agentId, restored.lastUuid);
  if (finished) {
    return startAgentRun(runtime, record, {
      newMessages: history,
      endsWithReport: true,
      ...(sameFile ? { alreadyRecorded: history.length } : {}),
    });
  }
  const settled = await settleInFlightToolCalls({
    messages: history,
    mode: options.inFlightToolCalls ?? 'interrupt',
    context: record.context,
    canUseTool: record.canUseTool,
    ...(record.toolHooks ? { hooks: record.toolHooks } : {}),
    ...redactOption(runtime),
  });
  const note = createUserMessage({
    content: options.message ?? INTERRUPTED_NOTE,
    agentId: spec.agentId,
  });
  const recordLines = requeueInbox({
    runtime,
    record,
    pending: restored.pendingNotifications,
    sameFile,
  });
  return startAgentRun(runtime, record, {
    newMessages: [...history, ...(settled?.messages ?? []), ...(notice ? [notice] : []), note],
    ...(sameFile ? { alreadyRecorded: history.length } : {}),
    ...(recordLines.length > 0 ? { transcriptOnly: recordLines } : {}),
  });
}
