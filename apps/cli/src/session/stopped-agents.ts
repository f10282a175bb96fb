import type { DelegateSession } from '@delegate/runtime';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { printable } from '../terminal/format.js';

/**
 * The background agents the person stopped (Ctrl-C, SIGTERM, the terminal closing), by agent
 * id, each with the sentence that says how and when. The runtime cannot tell such a stop from a
 * crash once the process is gone, so the CLI keeps it: `--resume` then tells the main agent
 * the agent was stopped, not that it was lost.
 */
export type StoppedAgents = Map<string, string>;

/** `<transcriptDir>/<sessionId>/stopped-agents.json`, next to the session's agent files. */
function recordPath(transcriptDir: string, sessionId: string): string {
  return join(transcriptDir, sessionId, 'stopped-agents.json');
}

function clockTime(date: Date): string {
  return `${date.toISOString().slice(11, 19)} UTC`;
}

/**
 * The background agents of `session` that still run, which the stop about to happen ends,
 * each with `how` and the time (`Stopped by Ctrl-C at 13:49:36 UTC, before it finished.`).
 * Call it before aborting the session.
 */
export function runningBackgroundAgents(session: DelegateSession, how: string): StoppedAgents {
  const why = `${how.replace(/\.$/, '')} at ${clockTime(new Date())}, before it finished.`;
  const stopped: StoppedAgents = new Map();
  for (const task of session.tasks.list()) {
    if (task.type !== 'local_agent' || task.status !== 'running' || task.isBackgrounded !== true)
      continue;
    if (task.agentId !== undefined) stopped.set(task.agentId, why);
  }
  return stopped;
}

/** The stops recorded for a session; none when there is no record or it cannot be read. */
export function readStoppedAgents(transcriptDir: string, sessionId: string): StoppedAgents {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(recordPath(transcriptDir, sessionId), 'utf8'));
  } catch {
    // No record (the process was killed, or never stopped an agent): every loss is a crash.
    return new Map();
  }
  const stopped: StoppedAgents = new Map();
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return stopped;
  for (const [agentId, why] of Object.entries(parsed)) {
    if (typeof why === 'string') stopped.set(agentId, why);
  }
  return stopped;
}

/**
 * Adds `stopped` to the session's record, synchronously (a second Ctrl-C may end the process
 * at once) and in one step (written beside it, then renamed over it). Returns why it could
 * not, when it could not: the stop goes ahead, and a later `--resume` reports those agents as
 * lost rather than stopped.
 */
export function recordStoppedAgents(
  transcriptDir: string,
  sessionId: string,
  stopped: StoppedAgents,
): string | undefined {
  if (stopped.size === 0) return undefined;
  const path = recordPath(transcriptDir, sessionId);
  const merged = new Map([...readStoppedAgents(transcriptDir, sessionId), ...stopped]);
  const temporary = `${path}.${process.pid}`;
  try {
    mkdirSync(join(transcriptDir, sessionId), { recursive: true });
    writeFileSync(temporary, `${JSON.stringify(Object.fromEntries(merged), null, 2)}\n`, {
      mode: 0o600,
    });
    renameSync(temporary, path);
    return undefined;
  } catch (error) {
    try {
      rmSync(temporary, { force: true });
    } catch {
      // There was nowhere to write it either.
    }
    // It names the transcript folder, which a settings file may name: no escape may act.
    return printable(error instanceof Error ? error.message : String(error));
  }
}

/**
 * Tells the main agent, with one `<task-notification>` each (status `killed`), about the
 * background agents it started that `stopped` names and it has not heard from. Returns how many.
 */
export function reportStoppedAgents(session: DelegateSession, stopped: StoppedAgents): number {
  let reported = 0;
  for (const task of session.backgroundLaunches()) {
    const why = stopped.get(task.agentId);
    if (why === undefined || session.heardFromAgent(task.agentId)) continue;
    const told = session.reportLostAgent({
      taskId: task.taskId,
      agentId: task.agentId,
      description: task.description,
      agentType: task.agentType,
      outcome: { status: 'killed', error: why },
    });
    if (told) reported++;
  }
  return reported;
}

/**
 * Before a stop the person asked for: notes which background agents it ends, and, when the
 * session keeps transcripts, records them for a later `--resume`. Returns them (a session that
 * goes on in this process tells its main agent with {@link reportStoppedAgents}). `onWarning`
 * hears why the record could not be written.
 */
export function noteStop(
  session: DelegateSession,
  how: string,
  onWarning: (message: string) => void,
): StoppedAgents {
  const stopped = runningBackgroundAgents(session, how);
  const store = session.transcript;
  if (!store) return stopped;
  const problem = recordStoppedAgents(store.directory, store.sessionId, stopped);
  if (problem !== undefined)
    onWarning(
      `could not record which background agents this stop ends (${problem}); a later --resume will report them as lost, not stopped.`,
    );
  return stopped;
}
