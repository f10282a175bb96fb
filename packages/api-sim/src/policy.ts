import type { FaultKind, FaultSpec } from './faults.js';
import type { NormalizedMessage, WireBlock } from './wire-types.js';

/** A tool result carried by the last user message, as a policy sees it. */
export type SimToolResult = {
  /** The `tool_use_id` it answers. */
  toolUseId: string;
  /** Name of the tool that was called (from the previous assistant message), when known. */
  toolName: string | undefined;
  /** The result as text (text blocks joined by newlines). */
  content: string;
  /** True when the result is marked as an error. */
  isError: boolean;
};

/** What a policy sees of one valid `/v1/messages` request. */
export type SimRequest = {
  /** 1-based index of the request on this server (retries get new indexes). */
  index: number;
  /** The `request-id` the response carries. */
  requestId: string;
  /** Model name as sent. */
  model: string;
  /** True for a streaming request. */
  stream: boolean;
  /** The parsed body as received. */
  body: Readonly<Record<string, unknown>>;
  /** The system prompt text (text blocks joined by newlines). */
  system: string;
  /** Messages, with string contents turned into text blocks and same-role neighbours merged. */
  messages: readonly NormalizedMessage[];
  /** Names of the tools offered. */
  toolNames: string[];
  /** Text of the last user message (its text blocks joined by newlines; '' when it has none). */
  lastUserText: string;
  /** The last text block of the last user message, if any. */
  lastTextBlock: string | undefined;
  /** Tool results in the last user message. */
  toolResults: SimToolResult[];
  /** The fork directive found in the last text block, if any. */
  forkDirective: string | undefined;
  /** The agent name from the `x-delegate-agent` header (percent-encoding decoded), if sent. */
  agent: string | undefined;
  /** Hash of the system text and the first user message text: one conversation, whatever its length. */
  conversationKey: string;
  /** Number of assistant messages already in the conversation: 0 for the first turn. */
  turnIndex: number;
  /** True when the request enables extended thinking. */
  thinkingEnabled: boolean;
  /** Request headers (lower-case names). */
  headers: Readonly<Record<string, string>>;
};

/** One block of a scripted answer. */
export type ReplyBlock =
  | { type: 'text'; text: string }
  | {
      type: 'tool_use';
      name: string;
      input: Record<string, unknown>;
      id?: string;
      /**
       * The input JSON text a stream sends instead of `input` as JSON, even when it is not valid
       * JSON (a model's malformed tool input); a non-streamed answer sends `input`.
       */
      rawInput?: string;
    }
  | { type: 'thinking'; thinking: string; signature?: string };

/** A scripted answer: a text, a list of blocks, or a fault to answer with instead. */
export type Reply =
  | string
  | ReplyBlock[]
  | { content: string | ReplyBlock[] }
  | { fault: FaultKind | Omit<FaultSpec, 'probability' | 'onRequests' | 'times' | 'match'> };

/** A reply, or a function computing it from the request. */
export type ReplySource = Reply | ((request: SimRequest) => Reply | Promise<Reply>);

/** A scripted model: maps a request to the assistant's answer. */
export type Policy = (request: SimRequest) => Reply | Promise<Reply>;

/** Resolves a reply source against a request. */
export async function resolveReply(source: ReplySource, request: SimRequest): Promise<Reply> {
  return typeof source === 'function' ? source(request) : source;
}

/** Returns the text of a list of blocks: its text blocks joined by newlines. */
export function textOf(blocks: readonly WireBlock[]): string {
  return blocks
    .filter((block) => block.type === 'text' && typeof block.text === 'string')
    .map((block) => String(block.text))
    .join('\n');
}
