import {
  type Tool,
  type ToolResult,
  DelegateError,
  TOOL_NAMES,
  createUserMessage,
} from '@delegate/core';
import { z } from 'zod';
import { type AgentToolOutput, formatAgentToolResult } from '../agent-tool/agent-tool-output.js';
import { type AgentEntry, isCompacted } from '../lifecycle/agent-directory.js';
import { continueAgent } from '../lifecycle/continue-agent.js';
import { resumeAgentFromTranscript } from '../lifecycle/resume-agent.js';
import type { AgentRuntime } from '../session/agent-runtime.js';

const SendMessageInput = z.object({
  to: z.string().min(1).describe('Agent id or name of a previously started agent'),
  message: z
    .string()
    .min(1)
    .refine((text) => text.trim() !== '', {
      message: 'message is empty or only whitespace; say what to tell the agent',
    })
    .describe('What to tell the agent'),
});
type SendMessageInput = z.infer<typeof SendMessageInput>;

type SendMessageOutput = AgentToolOutput | { status: 'queued' };

function findEntry(runtime: AgentRuntime, to: string): AgentEntry {
  const entry = runtime.agents.get(to);
  if (entry) return entry;
  const names = runtime.agents.addresses();
  throw new DelegateError(
    'NOT_FOUND',
    `No agent "${to}". Agents you can message: ${names.length > 0 ? names.join(', ') : 'none'}.`,
  );
}

/** Refuses what cannot be continued: one-shot built-ins (Explore, Plan) and stopped agents. */
function refuseUncontinuable(runtime: AgentRuntime, entry: AgentEntry): void {
  if (runtime.oneShotAgentTypes.has(entry.agentType) && (isCompacted(entry) || entry.isBuiltIn)) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Agent ${entry.agentId} is a one-shot ${entry.agentType} agent: it gave its report and cannot be continued. Start a new ${entry.agentType} agent with the Agent tool, with the follow-up in its prompt.`,
    );
  }
  if (entry.status === 'killed') {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Agent ${entry.agentId} was stopped and cannot be continued. Start a new agent with the Agent tool instead.`,
    );
  }
}

/**
 * Creates `SendMessage` bound to a session's runtime: continue a previously started agent
 * with its context intact. A running agent reads the message at its next turn; a finished
 * one runs again in the background (one whose record was compacted is resumed from its
 * transcript). One-shot built-ins and stopped agents are refused with a clear error.
 */
export function createSendMessageTool(
  runtime: AgentRuntime,
): Tool<SendMessageInput, SendMessageOutput> {
  return {
    name: TOOL_NAMES.sendMessage,
    inputSchema: SendMessageInput,
    description: () =>
      'Send a follow-up message to an agent you started earlier (by agent id or name). A finished agent resumes in the background with its whole conversation and you get a <task-notification>; a running one reads the message at its next turn. One-shot agents (Explore, Plan) cannot be continued.',
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    requiresUserInteraction: () => false,
    async call(input, context): Promise<ToolResult<SendMessageOutput>> {
      const entry = findEntry(runtime, input.to);
      refuseUncontinuable(runtime, entry);
      if (isCompacted(entry)) {
        if (!runtime.transcript) {
          throw new DelegateError(
            'NOT_FOUND',
            `Agent ${entry.agentId} finished long ago and its conversation was released (the session keeps ${runtime.options.maxRetainedAgents} finished agents whole, and has no transcripts to resume it from). Start a new agent with the Agent tool instead.`,
          );
        }
        const output = await resumeAgentFromTranscript(runtime, {
          agentId: entry.agentId,
          message: input.message,
        });
        return {
          content: formatAgentToolResult(output, { oneShotAgentTypes: runtime.oneShotAgentTypes }),
          data: output,
        };
      }
      const outcome = continueAgent({
        runtime,
        record: entry,
        message: createUserMessage({ content: input.message, agentId: entry.agentId }),
        parentController: context.abortController,
      });
      if (outcome === 'queued') {
        return {
          content: `Agent ${entry.agentId} is running; it will read your message at its next turn.`,
          data: { status: 'queued' },
        };
      }
      const output = await outcome;
      return {
        content: formatAgentToolResult(output, { oneShotAgentTypes: runtime.oneShotAgentTypes }),
        data: output,
      };
    },
  };
}
