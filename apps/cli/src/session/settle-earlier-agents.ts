import { type Message, TOOL_NAMES } from '@delegate/core';
import type { DelegateSession } from '@delegate/runtime';
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { oneLine, printable } from '../terminal/format.js';
import { readStoppedAgents } from './stopped-agents.js';

/** A sub-agent of the earlier run, as its `.meta.json` and transcript tell it. */
type EarlierAgent = {
  agentId: string;
  agentType: string;
  description: string;
  transcriptPath: string;
  /** The worktree it ran in, when it had one. */
  worktree?: string;
  /** Its report, when its transcript ends with a final answer; undefined when it stopped mid-work. */
  report?: string;
  /** The id of the Agent call that started it (recorded since this field exists). */
  parentToolUseId?: string;
};

/** Why a background agent of the earlier run failed, as its notification says. */
const STOPPED_TEXT =
  'The delegate process that ran this agent stopped before the agent finished, and it was not restarted. Start it again if its work is still needed.';

function blocksOf(message: Message): Array<Record<string, unknown>> {
  if (message.type !== 'user' && message.type !== 'assistant') return [];
  const content = (message.message as { content: unknown }).content;
  return Array.isArray(content) ? (content as Array<Record<string, unknown>>) : [];
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Array<{ type?: string; text?: string }>)
    .map((block) => (block.type === 'text' ? (block.text ?? '') : ''))
    .join('\n');
}

/** The report of a transcript that ends with a final answer (no tool call), else undefined. */
function finalReport(messages: readonly Message[]): string | undefined {
  const last = messages.findLast(
    (message) => message.type === 'user' || message.type === 'assistant',
  );
  if (last?.type !== 'assistant') return undefined;
  const blocks = blocksOf(last);
  if (blocks.some((block) => block['type'] === 'tool_use')) return undefined;
  return textOf(blocks);
}

/**
 * The earlier run's sub-agents, and the ids of those whose files could not be read (a corrupt
 * line): what became of those is unknown, so nothing is reported for them.
 */
async function readEarlierAgents(
  folder: string,
  onWarning: (message: string) => void,
): Promise<{ agents: EarlierAgent[]; unreadable: Set<string> }> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch {
    return { agents: [], unreadable: new Set() };
  }
  const { readTranscript } = await import('@delegate/runtime');
  const agents: EarlierAgent[] = [];
  const unreadable = new Set<string>();
  for (const name of names.filter((entry) => entry.endsWith('.meta.json')).sort()) {
    const agentId = name.slice(0, -'.meta.json'.length);
    const transcriptPath = join(folder, `${agentId}.jsonl`);
    try {
      const meta = JSON.parse(await readFile(join(folder, name), 'utf8')) as Record<
        string,
        unknown
      >;
      const entries = existsSync(transcriptPath)
        ? await readTranscript(transcriptPath, { onWarning })
        : [];
      const report = finalReport(entries as unknown as Message[]);
      agents.push({
        agentId,
        agentType: String(meta['agentType'] ?? 'agent'),
        description: String(meta['description'] ?? ''),
        transcriptPath,
        ...(meta['isolation'] === 'worktree' && typeof meta['cwd'] === 'string'
          ? { worktree: meta['cwd'] }
          : {}),
        ...(report !== undefined ? { report } : {}),
        ...(typeof meta['parentToolUseId'] === 'string'
          ? { parentToolUseId: meta['parentToolUseId'] }
          : {}),
      });
    } catch (error) {
      unreadable.add(agentId);
      onWarning(
        `could not read sub-agent ${agentId} of the earlier run (${error instanceof Error ? error.message : String(error)}); it is left as it is, and the main agent is told nothing about it until its files can be read (a later --resume tells it then).`,
      );
    }
  }
  return { agents, unreadable };
}

/** Text of an in-flight Agent call whose agent finished before the earlier run stopped. */
function recoveredReport(report: string): string {
  return `The agent finished before the run stopped; its report, read back from its transcript:\n\n${report}`;
}

/** Text of an in-flight Agent call whose agent had not finished: --resume does not restart it. */
const NOT_RESTARTED_TEXT =
  'Interrupted: the run stopped while this agent was working, and --resume does not restart it, so no report will come. Its work so far is lost to this conversation; start it again if the work is still needed.';

/**
 * The ids of the main agent's tool calls left in flight, when its conversation ends with the
 * assistant message that made them, and which of them are Agent calls.
 */
