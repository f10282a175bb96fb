import { type ContentBlock, type Message, checkArray, checkObject } from '@delegate/core';
import { FORK_BOILERPLATE_TAG } from './fork-constants.js';

const OPENING_TAG = `<${FORK_BOILERPLATE_TAG}>`;
const CLOSING_TAG = `</${FORK_BOILERPLATE_TAG}>`;

function holdsForkRules(text: string): boolean {
  // The rules block opens on its own line; a passing mention inside prose does not count.
  const opening = text.indexOf(OPENING_TAG);
  if (opening === -1) return false;
  const atLineStart = opening === 0 || text[opening - 1] === '\n';
  return atLineStart && text.indexOf(CLOSING_TAG, opening) !== -1;
}

function userTexts(content: string | readonly ContentBlock[]): string[] {
  if (typeof content === 'string') return [content];
  // Only the user's own text blocks: a tool_result may quote a file that contains the tag.
  return content.flatMap((block) => (block.type === 'text' ? [block.text] : []));
}

/**
 * True when the conversation belongs to a fork child: a user message's own text (string
 * content or a text block, not a tool result) holds the fork worker rules block.
 * Assistant messages and tool results that merely quote the tag do not count.
 */
export function isInForkChild(messages: readonly Message[]): boolean {
  checkArray('isInForkChild()', 'messages', messages);
  return messages.some((message, index) => {
    checkObject('isInForkChild()', `messages[${index}]`, message);
    return (
      message.type === 'user' &&
      userTexts(message.message.content).some((text) => holdsForkRules(text))
    );
  });
}
