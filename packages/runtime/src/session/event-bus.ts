import { type AgentEvent, errorMessage } from '@delegate/core';
import { AsyncChannel } from '../util/async-channel.js';
import { redactDeep } from '../util/redact-deep.js';

/** Options of an {@link EventBus}. */
export type EventBusOptions = {
  /** Events kept for `events` (default 10,000; the oldest go first). */
  keepHistory?: number;
  /**
   * Called when a listener throws. Default: a process warning (code
   * `DELEGATE_EVENT_LISTENER`); the other listeners and the agent run go on either way.
   * Tests set it to rethrow, so an assertion inside a listener fails the test.
   */
  onListenerError?: (error: unknown, event: AgentEvent) => void;
  /**
   * Applied to every string of every event (the session's secrets become `[REDACTED]`) before
   * any listener or the history sees it: a sub-agent's messages, reports, tool inputs and
   * descriptions can repeat a secret it read (an agent file that quotes the key), and warnings
   * can quote a hook's or an MCP server's stderr. Only the parts holding a changed string are
   * copied: an event with no secret in it is delivered as it was emitted.
   */
  redact?: (text: string) => string;
};

function warnListenerError(error: unknown, event: AgentEvent): void {
  process.emitWarning(`A lifecycle event listener threw on ${event.type}: ${errorMessage(error)}`, {
    code: 'DELEGATE_EVENT_LISTENER',
  });
}

/** Fans lifecycle events out to listeners and to async-iterable subscriptions. */
export class EventBus {
  private readonly listeners = new Set<(event: AgentEvent) => void>();
  private readonly history: AgentEvent[] = [];
  private readonly keep: number;
  private readonly onListenerError: (error: unknown, event: AgentEvent) => void;
  private readonly redact: ((text: string) => string) | undefined;

  /** A bus with no listeners yet. */
  constructor(options: EventBusOptions = {}) {
    this.keep = options.keepHistory ?? 10_000;
    this.onListenerError = options.onListenerError ?? warnListenerError;
    this.redact = options.redact;
  }

  /**
   * Delivers an event to every listener. A throwing listener never stops the others; its
   * error goes to `onListenerError` (which may rethrow, to the emitter).
   */
  emit = (emitted: AgentEvent): void => {
    const event = this.redact ? redactDeep(emitted, this.redact) : emitted;
    this.history.push(event);
    // Trimmed in chunks, so a long session does not shift the whole history on every event.
    if (this.history.length > this.keep * 1.25)
      this.history.splice(0, this.history.length - this.keep);
    let failure: { error: unknown } | undefined;
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) this.onListenerError(failure.error, event);
  };

  /** Calls `listener` for each future event; returns an unsubscribe function. */
  on(listener: (event: AgentEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Events seen so far (the last `keepHistory`, give or take a quarter). */
  get events(): readonly AgentEvent[] {
    return this.history;
  }

  /**
   * Future events as an async iterable; the iteration ends when `signal` aborts or the
   * consumer breaks out of the loop.
   */
  subscribe(options: { signal?: AbortSignal } = {}): AsyncIterable<AgentEvent> {
    const channel = new AsyncChannel<AgentEvent>();
    const off = this.on((event) => channel.push(event));
    const stop = (): void => {
      off();
      options.signal?.removeEventListener('abort', stop);
      channel.close();
    };
    options.signal?.addEventListener('abort', stop, { once: true });
    return {
      [Symbol.asyncIterator]: () => {
        const iterator = channel[Symbol.asyncIterator]();
        return {
          next: () => iterator.next(),
          return: async () => {
            stop();
            return { done: true, value: undefined };
          },
        };
      },
    };
  }
}
