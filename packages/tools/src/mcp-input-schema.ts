/**
 * Longest input schema of an MCP tool, as JSON, sent to the API (about 8,000 tokens): every
 * request of every agent carries every tool's schema, so a server could otherwise flood the
 * prompt through it, past the cap on descriptions.
 */
export const MAX_MCP_INPUT_SCHEMA_CHARS = 32_000;

/** The lengths that `description` strings inside an oversized schema are cut to, in turn. */
const descriptionLimits = [2048, 256] as const;

/** What `capMcpInputSchema` made of a schema. */
export type CappedMcpInputSchema =
  | {
      /** The schema to send: the original when it fits, else one with descriptions cut. */
      schema: Record<string, unknown>;
      /** Length of the original as JSON. */
      originalChars: number;
      /** Length of `schema` as JSON. */
      chars: number;
      /** Length `description` strings were cut to, when they were. */
      descriptionsCutTo?: number;
    }
  | {
      /** No schema fits: the tool should be left out. */
      schema: undefined;
      originalChars: number;
      /** Length as JSON with every description cut as far as it goes (or the original's). */
      chars: number;
    };

function serialize(
  schema: Record<string, unknown>,
  maxDescriptionChars = Infinity,
): string | undefined {
  try {
    return JSON.stringify(schema, (key, value: unknown) =>
      key === 'description' && typeof value === 'string' && value.length > maxDescriptionChars
        ? `${value.slice(0, maxDescriptionChars)}…`
        : value,
    );
  } catch {
    // Nested too deeply to serialize: the request could not carry it either.
    return undefined;
  }
}

/**
 * Keeps an MCP tool's input schema within `maxChars` characters of JSON (default 32,000). A
 * schema that fits is returned as it is; a larger one gets its `description` strings cut
 * (to 2,048 characters, then to 256) until it fits; one that still does not fit (its size is
 * in `enum`, `default`, nesting…) gives `schema: undefined`.
 */
export function capMcpInputSchema(
  schema: Record<string, unknown>,
  maxChars = MAX_MCP_INPUT_SCHEMA_CHARS,
): CappedMcpInputSchema {
  const original = serialize(schema);
  if (original === undefined)
    return { schema: undefined, originalChars: Infinity, chars: Infinity };
  if (original.length <= maxChars) {
    return { schema, originalChars: original.length, chars: original.length };
  }
  let chars = original.length;
  for (const limit of descriptionLimits) {
    const cut = serialize(schema, limit);
    if (cut === undefined) break;
    chars = cut.length;
    if (cut.length <= maxChars) {
      return {
        schema: JSON.parse(cut) as Record<string, unknown>,
        originalChars: original.length,
        chars,
        descriptionsCutTo: limit,
      };
    }
  }
  return { schema: undefined, originalChars: original.length, chars };
}
