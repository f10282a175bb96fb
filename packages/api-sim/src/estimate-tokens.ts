import type { JsonObject, WireBlock } from './wire-types.js';

/**
 * Fixed token costs the estimator adds on top of `ceil(utf8 bytes / 4)` of each payload.
 * They stand in for the role markers and block framing a real tokenizer would count.
 */
export const TOKEN_OVERHEAD = {
  /** Added once per message (on its first block). */
  message: 4,
  /** Added per text, thinking or redacted-thinking block (messages and system). */
  block: 3,
  /** Added per tool_use or tool_result block. */
  toolBlock: 10,
  /** Added per tool definition. */
  tool: 12,
  /** Flat cost of an image block (the simulator does not read image sizes). */
  image: 1000,
} as const;

/** Estimates the tokens of a text: `ceil(utf8 bytes / 4)`, 0 for an empty string. */
export function estimateTextTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 4);
}

/** Returns `value` serialized as JSON without any `cache_control` fields, so moving a breakpoint changes nothing. */
export function stripCacheControl(value: unknown): string {
  return JSON.stringify(value, (key, inner: unknown) =>
    key === 'cache_control' ? undefined : inner,
  );
}

/** The text a content block contributes to the estimate (and to its cache hash). */
export function blockPayload(block: WireBlock): string {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : '';
    case 'thinking':
      return typeof block.thinking === 'string' ? block.thinking : '';
    case 'redacted_thinking':
      return typeof block.data === 'string' ? block.data : '';
    case 'tool_use':
      return `${String(block.name)}${stripCacheControl(block.input ?? {})}`;
    case 'tool_result':
      return toolResultText(block.content);
    default:
      return stripCacheControl(block);
  }
}

/** Estimates the input tokens of one message content block or system block. */
export function estimateBlockTokens(block: WireBlock): number {
  switch (block.type) {
    case 'image':
      return TOKEN_OVERHEAD.image;
    case 'tool_use':
    case 'tool_result':
      return estimateTextTokens(blockPayload(block)) + TOKEN_OVERHEAD.toolBlock;
    default:
      return estimateTextTokens(blockPayload(block)) + TOKEN_OVERHEAD.block;
  }
}

/** Estimates the input tokens of one tool definition (its JSON without `cache_control`). */
export function estimateToolTokens(tool: JsonObject): number {
  return estimateTextTokens(stripCacheControl(tool)) + TOKEN_OVERHEAD.tool;
}

/** The text of a tool_result's content: a string as is, text blocks joined by newlines, other blocks as JSON. */
export function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((item: unknown) => {
      if (typeof item === 'object' && item !== null && (item as JsonObject).type === 'text') {
        const text = (item as JsonObject).text;
        return typeof text === 'string' ? text : '';
      }
      return stripCacheControl(item);
    })
    .join('\n');
}
