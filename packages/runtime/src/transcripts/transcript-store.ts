import { appendFile, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Message,
  DelegateError,
  errorMessage,
  invalidArgument,
  isObject,
} from '@delegate/core';
import { redactDeep } from '../util/redact-deep.js';
import { cutTornTail } from './cut-torn-tail.js';
import type { QueuedNotification } from './queued-notification.js';

/** One JSONL line of a transcript: a message with its place in the conversation tree. */
export type TranscriptEntry = Message & {
  /** Session the message belongs to. */
  sessionId: string;
  /** Uuid of the previous message in this transcript (null for the first). */
  parentUuid: string | null;
  /** True for sub-agent transcripts (a side chain of the session). */
  isSidechain: boolean;
  /** For a sub-agent's first line: the agent that spawned it. */
  parentAgentId?: string;
  /**
   * On a `system` line of subtype `task_notification_queued`: a notification queued for
   * the main agent (main transcript) or into a running sub-agent's inbox (its transcript).
   * A resumed session, or a resumed agent, queues it again until a user message with its
   * uuid shows it was delivered.
   */
  queuedNotification?: QueuedNotification;
};

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

function assertSafeId(kind: string, id: string): void {
  if (!SAFE_ID.test(id)) {
    throw new DelegateError(
      'PATH_ESCAPE',
      `Refusing ${kind} "${id}" as a transcript file name: use letters, digits, "-" and "_" only.`,
    );
  }
}

function checkStoreOptions(options: unknown): void {
  const where = 'new TranscriptStore()';
  if (!isObject(options)) {
    throw invalidArgument({
      where,
      option: 'options',
      expected: 'an object ({ directory, sessionId })',
      value: options,
    });
  }
  for (const option of ['directory', 'sessionId'] as const) {
    const value = options[option];
    if (typeof value !== 'string' || value.length === 0) {
      throw invalidArgument({
        where,
        option: `options.${option}`,
        expected: 'a non-empty string',
        value,
      });
    }
  }
  if (options['onWriteError'] !== undefined && typeof options['onWriteError'] !== 'function') {
    throw invalidArgument({
      where,
      option: 'options.onWriteError',
      expected: 'a function',
      value: options['onWriteError'],
    });
  }
}

/** A failed transcript write, as `TranscriptStore`'s `onWriteError` receives it. */
export type TranscriptWriteFailure = {
  /** The file that could not be written. */
  path: string;
  /** The sub-agent whose file it is; undefined for the session transcript. */
  agentId: string | undefined;
  /** `<path>: <reason>`, as `writeErrors` lists it. */
  message: string;
  /** The file-system error. */
  error: unknown;
};

/**
 * Writes transcripts as JSONL, one file per session and one per sub-agent, appending
 * each message as it arrives so a crash keeps every earlier line. Writes to one file
 * are serialized, so lines never interleave.
 */
export class TranscriptStore {
  /** Directory that holds the session's files. */
  readonly directory: string;
  /** Session id. */
  readonly sessionId: string;
  private readonly chains = new Map<string, Promise<void>>();
  private readonly madeDirectories = new Set<string>();
  private readonly lastUuid = new Map<string, string | null>();
  private readonly parents = new Map<string, string | undefined>();
  private readonly errors: string[] = [];
  // Files whose end was checked for a torn line since this store last failed to write them.
  private readonly cleanEnds = new Set<string>();
  private readonly cutLines: string[] = [];
  // Files whose failure was reported and that have not been written since.
  private readonly reportedFailures = new Set<string>();
  private readonly onWriteError: ((failure: TranscriptWriteFailure) => void) | undefined;
  private readonly redact: ((text: string) => string) | undefined;

  /**
   * `onWriteError` hears of a file that could not be written (once, until a write to it
   * succeeds again): a transcript failure never stops an agent, so this is how a host
   * learns that a transcript is incomplete. A throwing handler is ignored.
   */
  constructor(options: {
    directory: string;
    sessionId: string;
    onWriteError?: (failure: TranscriptWriteFailure) => void;
    /**
     * Applied to every string (and object key) of every line and metadata file before it is
     * serialized and written (the session's secrets become `[REDACTED]`): whatever reached a
     * message, from a tool, an agent file or a notification, is kept out of the files, and
     * every line stays valid JSON.
     */
    redact?: (text: string) => string;
  }) {
    checkStoreOptions(options);
    assertSafeId('session id', options.sessionId);
    this.directory = options.directory;
    this.sessionId = options.sessionId;
    this.onWriteError = options.onWriteError;
    this.redact = options.redact;
  }

  /**
   * `value` as JSON with `redact` applied to each of its strings (keys too) before it is
   * serialized: a secret is matched as the text it is, not as JSON escapes it (a quote, a tab,
   * a backslash), and a replacement can never break the line's JSON. The value goes through
   * JSON first, so what is redacted is exactly what is written (a `toJSON`, a class
   * instance's fields).
   */
  private serialize(value: unknown, indent?: number): string {
    const text = JSON.stringify(value, null, indent);
    if (!this.redact) return text;
    return JSON.stringify(redactDeep(JSON.parse(text) as unknown, this.redact), null, indent);
  }

  private recordFailure(path: string, agentId: string | undefined, error: unknown): void {
    const message = `${path}: ${errorMessage(error)}`;
    this.errors.push(message);
    if (this.reportedFailures.has(path)) return;
    this.reportedFailures.add(path);
    try {
      this.onWriteError?.({ path, agentId, message, error });
    } catch {
      // The handler's failure must not stop the agent either.
    }
  }

