import { z } from 'zod';
import type { Tool, ToolUseContext } from '@delegate/core';

/** A tool as the Messages API expects it in `tools`. */
export type ApiToolSchema = {
  /** Tool name. */
  name: string;
  /** Description for the model. */
  description: string;
  /** JSON Schema of the input (an object schema). */
  input_schema: Record<string, unknown>;
};

/** Converts a tool's input schema to JSON Schema: `inputJSONSchema` as given (MCP), else the zod schema, without `$schema`. */
export function toolInputJSONSchema(
  tool: Pick<Tool, 'inputSchema' | 'inputJSONSchema'>,
): Record<string, unknown> {
  if (tool.inputJSONSchema !== undefined) return tool.inputJSONSchema;
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.inputSchema, {
    io: 'input',
  }) as Record<string, unknown>;
  return schema;
}

/** Builds the Messages API tool definition `{ name, description, input_schema }` of a tool. */
export async function toolToApiSchema(
  tool: Tool,
  context?: ToolUseContext,
): Promise<ApiToolSchema> {
  return {
    name: tool.name,
    description: await tool.description(context),
    input_schema: toolInputJSONSchema(tool),
  };
}
