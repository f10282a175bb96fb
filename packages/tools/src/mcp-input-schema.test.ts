import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_MCP_INPUT_SCHEMA_CHARS, capMcpInputSchema } from './mcp-input-schema.js';

describe('capMcpInputSchema', () => {
  it('returns a schema within the limit as it is', () => {
    const schema = { type: 'object', properties: { a: { type: 'string', description: 'A.' } } };
    expect(capMcpInputSchema(schema).schema).toBe(schema);
  });

  it('cuts long descriptions until the schema fits, keeping everything else', () => {
    const schema = {
      type: 'object',
      description: 'd'.repeat(40_000),
      properties: { description: { type: 'string', description: 'p'.repeat(40_000) } },
      required: ['description'],
    };
    const capped = capMcpInputSchema(schema);
    expect(capped).toMatchObject({
      originalChars: JSON.stringify(schema).length,
      descriptionsCutTo: 2048,
    });
    expect(JSON.stringify(capped.schema).length).toBe(capped.chars);
    expect(capped.chars).toBeLessThanOrEqual(MAX_MCP_INPUT_SCHEMA_CHARS);
    expect(capped.schema).toMatchObject({
      type: 'object',
      properties: { description: { type: 'string' } },
      required: ['description'],
    });
  });

  it('gives no schema when cutting descriptions is not enough', () => {
    const schema = { type: 'object', properties: { a: { enum: ['e'.repeat(50_000)] } } };
    expect(capMcpInputSchema(schema).schema).toBeUndefined();
  });

  it('never returns a schema over the limit', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const capped = capMcpInputSchema({ type: 'object', value }, 200);
        if (capped.schema !== undefined) {
          expect(JSON.stringify(capped.schema).length).toBeLessThanOrEqual(200);
        }
      }),
    );
  });
});
