import { writeFileSync } from 'node:fs';
import type { FaultKind } from './faults.js';
import type { RequestFingerprint } from './flatten-prefix.js';

/** Usage as the simulator returned it. */
export type JournalUsage = {
  /** Uncached input tokens. */
  input_tokens: number;
  /** Output tokens. */
  output_tokens: number;
  /** Input tokens written to the cache. */
  cache_creation_input_tokens: number;
  /** Input tokens read from the cache. */
  cache_read_input_tokens: number;
  /** Split of the writes by TTL. */
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
};

/** One request the simulator received and what it answered. */
export type JournalEntry = {
  /** 1-based index on this server. */
  index: number;
  /** The `request-id` sent back. */
  requestId: string;
  /** Clock time the request arrived. */
  time: number;
  /** HTTP method. */
  method: string;
  /** Request path (without query). */
  path: string;
  /** Headers of interest: anthropic-version, anthropic-beta, x-stainless-retry-count, x-delegate-agent, user-agent. */
  headers: Record<string, string>;
  /** How the caller authenticated (`bearer`, `x-api-key`, `none`); the key itself is never stored. */
  auth: 'bearer' | 'x-api-key' | 'none';
  /** The parsed body (or the raw text when it was not JSON). */
  body: unknown;
  /** Model, when the body named one. */
  model: string | undefined;
  /** True for a streaming request. */
  stream: boolean;
  /** Hashes of each part of the request (valid requests only). */
  fingerprint: RequestFingerprint | undefined;
  /** Conversation key and turn index (valid requests only). */
  conversationKey: string | undefined;
  /** Number of assistant messages in the request. */
  turnIndex: number | undefined;
  /** HTTP status sent (200 even when the stream later failed). */
  status: number;
  /** Usage returned, for successful message requests. */
  usage: JournalUsage | undefined;
  /** Stop reason returned. */
  stopReason: string | undefined;
  /** The fault applied, if any. */
  fault: FaultKind | undefined;
  /** The error returned, if any. */
  error: { type: string; message: string } | undefined;
};

/** Every request the simulator received, in arrival order. */
export class Journal {
  readonly #entries: JournalEntry[] = [];

  /** All entries, oldest first. */
  get entries(): readonly JournalEntry[] {
    return this.#entries;
  }

  /** Adds an entry (the server does this; tests only read). */
  add(entry: JournalEntry): void {
    this.#entries.push(entry);
  }

  /** The newest entry, if any. */
  last(): JournalEntry | undefined {
    return this.#entries.at(-1);
  }

  /** The entries meeting a condition. */
  filter(predicate: (entry: JournalEntry) => boolean): JournalEntry[] {
    return this.#entries.filter(predicate);
  }

  /** Removes every entry. */
  clear(): void {
    this.#entries.length = 0;
  }

  /** The entries as JSON Lines, one entry per line. */
  toJSONL(): string {
    return (
      this.#entries.map((entry) => JSON.stringify(entry)).join('\n') +
      (this.#entries.length > 0 ? '\n' : '')
    );
  }

  /** Writes the entries as JSON Lines to a file. */
  dump(path: string): void {
    writeFileSync(path, this.toJSONL());
  }
}
