/** A JSON object as parsed from a request body. */
export type JsonObject = Record<string, unknown>;

/** A content block as received over the wire (`type` plus whatever fields it carries). */
export type WireBlock = JsonObject & { type: string };

/** A cache breakpoint's time to live. */
export type CacheTtl = '5m' | '1h';

/** A message after validation: content is always a block list, consecutive same-role messages are merged. */
export type NormalizedMessage = {
  /** Who speaks. */
  role: 'user' | 'assistant';
  /** The content blocks (a string content becomes one text block). */
  content: WireBlock[];
  /** Index, in the request's `messages`, of the first message merged into this one. */
  sourceIndex: number;
};

/** A Messages API request after validation. */
export type NormalizedRequest = {
  /** Model name as sent. */
  model: string;
  /** `max_tokens`; undefined only for count_tokens. */
  maxTokens: number | undefined;
  /** True when the caller asked for server-sent events. */
  stream: boolean;
  /** System prompt blocks (a string system becomes one text block). */
  system: WireBlock[];
  /** Messages, merged by role. */
  messages: NormalizedMessage[];
  /** Tool definitions as sent. */
  tools: JsonObject[];
  /** The `thinking` parameter, if any. */
  thinking: JsonObject | undefined;
  /** The `tool_choice` parameter, if any. */
  toolChoice: unknown;
  /** TTL of the top-level (automatic) cache marker, when present. */
  automaticCacheTtl: CacheTtl | undefined;
  /** `stop_sequences`, or an empty list. */
  stopSequences: string[];
  /** The parsed body as received. */
  body: JsonObject;
};
