import type { ContentBlock, Message, ToolResultBlock } from '@delegate/core';

/** A wire message with its content always as a block list. */
export type WireMessage = { role: 'user' | 'assistant'; content: ContentBlock[] };

/** Tool-result text used when a `tool_use` has no result (interrupted or lost). */
export const MISSING_TOOL_RESULT_TEXT =
  'The tool call did not complete (the run was interrupted before a result was recorded).';

function copyWithoutCacheControl(block: ContentBlock): ContentBlock {
  const copy = { ...block };
  if ('cache_control' in copy) delete copy.cache_control;
  return copy;
}

function isUsableBlock(block: ContentBlock): boolean {
  // The API refuses empty text blocks; drop them rather than fail the whole request.
  return !(block.type === 'text' && block.text.length === 0);
}

/**
 * One message as wire content: the blocks copied without cache markers and without empty
 * text, or undefined for a message the API never sees (system, progress, empty).
 */
export function toWireMessage(message: Message): WireMessage | undefined {
  if (message.type !== 'user' && message.type !== 'assistant') return undefined;
  const source = message.message.content;
  const blocks: ContentBlock[] =
    typeof source === 'string'
      ? [{ type: 'text', text: source }]
      : source.map((block) => copyWithoutCacheControl(block));
  const content = blocks.filter(isUsableBlock);
  return content.length > 0 ? { role: message.type, content } : undefined;
}

/** Joins two consecutive contents of one role; in a user turn, tool results go first. */
export function mergeContent(
  role: 'user' | 'assistant',
  first: readonly ContentBlock[],
  second: readonly ContentBlock[],
): ContentBlock[] {
  const merged = [...first, ...second];
  if (role === 'assistant') return merged;
  return [
    ...merged.filter((block) => block.type === 'tool_result'),
    ...merged.filter((block) => block.type !== 'tool_result'),
  ];
}

/**
 * Turns Delegate messages into wire messages: system and progress messages are left
 * out, empty text blocks dropped, cache markers removed, and consecutive messages of one
 * role merged (tool results first, as the API wants them at the start of a user turn).
 */
export function toWireMessages(messages: readonly Message[]): WireMessage[] {
  const result: WireMessage[] = [];
  for (const message of messages) {
    const wire = toWireMessage(message);
    if (!wire) continue;
    const previous = result[result.length - 1];
    if (previous && previous.role === wire.role) {
      previous.content = mergeContent(wire.role, previous.content, wire.content);
    } else {
      result.push(wire);
    }
  }
  return result;
}

/** The ids of the `tool_use` blocks of a wire message. */
export function toolUseIds(message: WireMessage | undefined): string[] {
  if (message?.role !== 'assistant') return [];
  return message.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : []));
}

function missingResult(id: string): ToolResultBlock {
  return {
    type: 'tool_result',
    tool_use_id: id,
    content: [{ type: 'text', text: MISSING_TOOL_RESULT_TEXT }],
    is_error: true,
  };
}

function isStandIn(block: ToolResultBlock): boolean {
  const content = block.content;
  return (
    block.is_error === true &&
    Array.isArray(content) &&
    content.length === 1 &&
    content[0]?.text === MISSING_TOOL_RESULT_TEXT
  );
}

/** One result per call id, in order of first appearance; a real result wins over a stand-in. */
function uniqueResults(blocks: readonly ToolResultBlock[]): ToolResultBlock[] {
  const byId = new Map<string, ToolResultBlock>();
  for (const block of blocks) {
    const existing = byId.get(block.tool_use_id);
    if (!existing || (isStandIn(existing) && !isStandIn(block))) byId.set(block.tool_use_id, block);
  }
  return [...byId.values()];
}

/**
 * The content of the user turn that answers `callIds`: results for other ids dropped,
 * one result per call (a real one over a stand-in), a synthetic error result for every
 * call left unanswered, results first.
 */
export function pairToolResults(
  callIds: readonly string[],
  content: readonly ContentBlock[],
): ContentBlock[] {
  const wanted = new Set(callIds);
  const others = content.filter((block) => block.type !== 'tool_result');
  const results = uniqueResults(
    content.filter(
      (block): block is ToolResultBlock =>
        block.type === 'tool_result' && wanted.has(block.tool_use_id),
    ),
  );
  const answered = new Set(results.map((block) => block.tool_use_id));
  const missing = [...wanted].filter((id) => !answered.has(id)).map(missingResult);
  return [...results, ...missing, ...others];
}

/**
 * Repairs tool-call pairing so the API never answers 400: every `tool_use` gets a
 * `tool_result` in the next user message (a synthetic error result when missing), and
 * a `tool_result` whose id has no `tool_use` in the previous assistant message is
 * dropped. Returns new messages; the input is not changed.
 */
export function ensureToolResultPairing(messages: readonly WireMessage[]): WireMessage[] {
  const output: WireMessage[] = [];
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    const previous = output[output.length - 1];
    if (message.role === 'assistant') {
      // A user message dropped as empty can leave two assistant messages side by side.
      if (previous?.role === 'assistant')
        previous.content = [...previous.content, ...message.content];
      else output.push({ role: 'assistant', content: [...message.content] });
      const calls = toolUseIds(message);
      if (calls.length === 0) continue;
      const next = messages[index + 1];
      output.push({
        role: 'user',
        content: pairToolResults(calls, next?.role === 'user' ? next.content : []),
      });
      if (next?.role === 'user') index++;
      continue;
    }
    // A user message not preceded by tool calls may not carry tool results.
    const content = pairToolResults([], message.content);
    if (content.length === 0) continue;
    if (previous?.role === 'user') {
      previous.content = mergeContent('user', previous.content, content);
    } else {
      output.push({ role: 'user', content });
    }
  }
  return output;
}
