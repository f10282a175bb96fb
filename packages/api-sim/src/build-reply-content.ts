import { estimateTextTokens } from './estimate-tokens.js';
import type { Reply, ReplyBlock } from './policy.js';

/** A content block of a response, in the API's shape. */
export type ResponseBlock =
  | { type: 'text'; text: string; citations: null }
  | {
      type: 'tool_use';
      id: string;
      name: string;
      input: Record<string, unknown>;
      /**
       * The input JSON text a stream sends instead of `input` as JSON: the part sent of a call cut
       * by `max_tokens`, or a reply's `rawInput`.
       */
      partialJson?: string;
    }
  | { type: 'thinking'; thinking: string; signature: string };

/** Why a response ended. */
export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';

/** A reply turned into response content. */
export type BuiltReply = {
  /** The content blocks. */
  content: ResponseBlock[];
  /** Why the answer ended. */
  stopReason: StopReason;
  /** The stop sequence that ended it, if any. */
  stopSequence: string | null;
  /** Estimated output tokens. */
  outputTokens: number;
};

/** Options of `buildReplyContent`. */
export type BuildReplyOptions = {
  /** The request's `max_tokens`: content past it is cut and the stop reason is `max_tokens`. */
  maxTokens: number;
  /** The request's stop sequences. */
  stopSequences: readonly string[];
  /** Thinking blocks are kept only when the request enables thinking. */
  thinkingEnabled: boolean;
  /**
   * True for a streamed response: a tool call that does not fit is sent cut, its input JSON
   * ending where the tokens ran out (as the API does), and a reply's `rawInput` is sent as the
   * input JSON text; otherwise such a call is dropped and `rawInput` is ignored.
   */
  cutToolCalls?: boolean;
  /** Makes the id of the n-th block when the reply names none. */
  toolUseId: (blockIndex: number) => string;
  /** Makes the signature of a thinking text. */
  sign: (thinking: string) => string;
};

/** Estimated output tokens of one response block. */
export function outputTokensOf(block: ResponseBlock): number {
  switch (block.type) {
    case 'text':
      return estimateTextTokens(block.text);
    case 'thinking':
      return estimateTextTokens(block.thinking);
    case 'tool_use':
      return estimateTextTokens(`${block.name}${block.partialJson ?? JSON.stringify(block.input)}`);
  }
}

function truncateToTokens(text: string, tokens: number): string {
  const budget = tokens * 4;
  let bytes = 0;
  let result = '';
  for (const character of text) {
    bytes += Buffer.byteLength(character, 'utf8');
    if (bytes > budget) break;
    result += character;
  }
  return result;
}

function replyBlocks(reply: Exclude<Reply, { fault: unknown }>): ReplyBlock[] {
  if (typeof reply === 'string') return [{ type: 'text', text: reply }];
  if (Array.isArray(reply)) return reply;
  return typeof reply.content === 'string'
    ? [{ type: 'text', text: reply.content }]
    : reply.content;
}

/**
 * Turns a policy's reply into response content: thinking is dropped unless the request enables it,
 * a stop sequence cuts the text where it starts, and content past `max_tokens` is cut (a text is
 * truncated, a tool call that does not fit is sent cut when `cutToolCalls` is set and dropped
 * otherwise) with stop reason `max_tokens`. Otherwise the
 * stop reason is `tool_use` when the content calls a tool and `end_turn` when it does not.
 */
export function buildReplyContent(
  reply: Exclude<Reply, { fault: unknown }>,
  options: BuildReplyOptions,
): BuiltReply {
  const content: ResponseBlock[] = [];
  let remaining = options.maxTokens;
  let stop: { reason: StopReason; sequence: string | null } | undefined;
  for (const [blockIndex, block] of replyBlocks(reply).entries()) {
    if (block.type === 'thinking' && !options.thinkingEnabled) continue;
    if (block.type === 'tool_use') {
      const built: ResponseBlock = {
        type: 'tool_use',
        id: block.id ?? options.toolUseId(blockIndex),
        name: block.name,
        input: block.input,
        ...(options.cutToolCalls && block.rawInput !== undefined
          ? { partialJson: block.rawInput }
          : {}),
      };
      const cost = outputTokensOf(built);
      if (cost > remaining) {
        stop = { reason: 'max_tokens', sequence: null };
        if (options.cutToolCalls) {
          const json = built.partialJson ?? JSON.stringify(built.input);
          const sent = truncateToTokens(`${built.name}${json}`, remaining);
          content.push({
            ...built,
            input: {},
            partialJson: sent.slice(Math.min(sent.length, built.name.length)),
          });
        }
        break;
      }
      remaining -= cost;
      content.push(built);
      continue;
    }
    let text = block.type === 'text' ? block.text : block.thinking;
    if (block.type === 'text') {
      const found = options.stopSequences
        .map((sequence) => ({ sequence, at: sequence.length > 0 ? text.indexOf(sequence) : -1 }))
        .filter((item) => item.at >= 0)
        .sort((left, right) => left.at - right.at)[0];
      if (found) {
        text = text.slice(0, found.at);
        stop = { reason: 'stop_sequence', sequence: found.sequence };
      }
    }
    if (estimateTextTokens(text) > remaining) {
      text = truncateToTokens(text, remaining);
      stop = { reason: 'max_tokens', sequence: null };
    }
    remaining -= estimateTextTokens(text);
    if (text.length > 0) {
      content.push(
        block.type === 'text'
          ? { type: 'text', text, citations: null }
          : { type: 'thinking', thinking: text, signature: block.signature ?? options.sign(text) },
      );
    }
    if (stop) break;
  }
  const stopReason: StopReason =
    stop?.reason ?? (content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const outputTokens = content.reduce((sum, block) => sum + outputTokensOf(block), 0);
  return {
    content,
    stopReason,
    stopSequence: stop?.sequence ?? null,
    outputTokens: Math.max(1, outputTokens),
  };
}
