import type { Tool, ToolUseContext } from '@delegate/core';
import { toolToApiSchema } from '@delegate/tools';
import type { ApiToolDefinition } from './build-messages-request.js';

/** Converts tools to Messages API definitions, in order. */
export async function toolsToApiDefinitions(
  tools: readonly Tool[],
  context?: ToolUseContext,
): Promise<ApiToolDefinition[]> {
  return Promise.all(
    tools.map(async (tool) => (await toolToApiSchema(tool, context)) as ApiToolDefinition),
  );
}
