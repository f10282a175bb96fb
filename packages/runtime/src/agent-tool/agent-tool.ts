import { type Tool, type ToolResult, TOOL_NAMES } from '@delegate/core';
import type { AgentRuntime } from '../session/agent-runtime.js';
import { z } from 'zod';
import { AgentToolInput, AgentToolInputFields } from './agent-tool-input.js';
import { type AgentToolOutput, formatAgentToolResult } from './agent-tool-output.js';
import { getAgentToolPrompt } from './agent-tool-prompt.js';
import { visibleAgents } from './resolve-agent.js';
import { spawnAgent } from './spawn-agent.js';

/**
 * Creates the `Agent` tool (legacy alias `Task`) bound to a session's runtime
 * (`session.runtime`): it starts sub-agents in the foreground, in the background, or as
 * forks, and returns their report (or the ids of a background run).
 */
export function createAgentTool(runtime: AgentRuntime): Tool<AgentToolInput, AgentToolOutput> {
  let jsonSchema: Record<string, unknown> | undefined;
  return {
    name: TOOL_NAMES.agent,
    aliases: [TOOL_NAMES.agentLegacy],
    inputSchema: AgentToolInput as z.ZodType<AgentToolInput>,
    // The fields alone: the spelling fix-up in front of them has no JSON Schema.
    get inputJSONSchema() {
      if (!jsonSchema) {
        const { $schema: _ignored, ...schema } = z.toJSONSchema(AgentToolInputFields, {
          io: 'input',
        }) as Record<string, unknown>;
        jsonSchema = schema;
      }
      return jsonSchema;
    },
    description(context) {
      const definitions = context?.options.agentDefinitions ?? runtime.getAgentDefinitions();
      const agents = context ? visibleAgents(context, definitions) : definitions.activeAgents;
      return getAgentToolPrompt({
        agents,
        forkEnabled: runtime.options.forkEnabled,
        listInMessages: runtime.options.agentListInMessages,
      });
    },
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    requiresUserInteraction: () => false,
    async call(input, context, extras): Promise<ToolResult<AgentToolOutput>> {
      const output = await spawnAgent(runtime, input, context, extras);
      return {
        content: formatAgentToolResult(output, { oneShotAgentTypes: runtime.oneShotAgentTypes }),
        // An agent that failed or was stopped after some work: its partial report comes as an
        // error, as one that failed on its first request does, so the model sees it failed.
        ...(output.status !== 'async_launched' && output.partial ? { isError: true } : {}),
        data: output,
      };
    },
  };
}
