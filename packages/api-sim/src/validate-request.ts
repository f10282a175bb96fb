import { invalidRequest } from './api-error.js';
import type {
  CacheTtl,
  JsonObject,
  NormalizedMessage,
  NormalizedRequest,
  WireBlock,
} from './wire-types.js';

/** The most cache breakpoints one request may carry, as in the real API. */
export const MAX_CACHE_BREAKPOINTS = 4;

const KNOWN_MESSAGE_BLOCKS = [
  'text',
  'image',
  'document',
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
  'search_result',
];
const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,128}$/;
const THINKING_DOCS =
  'https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readCacheControl(value: unknown, path: string): CacheTtl | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value) || value.type !== 'ephemeral') {
    throw invalidRequest(`${path}.type: Input should be 'ephemeral'`);
  }
  if (value.ttl === undefined || value.ttl === null) return '5m';
  if (value.ttl !== '5m' && value.ttl !== '1h') {
    throw invalidRequest(`${path}.ttl: Input should be '5m' or '1h'`);
  }
  return value.ttl;
}

function checkText(block: JsonObject, part: 'messages' | 'system', path: string): void {
  if (typeof block.text !== 'string') throw invalidRequest(`${path}.text: Field required`);
  if (block.text.length === 0)
    throw invalidRequest(`${part}: text content blocks must be non-empty`);
  if (block.text.trim().length === 0) {
    throw invalidRequest(`${part}: text content blocks must contain non-whitespace text`);
  }
}

function checkMessageBlock(block: unknown, role: string, path: string): WireBlock {
  if (!isObject(block) || typeof block.type !== 'string') {
    throw invalidRequest(
      `${path}: Input should be a valid dictionary or object with a 'type' field`,
    );
  }
  const type = block.type;
  if (!KNOWN_MESSAGE_BLOCKS.includes(type)) {
    throw invalidRequest(
      `${path}: Input tag '${type}' found using 'type' does not match any of the expected tags: ${KNOWN_MESSAGE_BLOCKS.map((name) => `'${name}'`).join(', ')}`,
    );
  }
  readCacheControl(block.cache_control, `${path}.${type}.cache_control`);
  switch (type) {
    case 'text':
      checkText(block, 'messages', path);
      break;
    case 'tool_use':
      if (role !== 'assistant') {
        throw invalidRequest(`${path}: tool_use blocks may only appear in assistant messages`);
      }
      if (typeof block.id !== 'string') throw invalidRequest(`${path}.tool_use.id: Field required`);
      if (typeof block.name !== 'string')
        throw invalidRequest(`${path}.tool_use.name: Field required`);
      if (!isObject(block.input)) {
        throw invalidRequest(`${path}.tool_use.input: Input should be a valid dictionary`);
      }
      break;
    case 'tool_result':
      if (role !== 'user') {
        throw invalidRequest(`${path}: tool_result blocks may only appear in user messages`);
      }
      if (typeof block.tool_use_id !== 'string') {
        throw invalidRequest(`${path}.tool_result.tool_use_id: Field required`);
      }
      break;
    case 'thinking':
    case 'redacted_thinking':
      if (block.cache_control !== undefined && block.cache_control !== null) {
        throw invalidRequest(`${path}.${type}.cache_control: Extra inputs are not permitted`);
      }
      if (
        type === 'thinking' &&
        (typeof block.thinking !== 'string' || typeof block.signature !== 'string')
      ) {
        throw invalidRequest(
          `${path}.thinking: thinking blocks need both \`thinking\` and \`signature\``,
        );
      }
      break;
    default:
      break;
  }
  return block as WireBlock;
}

