import type { Message } from '@delegate/core';
import {
  type WireMessage,
  ensureToolResultPairing,
  mergeContent,
  pairToolResults,
  toWireMessage,
  toWireMessages,
  toolUseIds,
} from './normalize-messages.js';

/**
 * A conversation kept in request form, so a loop's per-turn cost does not grow with its
 * length: the starting history is normalized and repaired once, and each later message is
 * converted once when it is added (merged into the last wire message when the role
 * repeats). Pairing is re-checked only for the exchange a new message belongs to. The
 * wire messages handed out are never changed afterwards, except the last one, which
 * {@link WireConversation.messages} callers must copy before marking (as
 * `buildMessagesRequest` does).
 */
export class WireConversation {
  private readonly wire: WireMessage[];

  /** Starts from `history`, normalized and with its tool-call pairing repaired. */
  constructor(history: readonly Message[]) {
    this.wire = ensureToolResultPairing(toWireMessages(history));
  }

  /** Adds one message (system and progress messages are ignored, and so is what pairing leaves empty). */
  append(message: Message): void {
    const next = toWireMessage(message);
    if (!next) return;
    const lastIndex = this.wire.length - 1;
    const last = this.wire[lastIndex];
    if (last && last.role === next.role) {
      // Replaced, not changed in place: an earlier request may hold the old array.
      const content = this.paired(
        last.role,
        lastIndex,
        mergeContent(last.role, last.content, next.content),
      );
      if (content.length > 0) this.wire[lastIndex] = { role: last.role, content };
      return;
    }
    const content = this.paired(next.role, this.wire.length, next.content);
    if (content.length > 0) this.wire.push({ role: next.role, content });
  }

  /**
   * The wire messages for the next request: the stored ones, plus synthetic results when
   * the conversation ends with unanswered tool calls (a request must not end that way).
   */
  messages(): readonly WireMessage[] {
    const last = this.wire[this.wire.length - 1];
    const calls = toolUseIds(last);
    if (calls.length === 0) return this.wire;
    return [...this.wire, { role: 'user', content: pairToolResults(calls, []) }];
  }

  /** Number of wire messages. */
  get length(): number {
    return this.wire.length;
  }

  /** The content of the message at `index`, paired with the assistant message before it. */
  private paired(
    role: WireMessage['role'],
    index: number,
    content: WireMessage['content'],
  ): WireMessage['content'] {
    if (role === 'assistant') return content;
    // A user turn answers the tool calls of the assistant message just before it, and only those.
    const calls = toolUseIds(this.wire[index - 1]);
    if (calls.length === 0 && content.every((block) => block.type !== 'tool_result'))
      return content;
    return pairToolResults(calls, content);
  }
}
