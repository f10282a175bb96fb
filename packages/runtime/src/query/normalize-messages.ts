import type { ContentBlock, Message, ToolResultBlock } from '@delegate/core';

/** A wire message with its content always as a block list. */
export type WireMessage = { role: 'user' | 'assistant'; content: ContentBlock[] };

/** Tool-result text used when a `tool_use` has no result (interrupted or lost). */
export const MISSING_TOOL_RESULT_TEXT =
  'The tool call did not complete (the run was interrupted before a result was recorded).';

function toBlocks(content: string | readonly ContentBlock[]): ContentBlock[] {
  if (typeof content === 'string')
    return content.length > 0 ? [{ type: 'text', text: content }] : [];
  return content.map((block) => ({ ...block }));
}

function isUsableBlock(block: ContentBlock): boolean {
  // The API refuses empty text blocks; drop them rather than fail the whole request.
  return !(block.type === 'text' && block.text.length === 0);
}

/**
 * Turns Delegate messages into wire messages: system and progress messages are left
 * out, empty text blocks dropped, and consecutive messages of one role merged (tool
 * results first, as the API wants them at the start of a user turn).
 */
export function toWireMessages(messages: readonly Message[]): WireMessage[] {
  const result: WireMessage[] = [];
  for (const message of messages) {
    if (message.type !== 'user' && message.type !== 'assistant') continue;
    const content = toBlocks(message.message.content).filter(isUsableBlock);
    if (content.length === 0) continue;
    const role = message.type;
    const previous = result[result.length - 1];
    if (previous && previous.role === role) {
      previous.content = mergeContent(role, previous.content, content);
    } else {
      result.push({ role, content });
    }
  }
  return result;
}

function mergeContent(
  role: 'user' | 'assistant',
  first: ContentBlock[],
  second: ContentBlock[],
): ContentBlock[] {
  const merged = [...first, ...second];
  if (role === 'assistant') return merged;
  const results = merged.filter((block) => block.type === 'tool_result');
  const others = merged.filter((block) => block.type !== 'tool_result');
  return [...results, ...others];
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
    if (message.role === 'assistant') {
      output.push({ role: 'assistant', content: [...message.content] });
      const toolUseIds = message.content.flatMap((block) =>
        block.type === 'tool_use' ? [block.id] : [],
      );
      if (toolUseIds.length === 0) continue;
      const next = messages[index + 1];
      const nextContent = next?.role === 'user' ? [...next.content] : [];
      const answered = new Set(
        nextContent.flatMap((block) => (block.type === 'tool_result' ? [block.tool_use_id] : [])),
      );
      const missing: ToolResultBlock[] = toolUseIds
        .filter((id) => !answered.has(id))
        .map((id) => ({
          type: 'tool_result',
          tool_use_id: id,
          content: [{ type: 'text', text: MISSING_TOOL_RESULT_TEXT }],
          is_error: true,
        }));
      const wanted = new Set(toolUseIds);
      const kept = nextContent.filter(
        (block) => block.type !== 'tool_result' || wanted.has(block.tool_use_id),
      );
      const results = [...kept.filter((block) => block.type === 'tool_result'), ...missing];
      const others = kept.filter((block) => block.type !== 'tool_result');
      output.push({ role: 'user', content: [...results, ...others] });
      if (next?.role === 'user') index++;
      continue;
    }
    // A user message not preceded by tool calls may not carry tool results.
    const previous = output[output.length - 1];
    const allowedIds = new Set(
      previous?.role === 'assistant'
        ? previous.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : []))
        : [],
    );
    const content = message.content.filter(
      (block) => block.type !== 'tool_result' || allowedIds.has(block.tool_use_id),
    );
    if (content.length === 0) continue;
    if (previous?.role === 'user') {
      previous.content = mergeContent('user', previous.content, content);
    } else {
      output.push({ role: 'user', content });
    }
  }
  return output;
}