function readSystem(system: unknown): WireBlock[] {
  if (system === undefined || system === null) return [];
  if (typeof system === 'string')
    return system.length === 0 ? [] : [{ type: 'text', text: system }];
  if (!Array.isArray(system))
    throw invalidRequest('system: Input should be a valid string or list');
  return system.map((block: unknown, index) => {
    const path = `system.${index}`;
    if (!isObject(block) || block.type !== 'text') {
      throw invalidRequest(`${path}.type: Input should be 'text'`);
    }
    checkText(block, 'system', path);
    readCacheControl(block.cache_control, `${path}.cache_control`);
    return block as WireBlock;
  });
}

function readTools(tools: unknown): JsonObject[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw invalidRequest('tools: Input should be a valid list');
  const names = new Set<string>();
  return tools.map((tool: unknown, index) => {
    if (!isObject(tool)) throw invalidRequest(`tools.${index}: Input should be a valid dictionary`);
    const custom = tool.type === undefined || tool.type === null || tool.type === 'custom';
    const path = custom ? `tools.${index}.custom` : `tools.${index}`;
    if (typeof tool.name !== 'string') throw invalidRequest(`${path}.name: Field required`);
    if (!TOOL_NAME_PATTERN.test(tool.name)) {
      throw invalidRequest(`${path}.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`);
    }
    if (custom && !isObject(tool.input_schema)) {
      throw invalidRequest(`${path}.input_schema: Field required`);
    }
    readCacheControl(tool.cache_control, `${path}.cache_control`);
    if (names.has(tool.name)) throw invalidRequest('tools: Tool names must be unique.');
    names.add(tool.name);
    return tool;
  });
}

type BlockOrigin = { message: number; block: number };

function readMessages(messages: unknown[]): {
  merged: NormalizedMessage[];
  origins: BlockOrigin[][];
} {
  const merged: NormalizedMessage[] = [];
  const origins: BlockOrigin[][] = [];
  messages.forEach((message: unknown, index) => {
    const path = `messages.${index}`;
    if (!isObject(message)) throw invalidRequest(`${path}: Input should be a valid dictionary`);
    const role = message.role;
    if (role !== 'user' && role !== 'assistant') {
      throw invalidRequest(`${path}.role: Input should be 'user' or 'assistant'`);
    }
    const isFinalAssistant = role === 'assistant' && index === messages.length - 1;
    let blocks: WireBlock[];
    if (typeof message.content === 'string') {
      if (message.content.length === 0 && !isFinalAssistant) {
        throw invalidRequest(
          `${path}: all messages must have non-empty content except for the optional final assistant message`,
        );
      }
      blocks = message.content.length === 0 ? [] : [{ type: 'text', text: message.content }];
    } else if (Array.isArray(message.content)) {
      if (message.content.length === 0 && !isFinalAssistant) {
        throw invalidRequest(
          `${path}: all messages must have non-empty content except for the optional final assistant message`,
        );
      }
      blocks = message.content.map((block: unknown, blockIndex) =>
        checkMessageBlock(block, role, `${path}.content.${blockIndex}`),
      );
    } else {
      throw invalidRequest(`${path}.content: Field required`);
    }
    const blockOrigins = blocks.map((_, blockIndex) => ({ message: index, block: blockIndex }));
    const previous = merged.at(-1);
    // The real API joins consecutive messages of one role into one turn; so does the simulator.
    if (previous && previous.role === role) {
      previous.content.push(...blocks);
      origins.at(-1)?.push(...blockOrigins);
    } else {
      merged.push({ role, content: blocks, sourceIndex: index });
      origins.push(blockOrigins);
    }
  });
  return { merged, origins };
}

