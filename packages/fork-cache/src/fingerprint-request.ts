import { invalidArgument, checkArray, checkObject, checkString } from '@delegate/core';
import { canonicalJson, hashParts, orderedJson } from './canonical-json.js';
import { type LookbackRule, resolveLookbackRule } from './lookback.js';
import {
  type PrefixBlockFingerprint,
  type RawPrefixBlock,
  buildPrefixBlocks,
} from './prefix-blocks.js';

/** A message of a Messages API request body, as far as the cache key is concerned. */
export type CacheKeyMessage = {
  /** `user` or `assistant`. */
  role: string;
  /** A string (shorthand for one text block) or content blocks. */
  content: string | readonly unknown[];
};

/**
 * The parts of a Messages API request body (`MessageCreateParams`) that fingerprinting
 * reads. The SDK's request type fits it structurally; other body fields are accepted and
 * sorted into "part of the cache key" or "ignored" by `fingerprintRequest`.
 */
export type CacheKeyRequest = {
  /** Model id; every model has its own cache. */
  model: string;
  /** System prompt: a string or text blocks. */
  system?: string | readonly unknown[] | null;
  /** Tool definitions, the first part of the cached prefix. */
  tools?: readonly unknown[] | null;
  /** The conversation. */
  messages: readonly CacheKeyMessage[];
  /** Extended-thinking config (`{ type: 'enabled', budget_tokens }`, …). */
  thinking?: unknown;
  /** Ignored: output length does not change the cached prefix. */
  max_tokens?: unknown;
  /** Ignored: streaming is a transport choice. */
  stream?: unknown;
  /** Ignored: request metadata (user id). */
  metadata?: unknown;
  /** Ignored: sampling settings act after the prefix is read. */
  temperature?: unknown;
  /** Ignored: sampling setting. */
  top_p?: unknown;
  /** Ignored: sampling setting. */
  top_k?: unknown;
  /** Ignored: when to stop generating. */
  stop_sequences?: unknown;
  /** Ignored: capacity tier. */
  service_tier?: unknown;
  /** Ignored: a request-level breakpoint marker (automatic caching). */
  cache_control?: unknown;
  /** Part of the key ("options"): a changed tool choice invalidates the cached messages. */
  tool_choice?: unknown;
  /** Part of the key ("options"): the API lists a speed change as a cache invalidator. */
  speed?: unknown;
  /** Part of the key ("options"): output format and effort settings. */
  output_config?: unknown;
  /** Part of the key ("options"): code-execution container. */
  container?: unknown;
  /** Part of the key ("options"): MCP servers whose tools the API adds. */
  mcp_servers?: unknown;
  /** Part of the key ("options"): context editing settings. */
  context_management?: unknown;
  /** Part of the key ("options"): where inference runs. */
  inference_geo?: unknown;
};

/**
 * Body fields that are not part of the prompt-cache key. Sampling settings
 * (`temperature`, `top_p`, `top_k`) and stop sequences only shape the tokens generated
 * after the cached prefix; `max_tokens`, `stream`, `metadata` and `service_tier` do not
 * reach the prompt at all; `cache_control` only says where to write cache entries.
 */
const IGNORED_FIELDS: ReadonlySet<string> = new Set([
  'max_tokens',
  'stream',
  'metadata',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'service_tier',
  'cache_control',
]);

/** Fields fingerprinted as parts of their own. */
const NAMED_PARTS: ReadonlySet<string> = new Set([
  'model',
  'system',
  'tools',
  'messages',
  'thinking',
]);

/** Fingerprint of one content block. */
export type BlockFingerprint = {
  /** The block's `type` (`text`, `tool_use`, `tool_result`, `thinking`, …). */
  type: string;
  /** Hash of the block without `cache_control`. */
  hash: string;
};

/** Fingerprint of one message. */
export type MessageFingerprint = {
  /** `user` or `assistant`. */
  role: string;
  /** Hash of the role and all blocks. */
  hash: string;
  /** One fingerprint per content block (string content counts as one text block). */
  blocks: BlockFingerprint[];
};

