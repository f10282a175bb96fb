import {
  type AssistantMessage,
  type ContentBlock,
  type Message,
  type ToolResultBlock,
  type ToolUseBlock,
  createUserMessage,
  createUuid,
  invalidArgument,
  isObject,
  checkString,
} from '@delegate/core';
import { buildChildMessage } from './build-child-message.js';
import { FORK_PLACEHOLDER_RESULT } from './fork-constants.js';

/**
 * Builds the messages a fork child appends to the parent's history: a copy of the
 * parent's whole assistant message (new uuid; thinking, text and every `tool_use` kept),
 * then one user message with an identical placeholder `tool_result` per `tool_use` and,
 * last, the directive block. Children of one parent therefore send requests that are
 * byte-identical up to that final text block. `cache_control` markers on the copied
 * blocks are removed (they are not part of the cache key). Without any `tool_use` the
 * result is a single user message holding the directive. The input message is never
 * changed.
 */
export function buildForkedMessages(
  directive: string,
  assistantMessage: AssistantMessage,
): Message[] {
  checkString('buildForkedMessages()', 'directive', directive);
  const message: unknown = isObject(assistantMessage) ? assistantMessage.message : undefined;
  if (!isObject(message) || !Array.isArray(message.content)) {
    throw invalidArgument({
      where: 'buildForkedMessages()',
      option: 'assistantMessage',
      expected: "the parent's assistant message (with message.content blocks)",
      value: assistantMessage,
    });
  }
  const directiveBlock: ContentBlock = { type: 'text', text: buildChildMessage(directive) };
  // A deep copy: callers add cache_control markers to the child's last blocks, and
  // those must not leak into the parent's history (and so into the parent's requests).
  const copiedMessage = structuredClone(assistantMessage.message);
  // Breakpoints the parent's blocks carried are dropped: they say where to write a cache
  // entry, not what is cached (so the shared prefix is unchanged), while the runtime
  // places the child's own breakpoints and the API refuses a request with more than four.
  for (const block of copiedMessage.content) {
    if ('cache_control' in block) delete block.cache_control;
  }
  const toolUseBlocks = copiedMessage.content.filter(
    (block): block is ToolUseBlock => block.type === 'tool_use',
  );
  if (toolUseBlocks.length === 0) {
    return [createUserMessage({ content: [directiveBlock] })];
  }
  const forkedAssistantMessage: AssistantMessage = {
    ...assistantMessage,
    uuid: createUuid(),
    message: copiedMessage,
  };
  // Every result carries the same text in the same (array) form, whatever the tool did.
  const placeholderResults = toolUseBlocks.map((block): ToolResultBlock => ({
    type: 'tool_result',
    tool_use_id: block.id,
    content: [{ type: 'text', text: FORK_PLACEHOLDER_RESULT }],
  }));
  const resultMessage = createUserMessage({ content: [...placeholderResults, directiveBlock] });
  return [forkedAssistantMessage, resultMessage];
}