function checkToolPairing(merged: NormalizedMessage[], origins: BlockOrigin[][]): void {
  merged.forEach((message, index) => {
    if (message.role === 'user') {
      const previous = merged[index - 1];
      const offered = new Set(
        (previous?.role === 'assistant' ? previous.content : [])
          .filter((block) => block.type === 'tool_use')
          .map((block) => String(block.id)),
      );
      message.content.forEach((block, blockIndex) => {
        if (block.type !== 'tool_result' || offered.has(String(block.tool_use_id))) return;
        const origin = origins[index]?.[blockIndex];
        throw invalidRequest(
          `messages.${origin?.message ?? message.sourceIndex}.content.${origin?.block ?? blockIndex}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
      });
      return;
    }
    const ids = message.content
      .filter((block) => block.type === 'tool_use')
      .map((block) => String(block.id));
    if (ids.length === 0) return;
    const next = merged[index + 1];
    const answered = new Set(
      (next?.content ?? [])
        .filter((block) => block.type === 'tool_result')
        .map((block) => String(block.tool_use_id)),
    );
    const missing = ids.filter((id) => !answered.has(id));
    if (missing.length > 0) {
      throw invalidRequest(
        `messages.${message.sourceIndex}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      );
    }
  });
}

function readThinking(thinking: unknown, maxTokens: number | undefined): JsonObject | undefined {
  if (thinking === undefined || thinking === null) return undefined;
  if (!isObject(thinking) || typeof thinking.type !== 'string') {
    throw invalidRequest('thinking: Input should be a valid dictionary with a `type`');
  }
  if (thinking.type === 'enabled') {
    const budget = thinking.budget_tokens;
    if (typeof budget !== 'number' || !Number.isInteger(budget)) {
      throw invalidRequest('thinking.enabled.budget_tokens: Field required');
    }
    if (budget < 1024) {
      throw invalidRequest(
        'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024',
      );
    }
    if (maxTokens !== undefined && maxTokens <= budget) {
      throw invalidRequest(
        `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. Please consult our documentation at ${THINKING_DOCS}`,
      );
    }
  }
  return thinking;
}

function lastCacheableBlock(
  tools: JsonObject[],
  system: WireBlock[],
  messages: NormalizedMessage[],
): JsonObject | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const content = messages[index]?.content ?? [];
    for (let blockIndex = content.length - 1; blockIndex >= 0; blockIndex--) {
      const block = content[blockIndex];
      if (block && block.type !== 'thinking' && block.type !== 'redacted_thinking') return block;
    }
  }
  return system.at(-1) ?? tools.at(-1);
}

function ttlOf(item: JsonObject): CacheTtl | undefined {
  const control = item.cache_control;
  if (!isObject(control)) return undefined;
  return control.ttl === '1h' ? '1h' : '5m';
}

function checkTtlOrder(options: {
  tools: JsonObject[];
  system: WireBlock[];
  merged: NormalizedMessage[];
  origins: BlockOrigin[][];
  automaticTtl: CacheTtl | undefined;
}): void {
  // Longer TTLs must come first in tools → system → messages order: a 1h breakpoint after a 5m one is refused.
  const marked: { ttl: CacheTtl; path: string }[] = [];
  options.tools.forEach((tool, index) => {
    const ttl = ttlOf(tool);
    if (ttl) marked.push({ ttl, path: `tools.${index}` });
  });
  options.system.forEach((block, index) => {
    const ttl = ttlOf(block);
    if (ttl) marked.push({ ttl, path: `system.${index}` });
  });
  options.merged.forEach((message, messageIndex) => {
    message.content.forEach((block, blockIndex) => {
      const ttl = ttlOf(block);
      const origin = options.origins[messageIndex]?.[blockIndex];
      if (ttl) {
        marked.push({
          ttl,
          path: `messages.${origin?.message ?? messageIndex}.content.${origin?.block ?? blockIndex}`,
        });
      }
    });
  });
  if (options.automaticTtl !== undefined) {
    const last = lastCacheableBlock(options.tools, options.system, options.merged);
    if (last && ttlOf(last) === undefined) marked.push({ ttl: options.automaticTtl, path: '' });
  }
  let seenShort = false;
  for (const { ttl, path } of marked) {
    if (ttl === '5m') seenShort = true;
    else if (seenShort) {
      throw invalidRequest(
        `${path === '' ? '' : `${path}.`}cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: \`tools\`, \`system\`, \`messages\`.`,
      );
    }
  }
}

