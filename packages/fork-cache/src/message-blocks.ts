import { DelegateError } from '@delegate/core';
import { canCarryBreakpoint } from './lookback.js';

/** Where a content block sits in a request's `messages`. */
export type BlockAddress = {
  /** Index of the message in the request's `messages`. */
  messageIndex: number;
  /** Index of the block in that message's content (a string content is block 0). */
  blockIndex: number;
};

/** A request message as breakpoint placement reads it: a role and a string or blocks. */
export type BreakpointMessage = {
  /** `user` or `assistant`. */
  role: string;
  /** A string (one text block) or content blocks. */
  content: string | readonly unknown[];
};

/** One message block in cache order, with what breakpoint placement needs to know of it. */
export type FlatMessageBlock = {
  /** Where the block is. */
  address: BlockAddress;
  /** The block's `type` (`text`, `tool_use`, …). */
  type: string;
  /** True when the block may carry `cache_control`. */
  markable: boolean;
};

/** The blocks of a message: a string stands for one text block. */
export function messageBlocks(message: BreakpointMessage): readonly unknown[] {
  return typeof message.content === 'string'
    ? [{ type: 'text', text: message.content }]
    : message.content;
}

function blockType(block: unknown): string {
  const type = (block as { type?: unknown } | null)?.type;
  return typeof type === 'string' ? type : typeof block;
}

/** Lists every message block in cache order. */
export function flattenMessageBlocks(messages: readonly BreakpointMessage[]): FlatMessageBlock[] {
  return messages.flatMap((message, messageIndex) =>
    messageBlocks(message).map((block, blockIndex) => ({
      address: { messageIndex, blockIndex },
      type: blockType(block),
      markable: canCarryBreakpoint(block),
    })),
  );
}

/** Index of the address in the flattened blocks; throws `INVALID_ARGUMENT` for a block that is not there. */
export function flatIndexOf(
  blocks: readonly FlatMessageBlock[],
  address: BlockAddress,
  where: string,
): number {
  const index = blocks.findIndex(
    (block) =>
      block.address.messageIndex === address.messageIndex &&
      block.address.blockIndex === address.blockIndex,
  );
  if (index === -1) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${where}: there is no block ${address.blockIndex} in message ${address.messageIndex} (the request has ${countMessages(blocks)} messages). Pass addresses of blocks the request holds.`,
      { details: { address } },
    );
  }
  return index;
}

function countMessages(blocks: readonly FlatMessageBlock[]): number {
  return (blocks.at(-1)?.address.messageIndex ?? -1) + 1;
}

/** Index of the last block at or before `end` that may carry a breakpoint, or undefined. */
export function lastMarkableIndex(
  blocks: readonly FlatMessageBlock[],
  end = blocks.length - 1,
): number | undefined {
  for (let index = end; index >= 0; index--) if (blocks[index]?.markable) return index;
  return undefined;
}
