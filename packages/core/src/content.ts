import { z } from 'zod';

/** A prompt-cache breakpoint, as the Messages API accepts it on a block. */
export const CacheControl = z.object({
  /** Always `ephemeral`: the only cache type the API offers. */
  type: z.literal('ephemeral'),
  /** Time to live of the cache entry this breakpoint writes; the API's default is `5m`. */
  ttl: z.enum(['5m', '1h']).optional(),
});
export type CacheControl = z.infer<typeof CacheControl>;

/** A plain text block. */
export const TextBlock = z.object({
  /** Block discriminator. */
  type: z.literal('text'),
  /** The text; the API refuses an empty string in a request. */
  text: z.string(),
  /** Optional cache breakpoint placed after this block. */
  cache_control: CacheControl.nullish(),
});
export type TextBlock = z.infer<typeof TextBlock>;

/** A request by the model to call a tool. */
export const ToolUseBlock = z.object({
  /** Block discriminator. */
  type: z.literal('tool_use'),
  /** Id the matching `tool_result` must quote (`toolu_…`). */
  id: z.string(),
  /** Name of the tool to call. */
  name: z.string(),
  /** Tool input, a JSON object matching the tool's input schema. */
  input: z.unknown(),
  /** Optional cache breakpoint placed after this block. */
  cache_control: CacheControl.nullish(),
});
export type ToolUseBlock = z.infer<typeof ToolUseBlock>;

/** The result of a tool call, sent back in the next user message. */
export const ToolResultBlock = z.object({
  /** Block discriminator. */
  type: z.literal('tool_result'),
  /** Id of the `tool_use` block this answers. */
  tool_use_id: z.string(),
  /** Result text, or a list of text blocks. */
  content: z.union([z.string(), z.array(TextBlock)]).optional(),
  /** True when the tool failed; the model sees the content as an error. */
  is_error: z.boolean().optional(),
  /** Optional cache breakpoint placed after this block. */
  cache_control: CacheControl.nullish(),
});
export type ToolResultBlock = z.infer<typeof ToolResultBlock>;

/** Extended thinking produced by the model, with the signature the API checks. */
export const ThinkingBlock = z.object({
  /** Block discriminator. */
  type: z.literal('thinking'),
  /** The model's reasoning text. */
  thinking: z.string(),
  /** Opaque signature that must be sent back unchanged. */
  signature: z.string(),
});
export type ThinkingBlock = z.infer<typeof ThinkingBlock>;

/** Thinking the API returned encrypted; sent back unchanged. */
export const RedactedThinkingBlock = z.object({
  /** Block discriminator. */
  type: z.literal('redacted_thinking'),
  /** Encrypted thinking payload. */
  data: z.string(),
});
export type RedactedThinkingBlock = z.infer<typeof RedactedThinkingBlock>;

/** Any content block Delegate sends or receives. */
export const ContentBlock = z.discriminatedUnion('type', [
  TextBlock,
  ToolUseBlock,
  ToolResultBlock,
  ThinkingBlock,
  RedactedThinkingBlock,
]);
export type ContentBlock = z.infer<typeof ContentBlock>;

/** A message as it goes over the wire: a role and its content. */
export const ApiMessage = z.object({
  /** Who speaks. */
  role: z.enum(['user', 'assistant']),
  /** A string, or a list of content blocks. */
  content: z.union([z.string(), z.array(ContentBlock)]),
});
export type ApiMessage = z.infer<typeof ApiMessage>;

/** A system prompt block (the API's `system` array entries). */
export const SystemBlock = TextBlock;
export type SystemBlock = TextBlock;
