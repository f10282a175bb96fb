import { type Message, TOOL_NAMES, invalidArgument, isObject } from '@delegate/core';
import {
  type LaunchedAgentOutput,
  parseLaunchedAgentResult,
} from '../agent-tool/agent-tool-output.js';
import { parseTaskNotificationHeaders } from '../tasks/task-notification.js';
import type { TaskRegistry } from '../tasks/task-registry.js';

/** A background agent started by an `Agent` call of a conversation, as the call's result says. */
export type BackgroundLaunch = Omit<LaunchedAgentOutput, 'status'>;

/**
 * How a lost background agent ended, as `reportLostAgent` tells its parent: its report (it
 * finished, but the crash cut its notification), why it is lost, or, for one the person
 * stopped (a host that records its own stops, as the CLI does for Ctrl-C), that it was stopped
 * and, when given, how.
 */
export type LostAgentOutcome =
  | { status: 'completed'; result: string }
  | { status: 'failed'; error: string }
  | { status: 'killed'; error?: string };

/** What `reportLostAgent` takes. */
export type LostAgentReport = {
  /** The task the Agent call's result named. */
  taskId: string;
  /** The agent it ran. */
  agentId: string;
  /** The call's description. */
  description: string;
  /** The agent type, when known. */
  agentType?: string;
  /** Its report, when it finished, or why it is lost. */
  outcome: LostAgentOutcome;
};

function blocksOf(message: Message): unknown[] {
  if (message.type !== 'user' && message.type !== 'assistant') return [];
  const content: unknown = message.message.content;
  return Array.isArray(content) ? content : [];
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) => (isObject(block) && block['type'] === 'text' ? String(block['text']) : ''))
    .join('\n');
}

/** The background runs that `Agent` calls of `messages` started, in order. */
export function backgroundLaunchesOf(messages: readonly Message[]): BackgroundLaunch[] {
  const agentCalls = new Set<string>();
  const launches: BackgroundLaunch[] = [];
  for (const message of messages) {
    for (const block of blocksOf(message)) {
      if (!isObject(block)) continue;
      if (block['type'] === 'tool_use' && block['name'] === TOOL_NAMES.agent)
        agentCalls.add(String(block['id']));
      if (block['type'] !== 'tool_result' || !agentCalls.has(String(block['tool_use_id'])))
        continue;
      const launch = parseLaunchedAgentResult(textOf(block['content']));
      if (launch) launches.push(launch);
    }
  }
  return launches;
}

/**
 * True when a user message of `messages` holds a notification of agent `agentId` (under any
 * task: an agent resumed by a host reports under a new task), or a task of `tasks` runs or
 * ran it.
 */
export function heardFromAgent(
  agentId: string,
  messages: readonly Message[],
  tasks: TaskRegistry,
): boolean {
  for (const task of tasks.list()) if (task.agentId === agentId) return true;
  return messages.some(
    (message) =>
      message.type === 'user' &&
      parseTaskNotificationHeaders(textOf(message.message.content)).some(
        (header) => header.agentId === agentId,
      ),
  );
}

const where = 'reportLostAgent()';

function fail(option: string, expected: string, value: unknown): never {
  throw invalidArgument({ where, option, expected, value });
}

function checkReport(report: unknown): asserts report is LostAgentReport {
  if (!isObject(report)) fail('options', 'an object', report);
  for (const key of ['taskId', 'agentId', 'description'] as const) {
    const value = report[key];
    if (typeof value !== 'string' || (key !== 'description' && value.trim() === ''))
      fail(key, 'a non-empty string', value);
  }
  if (report['agentType'] !== undefined && typeof report['agentType'] !== 'string')
    fail('agentType', 'a string when set', report['agentType']);
  const outcome = report['outcome'];
  const valid =
    isObject(outcome) &&
    ((outcome['status'] === 'completed' && typeof outcome['result'] === 'string') ||
      (outcome['status'] === 'failed' && typeof outcome['error'] === 'string') ||
      (outcome['status'] === 'killed' &&
        (outcome['error'] === undefined || typeof outcome['error'] === 'string')));
  if (!valid)
    fail(
      'outcome',
      "{ status: 'completed', result: string }, { status: 'failed', error: string } or { status: 'killed', error?: string }",
      outcome,
    );
}

/**
 * Registers the task of a background agent that ended outside this process (its process
 * stopped: the agent finished but its notification was cut, or it was stopped mid-work; or
 * the person stopped it), ends it with `outcome` and queues its notification for the main agent. Does nothing and
 * returns false when the task already has a notification or this session knows the task.
 */
export function reportLostAgent(
  tasks: TaskRegistry,
  notifiedStatus: (taskId: string) => unknown,
  report: LostAgentReport,
): boolean {
  checkReport(report);
  const { taskId, agentId, description, outcome } = report;
  if (notifiedStatus(taskId) !== undefined || tasks.get(taskId)) return false;
  tasks.register({
    id: taskId,
    type: 'local_agent',
    description,
    agentId,
    ...(report.agentType !== undefined ? { agentType: report.agentType } : {}),
  });
  tasks.finish(taskId, outcome);
  tasks.notify({ taskId, agentId, description, ...outcome });
  return true;
}