function checkFinalAssistant(merged: NormalizedMessage[]): void {
  const last = merged.at(-1);
  if (last?.role !== 'assistant') return;
  const block = last.content.at(-1);
  if (block?.type === 'text' && typeof block.text === 'string' && /\s$/u.test(block.text)) {
    throw invalidRequest('messages: final assistant content cannot end with trailing whitespace');
  }
}

function countBreakpoints(
  tools: JsonObject[],
  system: WireBlock[],
  messages: NormalizedMessage[],
  automaticTtl: CacheTtl | undefined,
): number {
  const marked = (item: JsonObject) =>
    item.cache_control === undefined || item.cache_control === null ? 0 : 1;
  let count = 0;
  for (const tool of tools) count += marked(tool);
  for (const block of system) count += marked(block);
  for (const message of messages) for (const block of message.content) count += marked(block);
  if (automaticTtl !== undefined) {
    const last = lastCacheableBlock(tools, system, messages);
    if (last && marked(last) === 0) count += 1;
  }
  return count;
}

/**
 * Validates a `/v1/messages` (or `/v1/messages/count_tokens`) body the way the real API does and
 * returns it normalized: string contents become text blocks and consecutive same-role messages are
 * merged (the real API joins them into one turn). Throws a 400 `SimApiError` with the real wording.
 */
export function validateMessagesRequest(
  body: unknown,
  options: { requireMaxTokens: boolean },
): NormalizedRequest {
  if (!isObject(body)) throw invalidRequest('Request body must be a JSON object.');
  if (body.model === undefined) throw invalidRequest('model: Field required');
  if (typeof body.model !== 'string' || body.model.length === 0) {
    throw invalidRequest('model: Input should be a valid string');
  }
  if (body.messages === undefined) throw invalidRequest('messages: Field required');
  if (!Array.isArray(body.messages)) throw invalidRequest('messages: Input should be a valid list');
  let maxTokens: number | undefined;
  if (options.requireMaxTokens) {
    if (body.max_tokens === undefined) throw invalidRequest('max_tokens: Field required');
    if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens)) {
      throw invalidRequest('max_tokens: Input should be a valid integer');
    }
    if (body.max_tokens < 1)
      throw invalidRequest('max_tokens: Input should be greater than or equal to 1');
    maxTokens = body.max_tokens;
  }
  if (body.stream !== undefined && typeof body.stream !== 'boolean') {
    throw invalidRequest('stream: Input should be a valid boolean');
  }
  const tools = readTools(body.tools);
  const system = readSystem(body.system);
  if (body.messages.length === 0)
    throw invalidRequest('messages: at least one message is required');
  const { merged, origins } = readMessages(body.messages);
  if (merged[0]?.role !== 'user')
    throw invalidRequest('messages: first message must use the "user" role');
  checkToolPairing(merged, origins);
  const thinking = readThinking(body.thinking, maxTokens);
  const automaticCacheTtl = readCacheControl(body.cache_control, 'cache_control');
  const breakpoints = countBreakpoints(tools, system, merged, automaticCacheTtl);
  if (breakpoints > MAX_CACHE_BREAKPOINTS) {
    throw invalidRequest(
      `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints}.`,
    );
  }
  checkTtlOrder({ tools, system, merged, origins, automaticTtl: automaticCacheTtl });
  checkFinalAssistant(merged);
  let stopSequences: string[] = [];
  if (body.stop_sequences !== undefined && body.stop_sequences !== null) {
    if (
      !Array.isArray(body.stop_sequences) ||
      body.stop_sequences.some((item) => typeof item !== 'string')
    ) {
      throw invalidRequest('stop_sequences: Input should be a valid list of strings');
    }
    stopSequences = body.stop_sequences as string[];
  }
  return {
    model: body.model,
    maxTokens,
    stream: body.stream === true,
    system,
    messages: merged,
    tools,
    thinking,
    toolChoice: body.tool_choice,
    automaticCacheTtl,
    stopSequences,
    body,
  };
}
