import type { AgentEvent } from '@delegate/core';
import { AsyncChannel } from '../util/async-channel.js';

/** Fans lifecycle events out to listeners and to async-iterable subscriptions. */
export class EventBus {
  private readonly listeners = new Set<(event: AgentEvent) => void>();
  private readonly history: AgentEvent[] = [];
  private readonly keep: number;

  constructor(options: { keepHistory?: number } = {}) {
    this.keep = options.keepHistory ?? 10_000;
  }

  /** Delivers an event to every listener; a throwing listener never stops the others. */
  emit = (event: AgentEvent): void => {
    this.history.push(event);
    if (this.history.length > this.keep) this.history.splice(0, this.history.length - this.keep);
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A broken listener must not break an agent run.
      }
    }
  };

  /** Calls `listener` for each future event; returns an unsubscribe function. */
  on(listener: (event: AgentEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Events seen so far (bounded). */
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
