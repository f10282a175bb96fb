import { join } from 'node:path';
import type { JournalEntry, SimRequest } from '@delegate/api-sim';
import { parseAgentFromMarkdown } from '@delegate/agent-defs';
import type { AgentDefinition } from '@delegate/core';

/** The request body shape the tests look into. */
export type RequestBody = {
  tools?: Array<{ name: string }>;
  messages: Array<{
    role: string;
    content: Array<{ type: string; text?: string; content?: unknown; is_error?: boolean }>;
  }>;
};

/** True for requests of the main agent (sub-agents send an `x-delegate-agent` header). */
export const isMain = (request: SimRequest): boolean => request.agent === undefined;

/** The text of every tool result in the request's last user message. */
export const resultText = (request: SimRequest): string =>
  request.toolResults.map((result) => result.content).join('\n');

/** The agent type a journaled request came from (undefined for the main agent). */
export const agentOf = (entry: JournalEntry): string | undefined =>
  entry.headers['x-delegate-agent'];

/** A journaled request's body. */
export const requestBody = (entry: JournalEntry): RequestBody => entry.body as RequestBody;

/** The content blocks of a journaled request's last message. */
export function lastUserBlocks(entry: JournalEntry): RequestBody['messages'][number]['content'] {
  const messages = requestBody(entry).messages;
  return messages[messages.length - 1]!.content;
}

/** Parses a Markdown agent definition for a test, failing loudly on a diagnostic. */
export function customAgent(markdown: string): AgentDefinition {
  const parsed = parseAgentFromMarkdown({
    filePath: '/virtual/agent.md',
    baseDir: '/virtual',
    content: markdown,
    source: 'projectSettings',
  });
  if (!parsed.ok) throw new Error(parsed.diagnostic.reason);
  return parsed.agent;
}

/** A scripted `Agent` tool call with the given input. */
export function agentCall(input: Record<string, unknown>): {
  type: 'tool_use';
  name: string;
  input: Record<string, unknown>;
} {
  return { type: 'tool_use', name: 'Agent', input };
}

/** The Agent call that starts one background `worker` described `job` (the notification tests' unit of work). */
export function backgroundJobCall(prompt = 'job'): ReturnType<typeof agentCall> {
  return agentCall({
    description: 'job',
    prompt,
    subagent_type: 'worker',
    run_in_background: true,
  });
}

/** A policy rule: the main agent's first request starts one background job ({@link backgroundJobCall}). */
export function mainStartsBackgroundJob(prompt?: string): {
  match: { when: (request: SimRequest) => boolean };
  reply: Array<ReturnType<typeof agentCall>>;
} {
  return {
    match: { when: (request) => isMain(request) && request.turnIndex === 0 },
    reply: [backgroundJobCall(prompt)],
  };
}

/**
 * A policy rule: the main agent's first request (no tool results yet) starts `count`
 * background `general-purpose` agents in one response, prompted `job 0`, `job 1`, ….
 */
export function mainStartsBackgroundJobs(count: number): {
  match: { when: (request: SimRequest) => boolean; toolResult: false };
  reply: Array<ReturnType<typeof agentCall>>;
} {
  return {
    match: { when: isMain, toolResult: false },
    reply: Array.from({ length: count }, (_, index) =>
      agentCall({
        description: `job ${index}`,
        prompt: `job ${index}`,
        subagent_type: 'general-purpose',
        run_in_background: true,
      }),
    ),
  };
}

/** A Read of `notes.txt` and a Write of `copy.txt` in `cwd`, in one response (a read-only and a writing call). */
export function readThenWriteCalls(cwd: string): Array<{
  type: 'tool_use';
  name: string;
  input: Record<string, unknown>;
}> {
  return [
    { type: 'tool_use', name: 'Read', input: { file_path: join(cwd, 'notes.txt') } },
    {
      type: 'tool_use',
      name: 'Write',
      input: { file_path: join(cwd, 'copy.txt'), content: 'copied' },
    },
  ];
}
