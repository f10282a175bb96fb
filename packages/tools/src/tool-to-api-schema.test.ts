import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { TOOL_NAMES, type Tool } from '@delegate/core';
import { getBuiltinTools } from './get-builtin-tools.js';
import { toolToApiSchema } from './tool-to-api-schema.js';

describe('getBuiltinTools', () => {
  it('returns the six built-in tools with their traits', () => {
    const tools = getBuiltinTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      TOOL_NAMES.read,
      TOOL_NAMES.write,
      TOOL_NAMES.edit,
      TOOL_NAMES.glob,
      TOOL_NAMES.grep,
      TOOL_NAMES.bash,
    ]);
    const readOnly = Object.fromEntries(tools.map((tool) => [tool.name, tool.isReadOnly({})]));
    expect(readOnly).toEqual({
      Read: true,
      Write: false,
      Edit: false,
      Glob: true,
      Grep: true,
      Bash: false,
    });
    for (const tool of tools) {
      expect(tool.isConcurrencySafe({})).toBe(tool.isReadOnly({}));
      expect(tool.requiresUserInteraction?.()).toBe(false);
      expect(tool.isMcp).toBeUndefined();
    }
  });
});

describe('toolToApiSchema', () => {
  it('converts each built-in tool to the Messages API shape, with described fields and no $schema', async () => {
    for (const tool of getBuiltinTools()) {
      const schema = await toolToApiSchema(tool);
      expect(schema.name).toBe(tool.name);
      expect(schema.description.length).toBeGreaterThan(20);
      expect(schema.input_schema['type']).toBe('object');
      expect(schema.input_schema['$schema']).toBeUndefined();
      const properties = schema.input_schema['properties'] as Record<
        string,
        { description?: string }
      >;
      for (const [field, property] of Object.entries(properties)) {
        expect(property.description, `${tool.name}.${field}`).toBeTruthy();
      }
    }
  });

  it('lists only required fields as required', async () => {
    const [read] = getBuiltinTools();
    const schema = await toolToApiSchema(read as Tool);
    expect(schema.input_schema['required']).toEqual(['file_path']);
  });

  it('sends inputJSONSchema unchanged when a tool has one (MCP tools)', async () => {
    const jsonSchema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
    const tool: Tool = {
      name: 'mcp__search__query',
      description: () => Promise.resolve('Searches.'),
      inputSchema: z.record(z.string(), z.unknown()),
      inputJSONSchema: jsonSchema,
      isMcp: true,
      call: () => Promise.resolve({ content: '' }),
      isReadOnly: () => true,
      isConcurrencySafe: () => true,
    };
    expect(await toolToApiSchema(tool)).toEqual({
      name: 'mcp__search__query',
      description: 'Searches.',
      input_schema: jsonSchema,
    });
  });
});