function inFlightCalls(messages: readonly Message[]): { all: Set<string>; agent: Set<string> } {
  const last = messages.findLast(
    (message) => message.type === 'user' || message.type === 'assistant',
  );
  if (last?.type !== 'assistant') return { all: new Set(), agent: new Set() };
  const calls = blocksOf(last).filter(
    (block) => block['type'] === 'tool_use' && typeof block['id'] === 'string',
  );
  return {
    all: new Set(calls.map((block) => block['id'] as string)),
    agent: new Set(
      calls
        .filter(
          (block) => block['name'] === TOOL_NAMES.agent || block['name'] === TOOL_NAMES.agentLegacy,
        )
        .map((block) => block['id'] as string),
    ),
  };
}

/**
 * After `--resume`: settles the main agent's tool calls the earlier run left in flight (its
 * read-only ones run again; an Agent call whose foreground agent finished gets that agent's
 * report; the others a result saying whether they took effect is unknown), tells the person
 * about the earlier run's sub-agents that had not
 * finished when its process stopped (they are not restarted; a worktree one's worktree is
 * kept), and owes the main agent the `<task-notification>` of every background agent it
 * started and never heard from: the report of one that finished but whose notification the
 * crash cut, that it was stopped for one the person stopped (Ctrl-C, as the CLI recorded), or a
 * failure for one its process left mid-work. Each is recorded like any
 * notification, so it reaches the model once, also across later resumes.
 */
export async function settleEarlierAgents(options: {
  session: DelegateSession;
  transcriptDir: string;
  onWarning: (message: string) => void;
}): Promise<void> {
  const { session, onWarning } = options;
  const folder = join(options.transcriptDir, session.sessionId, 'agents');
  // The agents the person stopped (Ctrl-C): stopped, not lost.
  const stopped = readStoppedAgents(options.transcriptDir, session.sessionId);
  const earlier = await readEarlierAgents(folder, onWarning);
  const agents = new Map(earlier.agents.map((agent) => [agent.agentId, agent]));
  const launched = session.backgroundLaunches();
  const taskOf = new Map(launched.map((task) => [task.agentId, task.taskId]));
  // First the calls in flight: their results must follow the message that made them.
  const inFlight = inFlightCalls(session.messages);
  const results: Record<string, string> = {};
  for (const agent of agents.values()) {
    if (agent.report === undefined || agent.parentToolUseId === undefined) continue;
    // A background agent's report comes as its notification, below.
    if (taskOf.has(agent.agentId) || !inFlight.all.has(agent.parentToolUseId)) continue;
    results[agent.parentToolUseId] = recoveredReport(agent.report);
  }
  // Every other Agent call in flight (a foreground agent or fork cut mid-work): nothing will
  // report, so the model is told that, not to wait for it.
  for (const id of inFlight.agent) results[id] ??= NOT_RESTARTED_TEXT;
  await session.settleInFlightToolCalls({ mode: 'rerun-read-only', results });
  for (const agent of agents.values()) {
    if (agent.report !== undefined) continue;
    // Told at an earlier --resume already: its notification is in the transcript.
    const taskId = taskOf.get(agent.agentId);
    if (taskId !== undefined && session.notifiedTaskStatus(taskId) !== undefined) continue;
    const worktree =
      agent.worktree && existsSync(agent.worktree)
        ? ` Its worktree is kept at ${agent.worktree} (it may hold the agent's changes; \`git worktree remove ${agent.worktree}\` deletes it).`
        : '';
    const how = stopped.has(agent.agentId)
      ? 'was stopped before it finished'
      : 'had not finished when the earlier run stopped';
    onWarning(
      // The type and description come from files the model's calls wrote: printed safely.
      `sub-agent ${agent.agentId} (${printable(agent.agentType)} "${oneLine(agent.description, 80)}") ${how}; --resume does not restart it. Its transcript: ${agent.transcriptPath}.${worktree}`,
    );
  }
  for (const task of launched) {
    // Resumed since (by a host's resumeAgent, under a new task), it has reported on its own.
    if (session.heardFromAgent(task.agentId)) continue;
    // Its report may be in the file that could not be read: a "failed" now would be final.
    if (earlier.unreadable.has(task.agentId)) continue;
    const agent = agents.get(task.agentId);
    const report = agent?.report;
    const stoppedHow = stopped.get(task.agentId);
    session.reportLostAgent({
      taskId: task.taskId,
      agentId: task.agentId,
      description: agent?.description ?? task.description,
      agentType: agent?.agentType ?? task.agentType,
      outcome:
        report !== undefined
          ? { status: 'completed', result: report }
          : stoppedHow !== undefined
            ? { status: 'killed', error: stoppedHow }
            : { status: 'failed', error: STOPPED_TEXT },
    });
  }
}