/** A hash per cache-key part of a request, plus the chain of prefix hashes. */
export type RequestFingerprint = {
  /** The model; a different model never shares a cache. */
  model: { hash: string; name: string };
  /** All tool definitions, and each one with its name. */
  tools: { hash: string; items: { name: string; hash: string }[] };
  /** The system prompt, and each of its blocks. */
  system: { hash: string; blocks: string[] };
  /** The thinking config, with its canonical JSON for messages (`null` when absent). */
  thinking: { hash: string; canonical: string };
  /**
   * Other body fields that can change the cache key (`tool_choice`, `speed`,
   * `output_config`, …), by field name. Unknown fields land here too: a false alarm in
   * a diagnosis costs less than a cache break that goes unnoticed.
   */
  options: { hash: string; fields: Record<string, string> };
  /** One fingerprint per message. */
  messages: MessageFingerprint[];
  /**
   * The prefix chain: index 0 covers model and tools, index 1 adds the system prompt,
   * index `2 + i` adds message `i` (the first message link also covers thinking and
   * options, which invalidate cached messages but not cached tools or system). Two
   * requests share their prefix up to an index exactly when the hashes there are equal.
   */
  prefixHash: string[];
  /**
   * Every block in cache order (each tool definition, system block and message block) with
   * the hash of the prefix it ends, its lookback position and its breakpoint, if any: where
   * this request writes cache entries and how far back each breakpoint reads.
   */
  prefixBlocks: PrefixBlockFingerprint[];
  /** The lookback the positions were counted with. */
  lookback: LookbackRule;
};

/** Options of `fingerprintRequest`. */
export type FingerprintOptions = {
  /** How the server looks back from a breakpoint (default `STRICT_LOOKBACK`). */
  lookback?: Partial<LookbackRule>;
};

/** Where message `messageIndex` sits in `RequestFingerprint.prefixHash`. */
export const MESSAGE_PREFIX_OFFSET = 2;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Drops the breakpoint marker: it says where to cache, not what is cached. */
function withoutCacheControl(value: unknown): unknown {
  if (!isRecord(value) || !('cache_control' in value)) return value;
  const { cache_control: _cacheControl, ...rest } = value;
  return rest;
}

function normalizeBlock(block: unknown): unknown {
  const stripped = withoutCacheControl(block);
  if (isRecord(stripped) && stripped.type === 'tool_result' && Array.isArray(stripped.content)) {
    return { ...stripped, content: stripped.content.map((inner) => withoutCacheControl(inner)) };
  }
  return stripped;
}

/** A string is the API's shorthand for a single text block; both send the same prompt. */
function normalizeBlocks(content: string | readonly unknown[] | null | undefined): unknown[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((block) => normalizeBlock(block));
}

/**
 * Hashes a tool definition or a content block. The envelope (`type`, `name`, `id`, …)
 * is read by field name, so its key order is ignored; but a JSON payload that the model
 * sees as text (a tool's `input_schema`, a tool call's `input`) is rendered with its
 * keys in the order sent, so there key order is part of the key: `{a, b}` and `{b, a}`
 * are different prompt bytes. `payloadField` names that payload, if the value has one.
 */
function hashWithPayload(value: unknown, payloadField: string | undefined): string {
  if (payloadField === undefined || !isRecord(value) || !(payloadField in value)) {
    return hashParts(canonicalJson(value));
  }
  const { [payloadField]: payload, ...envelope } = value;
  return hashParts(canonicalJson(envelope), payloadField, orderedJson(payload));
}

/** The field of a block whose JSON reaches the prompt as written: `input` of any tool call. */
function blockPayloadField(block: unknown): string | undefined {
  return isRecord(block) && typeof block.type === 'string' && block.type.endsWith('tool_use')
    ? 'input'
    : undefined;
}

function blockType(block: unknown): string {
  return isRecord(block) && typeof block.type === 'string' ? block.type : typeof block;
}

function toolName(tool: unknown): string {
  if (isRecord(tool) && typeof tool.name === 'string') return tool.name;
  if (isRecord(tool) && typeof tool.type === 'string') return tool.type;
  return '(unnamed)';
}

