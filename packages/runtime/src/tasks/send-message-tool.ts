import {
  type Tool,
  type ToolResult,
  DelegateError,
  TOOL_NAMES,
  createUserMessage,
} from '@delegate/core';
import { z } from 'zod';
import type { AgentRuntime } from '../session/agent-runtime.js';
import { continueAgent } from '../lifecycle/agent-lifecycle.js';
import { type AgentToolOutput, formatAgentToolResult } from '../agent-tool/agent-tool.js';

const SendMessageInput = z.object({
  to: z.string().min(1).describe('Agent id or name of a previously started agent'),
  message: z.string().min(1).describe('What to tell the agent'),
});
type SendMessageInput = z.infer<typeof SendMessageInput>;

/** Creates `SendMessage`: continue a previously started agent with its context intact. */
export function createSendMessageTool(
  runtime: AgentRuntime,
): Tool<SendMessageInput, AgentToolOutput | { status: 'queued' }> {
  return {
    name: TOOL_NAMES.sendMessage,
    inputSchema: SendMessageInput,
    description: () =>
      'Send a follow-up message to an agent you started earlier (by agent id or name). A finished agent resumes in the background with its whole conversation and you get a <task-notification>; a running one reads the message at its next turn.',
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    requiresUserInteraction: () => false,
    async call(input, context): Promise<ToolResult<AgentToolOutput | { status: 'queued' }>> {
      const record = runtime.agents.get(input.to);
      if (!record) {
        const names = [
          ...new Set([...runtime.agents.values()].map((agent) => agent.name ?? agent.agentId)),
        ];
        throw new DelegateError(
          'NOT_FOUND',
          `No agent "${input.to}". Agents you can message: ${names.length > 0 ? names.join(', ') : 'none'}.`,
        );
      }
      if (record.status === 'killed') {
        throw new DelegateError(
          'INVALID_ARGUMENT',
          `Agent ${record.agentId} was stopped and cannot be continued. Start a new agent with the Agent tool instead.`,
        );
      }
      const outcome = continueAgent({
        runtime,
        record,
        message: createUserMessage({ content: input.message, agentId: record.agentId }),
        parentController: context.abortController,
      });
      if (outcome === 'queued') {
        return {
          content: `Agent ${record.agentId} is running; it will read your message at its next turn.`,
          data: { status: 'queued' },
        };
      }
      const output = await outcome;
      return { content: formatAgentToolResult(output), data: output };
    },
  };
}
