import {
  TOKEN_OVERHEAD,
  blockPayload,
  estimateBlockTokens,
  estimateToolTokens,
  stripCacheControl,
} from './estimate-tokens.js';
import { sha256Hex } from './hash.js';
import type { CacheTtl, JsonObject, NormalizedRequest } from './wire-types.js';

/** One block of the cache prefix, in the order tools → system → messages. */
export type PrefixBlock = {
  /** 0-based position in the flattened prefix. */
  position: number;
  /** Which part of the request the block comes from. */
  part: 'tools' | 'system' | 'messages';
  /** The block's type (`text`, `tool_use`, `tool_result`, …); `tool` for a tool definition. */
  type: string;
  /** For message blocks: index of the (merged) message. */
  messageIndex: number | undefined;
  /** Estimated tokens of this block (message overhead included on a message's first block). */
  tokens: number;
  /** Estimated tokens of the prefix up to and including this block. */
  cumulativeTokens: number;
  /** Hash chain of every block up to and including this one: the cache key of this prefix. */
  hash: string;
  /** The breakpoint on this block, if it carries one (explicit or the automatic marker). */
  breakpoint: { ttl: CacheTtl; automatic: boolean } | undefined;
};

/** Hashes of each part of a request, to compare requests (a parent and its forks) part by part. */
export type RequestFingerprint = {
  /** Hash of all tool definitions (breakpoints removed). */
  tools: string;
  /** Hash of the system blocks. */
  system: string;
  /** Hash of the thinking config and tool_choice, which key the message part of the cache. */
  thinking: string;
  /** Hash of each (merged) message. */
  messages: string[];
  /** The hash chain at the last block: equal for two requests only if their whole prefix is equal. */
  prefix: string;
};

/** The flattened prefix of a request. */
export type FlattenedPrefix = {
  /** Every block, in cache order. */
  blocks: PrefixBlock[];
  /** Estimated input tokens of the whole request. */
  totalTokens: number;
  /** Part-by-part hashes. */
  fingerprint: RequestFingerprint;
};

function sortFields(block: JsonObject): JsonObject {
  return Object.fromEntries(
    Object.keys(block)
      .sort()
      .map((key) => {
        const value = block[key];
        if (key !== 'content' || !Array.isArray(value)) return [key, value];
        return [
          key,
          value.map((item: unknown) =>
            typeof item === 'object' && item !== null && !Array.isArray(item)
              ? sortFields(item as JsonObject)
              : item,
          ),
        ];
      }),
  );
}

/**
 * The cache-key text of a block or tool definition: its JSON without `cache_control`, with the
 * block's own fields (and those of nested content blocks) in sorted order. The API reads fields by
 * name, so `{type, text}` and `{text, type}` render the same prompt; user data such as a tool's
 * `input` or `input_schema` keeps its order.
 */
function blockKey(block: JsonObject): string {
  return stripCacheControl(sortFields(block));
}

function ttlOf(item: JsonObject): CacheTtl | undefined {
  const control = item.cache_control;
  if (typeof control !== 'object' || control === null) return undefined;
  return (control as JsonObject).ttl === '1h' ? '1h' : '5m';
}

/**
 * Flattens a request into its cache prefix: each tool definition, each system block and each
 * message content block is one block. Every block's hash chains all blocks before it, so a change
 * to tools changes every key, a change to system changes system and message keys, and the
 * thinking config and tool_choice (mixed in before the first message block) change message keys only.
 * `cache_control` never enters a hash, so moving a breakpoint keeps the keys.
 */
export function flattenPrefix(request: NormalizedRequest): FlattenedPrefix {
  const blocks: PrefixBlock[] = [];
  let chain = sha256Hex('api-sim/prefix/v1');
  let cumulative = 0;
  const push = (
    where: { part: PrefixBlock['part']; type: string; messageIndex: number | undefined },
    tokens: number,
    content: string,
    ttl: CacheTtl | undefined,
  ): void => {
    const { part, type, messageIndex } = where;
    chain = sha256Hex(chain, part, content);
    cumulative += tokens;
    blocks.push({
      position: blocks.length,
      part,
      type,
      messageIndex,
      tokens,
      cumulativeTokens: cumulative,
      hash: chain,
      breakpoint: ttl === undefined ? undefined : { ttl, automatic: false },
    });
  };

  for (const tool of request.tools) {
    const where = { part: 'tools' as const, type: 'tool', messageIndex: undefined };
    push(where, estimateToolTokens(tool), blockKey(tool), ttlOf(tool));
  }
  for (const block of request.system) {
    const where = { part: 'system' as const, type: block.type, messageIndex: undefined };
    push(where, estimateBlockTokens(block), blockPayload(block), ttlOf(block));
  }
  const thinkingHash = sha256Hex(
    stripCacheControl(request.thinking ? sortFields(request.thinking) : null),
    stripCacheControl(
      typeof request.toolChoice === 'object' && request.toolChoice !== null
        ? sortFields(request.toolChoice as JsonObject)
        : (request.toolChoice ?? null),
    ),
  );
  const messageHashes: string[] = [];
  request.messages.forEach((message, messageIndex) => {
    const messageParts: string[] = [message.role];
    message.content.forEach((block, blockIndex) => {
      const first = blockIndex === 0;
      const content = `${first ? `${message.role}:` : ''}${block.type}:${blockKey(block)}`;
      messageParts.push(content);
      // The thinking config keys the message part of the cache: mix it in before the first message block.
      const keyed = messageIndex === 0 && first ? `${thinkingHash}|${content}` : content;
      const tokens = estimateBlockTokens(block) + (first ? TOKEN_OVERHEAD.message : 0);
      push({ part: 'messages', type: block.type, messageIndex }, tokens, keyed, ttlOf(block));
    });
    messageHashes.push(sha256Hex(...messageParts));
  });

  if (request.automaticCacheTtl !== undefined) {
    const target = findAutomaticTarget(request, blocks);
    if (target && target.breakpoint === undefined) {
      target.breakpoint = { ttl: request.automaticCacheTtl, automatic: true };
    }
  }

  return {
    blocks,
    totalTokens: cumulative,
    fingerprint: {
      tools: sha256Hex(...request.tools.map((tool) => blockKey(tool))),
      system: sha256Hex(...request.system.map((block) => blockPayload(block))),
      thinking: thinkingHash,
      messages: messageHashes,
      prefix: chain,
    },
  };
}

function findAutomaticTarget(
  request: NormalizedRequest,
  blocks: PrefixBlock[],
): PrefixBlock | undefined {
  // The automatic marker lands on the last block that may carry cache_control (not thinking).
  const messageTypes = request.messages.flatMap((message) =>
    message.content.map((block) => block.type),
  );
  const firstMessagePosition = blocks.length - messageTypes.length;
  for (let position = blocks.length - 1; position >= 0; position--) {
    if (position >= firstMessagePosition) {
      const type = messageTypes[position - firstMessagePosition];
      if (type === 'thinking' || type === 'redacted_thinking') continue;
    }
    return blocks[position];
  }
  return undefined;
}