function rawContent(content: string | readonly unknown[] | null | undefined): readonly unknown[] {
  if (content === null || content === undefined) return [];
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

function rawPrefixBlocks(
  request: CacheKeyRequest,
  parts: {
    tools: RequestFingerprint['tools'];
    system: RequestFingerprint['system'];
    messages: MessageFingerprint[];
  },
): RawPrefixBlock[] {
  const tools = rawContent(request.tools).map((tool, toolIndex): RawPrefixBlock => ({
    part: 'tools',
    toolIndex,
    type: 'tool',
    hash: parts.tools.items[toolIndex]?.hash ?? '',
    raw: tool,
  }));
  const system = rawContent(request.system).map((block, blockIndex): RawPrefixBlock => ({
    part: 'system',
    blockIndex,
    type: blockType(block),
    hash: parts.system.blocks[blockIndex] ?? '',
    raw: block,
  }));
  const messages = request.messages.flatMap((message, messageIndex) =>
    rawContent(message.content).map((block, blockIndex): RawPrefixBlock => ({
      part: 'message',
      messageIndex,
      blockIndex,
      type: blockType(block),
      hash: hashParts(message.role, parts.messages[messageIndex]?.blocks[blockIndex]?.hash ?? ''),
      raw: block,
    })),
  );
  return [...tools, ...system, ...messages];
}

function fingerprintMessage(message: CacheKeyMessage): MessageFingerprint {
  const blocks = normalizeBlocks(message.content).map((block): BlockFingerprint => ({
    type: blockType(block),
    hash: hashWithPayload(block, blockPayloadField(block)),
  }));
  return {
    role: message.role,
    hash: hashParts('message', message.role, ...blocks.map((block) => block.hash)),
    blocks,
  };
}

const WHERE = 'fingerprintRequest()';

function checkContent(option: string, value: unknown, expected: string): void {
  if (value === undefined || value === null || typeof value === 'string' || Array.isArray(value)) {
    return;
  }
  throw invalidArgument({ where: WHERE, option, expected, value });
}

// One typeof per message and field: cheap next to the hashing that follows.
function checkRequest(request: unknown, options: unknown): void {
  checkObject(WHERE, 'request', request);
  const body = request as Record<string, unknown>;
  checkString(WHERE, 'request.model', body.model);
  checkContent('request.system', body.system, 'a string or an array of text blocks');
  if (body.tools !== undefined && body.tools !== null) {
    checkArray(WHERE, 'request.tools', body.tools);
  }
  checkArray(WHERE, 'request.messages', body.messages);
  (body.messages as unknown[]).forEach((message, index) => {
    const option = `request.messages[${index}]`;
    checkObject(WHERE, option, message);
    const { role, content } = message as Record<string, unknown>;
    checkString(WHERE, `${option}.role`, role);
    checkContent(`${option}.content`, content, 'a string or an array of content blocks');
  });
  checkObject(WHERE, 'options', options);
}

/**
 * Fingerprints a Messages API request body: a short sha256 hash per cache-key part
 * (model, tools, system, thinking, other key options, each message and each block), the
 * prefix chain, and every block in cache order with its prefix hash, lookback position and
 * breakpoint. Hashes are taken over canonical JSON (sorted keys) without `cache_control`
 * markers, since breakpoints move from turn to turn without changing what is cached (they
 * are recorded apart, in `prefixBlocks`); a tool's `input_schema` and a tool call's `input`
 * keep their key order, since they reach the prompt as written; fields outside the cache
 * key (`max_tokens`, `stream`, `metadata`, `temperature`, `top_p`, `top_k`,
 * `stop_sequences`, `service_tier`) are ignored.
 */
export function fingerprintRequest(
  request: CacheKeyRequest,
  options: FingerprintOptions = {},
): RequestFingerprint {
  checkRequest(request, options);
  const lookback = resolveLookbackRule(options.lookback, WHERE);
  const toolItems = (request.tools ?? []).map((tool) => ({
    name: toolName(tool),
    hash: hashWithPayload(withoutCacheControl(tool), 'input_schema'),
  }));
  const systemBlocks = normalizeBlocks(request.system).map((block) =>
    hashParts(canonicalJson(block)),
  );
  const thinkingCanonical = canonicalJson(request.thinking ?? null);

  const optionFields: Record<string, string> = {};
  for (const key of Object.keys(request).sort()) {
    const value: unknown = (request as Record<string, unknown>)[key];
    if (NAMED_PARTS.has(key) || IGNORED_FIELDS.has(key) || value === undefined) continue;
    optionFields[key] = hashParts(key, canonicalJson(value));
  }

  const model = { hash: hashParts('model', request.model), name: request.model };
  const tools = {
    hash: hashParts('tools', ...toolItems.map((item) => item.hash)),
    items: toolItems,
  };
  const system = { hash: hashParts('system', ...systemBlocks), blocks: systemBlocks };
  const thinking = { hash: hashParts('thinking', thinkingCanonical), canonical: thinkingCanonical };
  const keyOptions = {
    hash: hashParts('options', ...Object.entries(optionFields).flat()),
    fields: optionFields,
  };
  const messages = request.messages.map((message) => fingerprintMessage(message));

  const afterTools = hashParts('prefix', model.hash, tools.hash);
  const afterSystem = hashParts(afterTools, system.hash);
  const prefixHash = [afterTools, afterSystem];
  let previous = hashParts(afterSystem, thinking.hash, keyOptions.hash);
  for (const message of messages) {
    previous = hashParts(previous, message.hash);
    prefixHash.push(previous);
  }
  const prefixBlocks = buildPrefixBlocks({
    seed: hashParts('blocks', model.hash),
    messageKey: hashParts(thinking.hash, keyOptions.hash),
    blocks: rawPrefixBlocks(request, { tools, system, messages }),
    automatic: request.cache_control,
    rule: lookback,
  });
  return {
    model,
    tools,
    system,
    thinking,
    options: keyOptions,
    messages,
    prefixHash,
    prefixBlocks,
    lookback,
  };
}
