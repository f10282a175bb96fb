import { checkArray, checkObject, invalidArgument } from '@delegate/core';

// Checks of this package's own; the shared ones (checkObject, checkArray, …) are @delegate/core's.

/**
 * Throws `INVALID_ARGUMENT` unless `messages` is an array of objects whose `content` is a
 * string or an array (one typeof per message, no schema parse).
 */
export function checkMessages(where: string, option: string, messages: unknown): void {
  checkArray(where, option, messages);
  (messages as unknown[]).forEach((message, index) => {
    checkObject(where, `${option}[${index}]`, message);
    const content = (message as { content?: unknown }).content;
    if (typeof content !== 'string' && !Array.isArray(content)) {
      throw invalidArgument({
        where,
        option: `${option}[${index}].content`,
        expected: 'a string or an array of content blocks',
        value: content,
      });
    }
  });
}