  /** Path of the main session transcript. */
  sessionPath(): string {
    return join(this.directory, `${this.sessionId}.jsonl`);
  }

  /** Path of a sub-agent's transcript. */
  agentPath(agentId: string): string {
    assertSafeId('agent id', agentId);
    return join(this.directory, this.sessionId, 'agents', `${agentId}.jsonl`);
  }

  /** Path of a sub-agent's metadata (what it needs to be resumed). */
  agentMetaPath(agentId: string): string {
    assertSafeId('agent id', agentId);
    return join(this.directory, this.sessionId, 'agents', `${agentId}.meta.json`);
  }

  /** Writes a sub-agent's metadata next to its transcript (queued with its lines). */
  writeAgentMeta(agentId: string, meta: object): Promise<void> {
    const path = this.agentMetaPath(agentId);
    return this.enqueue(agentId, async () => {
      try {
        await this.ensureDirectory(join(path, '..'));
        await writeFile(path, `${this.serialize(meta, 2)}\n`, 'utf8');
        this.reportedFailures.delete(path);
      } catch (error) {
        this.recordFailure(path, agentId, error);
      }
    });
  }

  private async ensureDirectory(directory: string): Promise<void> {
    if (this.madeDirectories.has(directory)) return;
    await mkdir(directory, { recursive: true });
    this.madeDirectories.add(directory);
  }

  private enqueue(key: string, work: () => Promise<void>): Promise<void> {
    const next = (this.chains.get(key) ?? Promise.resolve()).then(work);
    this.chains.set(key, next);
    return next;
  }

  /** Reads a sub-agent's metadata, or throws NOT_FOUND naming the file. */
  async readAgentMeta(agentId: string): Promise<Record<string, unknown>> {
    const path = this.agentMetaPath(agentId);
    try {
      return JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
    } catch (error) {
      throw new DelegateError(
        'NOT_FOUND',
        `No metadata for agent ${agentId} at ${path}: ${errorMessage(error)}`,
        { cause: error },
      );
    }
  }

  /** Records which agent spawned `agentId` (written on its first line). */
  setParent(agentId: string, parentAgentId: string | undefined): void {
    this.parents.set(agentId, parentAgentId);
  }

  /**
   * Continues `agentId`'s transcript after the message `uuid`, for a file written by an
   * earlier run (a resume in the same session); ignored once this store has written to it.
   */
  continueAfter(agentId: string, uuid: string): void {
    assertSafeId('agent id', agentId);
    if (!this.lastUuid.has(agentId)) this.lastUuid.set(agentId, uuid);
  }

  /**
   * Continues the session transcript after the message `uuid`, for a file written by an
   * earlier process (a resumed session); ignored once this store has written to it.
   */
  continueSessionAfter(uuid: string): void {
    if (!this.lastUuid.has('')) this.lastUuid.set('', uuid);
  }

  /**
   * Before the first append to a file (one an earlier run may have left torn by a crash),
   * and again after a failed append, removes a torn last line so new lines never continue
   * a fragment.
   */
  private async cutTornTailOnce(path: string): Promise<void> {
    if (this.cleanEnds.has(path)) return;
    const cut = await cutTornTail(path);
    if (cut > 0)
      this.cutLines.push(`${path}: removed a torn last line (${cut} bytes) before appending`);
    this.cleanEnds.add(path);
  }

  /** Torn last lines removed before appending, one note per file (a crash had cut them). */
  get repairs(): readonly string[] {
    return this.cutLines;
  }

  /** Write failures so far (a transcript failure never stops an agent). */
  get writeErrors(): readonly string[] {
    return this.errors;
  }

  /** Appends messages to the session transcript, or to `agentId`'s when given. */
  append(messages: readonly Message[], agentId?: string): Promise<void> {
    const key = agentId ?? '';
    const path = agentId ? this.agentPath(agentId) : this.sessionPath();
    return this.enqueue(key, async () => {
      let parentUuid = this.lastUuid.get(key) ?? null;
      const lines: string[] = [];
      for (const message of messages) {
        const entry: TranscriptEntry = {
          ...message,
          sessionId: this.sessionId,
          parentUuid,
          isSidechain: agentId !== undefined,
        };
        if (agentId && parentUuid === null) {
          const parentAgentId = this.parents.get(agentId);
          if (parentAgentId) entry.parentAgentId = parentAgentId;
        }
        lines.push(this.serialize(entry));
        if (message.type !== 'progress') parentUuid = message.uuid;
      }
      this.lastUuid.set(key, parentUuid);
      if (lines.length === 0) return;
      try {
        await this.ensureDirectory(join(path, '..'));
        await this.cutTornTailOnce(path);
        await appendFile(path, `${lines.join('\n')}\n`, 'utf8');
        this.reportedFailures.delete(path);
      } catch (error) {
        // A failed append may have written part of a line: check the end again next time.
        this.cleanEnds.delete(path);
        this.recordFailure(path, agentId, error);
      }
    });
  }

  /** Resolves when every pending write has finished. */
  async flush(): Promise<void> {
    // Writes queued while waiting are waited for too.
    for (;;) {
      const pending = [...this.chains.values()];
      await Promise.all(pending);
      if ([...this.chains.values()].every((chain, index) => chain === pending[index])) return;
    }
  }

  /** Lists the sub-agent ids that have a transcript in this session. */
  async listAgents(): Promise<string[]> {
    try {
      const files = await readdir(join(this.directory, this.sessionId, 'agents'));
      return files
        .filter((file) => file.endsWith('.jsonl'))
        .map((file) => file.slice(0, -6))
        .sort();
    } catch {
      return [];
    }
  }
}
