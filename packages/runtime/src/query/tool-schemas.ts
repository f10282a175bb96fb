import type { Tool, ToolUseContext } from '@delegate/core';
import { loadTools } from '../util/load-tools.js';
import type { ApiToolDefinition } from './build-messages-request.js';

// A tool's input schema never changes, and converting a zod schema to JSON Schema is the
// costly part: it is done once per tool object, for the life of the tool.
const inputSchemas = new WeakMap<Tool, Record<string, unknown>>();

/** The JSON Schema of a tool's input, converted once per tool and shared afterwards (never modify it). */
export async function cachedInputSchema(tool: Tool): Promise<Record<string, unknown>> {
  let schema = inputSchemas.get(tool);
  if (!schema) {
    const { toolInputJSONSchema } = await loadTools();
    schema = inputSchemas.get(tool) ?? toolInputJSONSchema(tool);
    inputSchemas.set(tool, schema);
  }
  return schema;
}

/**
 * Converts tools to Messages API definitions, in order. Descriptions are asked for on
 * every call (a tool may describe itself from the context); input schemas come from the
 * per-tool cache.
 */
export async function toolsToApiDefinitions(
  tools: readonly Tool[],
  context?: ToolUseContext,
): Promise<ApiToolDefinition[]> {
  return Promise.all(
    tools.map(async (tool) => ({
      name: tool.name,
      description: await tool.description(context),
      input_schema: await cachedInputSchema(tool),
    })),
  );
}
