import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorMessage } from '@delegate/core';
import { SimApiError, errorBody, invalidRequest, type ApiErrorType } from './api-error.js';
import { buildReplyContent } from './build-reply-content.js';
import { echo } from './echo.js';
import { toolResultText } from './estimate-tokens.js';
import { createFaultPicker, type FaultKind, type FaultSpec } from './faults.js';
import { flattenPrefix } from './flatten-prefix.js';
import { defaultForkDirective, type ForkDirectiveMatcher } from './fork-directive.js';
import { sha256Hex } from './hash.js';
import { Journal, type JournalEntry } from './journal.js';
import type { Clock } from './manual-clock.js';
import { textOf, type Policy, type Reply, type SimRequest, type SimToolResult } from './policy.js';
import { PromptCache, type CacheEntryInfo } from './prompt-cache.js';
import { buildStreamEvents, type ResponseMessage, type StreamEvent } from './stream-events.js';
import { validateMessagesRequest } from './validate-request.js';
import type { NormalizedRequest } from './wire-types.js';

/** Artificial latency, for benchmarks and demos. The default is none: as fast as possible. */
export type Pacing = {
  /** Delay before the response starts (the first byte), in milliseconds. */
  timeToFirstTokenMs?: number;
  /** Delay per output token while streaming (and added up before a non-streamed answer), in milliseconds. */
  msPerToken?: number;
};

/** Options of `startSim`. */
export type SimOptions = {
  /** The scripted model (default `echo`). */
  policy?: Policy;
  /** Port to listen on (default 0: any free port). */
  port?: number;
  /** Host to bind (default 127.0.0.1). */
  host?: string;
  /** Time source for cache TTLs and journal times (default the system clock). */
  clock?: Clock;
  /** Faults to inject. */
  faults?: FaultSpec[];
  /** Artificial latency (default none). */
  pacing?: Pacing;
  /** Minimum cacheable prefix: one number, or a table keyed by model substring with a `default` (default `DEFAULT_MIN_CACHEABLE_TOKENS`). */
  minCacheableTokens?: number | Readonly<Record<string, number>>;
  /** Positions a cache read checks per breakpoint, the breakpoint itself included (default 20). */
  lookbackBlocks?: number;
  /**
   * True (the default, as the Claude API documents): a run of consecutive `tool_use` blocks, or of
   * `tool_result` blocks, counts as one lookback position. False counts every block.
   */
  groupToolRuns?: boolean;
  /** Seed of ids, signatures and fault draws (default 0). */
  seed?: number | string;
  /** Accepted API keys; when absent any non-empty key is accepted. */
  apiKeys?: string[];
  /** Finds the fork directive in the last user text block (default `defaultForkDirective`). */
  forkDirective?: ForkDirectiveMatcher;
};

/** The prompt cache as tests see it. */
export type SimCacheView = {
  /** Number of live entries. */
  readonly size: number;
  /** Removes every entry. */
  clear(): void;
  /** Lists the live entries. */
  entries(): CacheEntryInfo[];
};

/** A running simulator. */
export type Sim = {
  /** Base URL to give the SDK (`http://127.0.0.1:PORT`). */
  url: string;
  /** The port it listens on. */
  port: number;
  /** Every request received. */
  journal: Journal;
  /** The prompt cache. */
  cache: SimCacheView;
  /** Stops the server and drops open connections; calling it again returns the same promise. */
  close(): Promise<void>;
};

const JOURNAL_HEADERS = [
  'anthropic-version',
  'anthropic-beta',
  'x-stainless-retry-count',
  'x-stainless-helper',
  'x-delegate-agent',
  'user-agent',
  'content-type',
];
const SECRET_HEADERS = new Set(['authorization', 'x-api-key']);
const MAX_BODY_BYTES = 32 * 1024 * 1024;

const HTTP_FAULTS: Partial<
  Record<FaultKind, { status: number; type: ApiErrorType; message: string }>
> = {
  rate_limit: {
    status: 429,
    type: 'rate_limit_error',
    message:
      'This request would exceed the rate limit for your organization. Please retry after a short wait.',
  },
  overloaded: { status: 529, type: 'overloaded_error', message: 'Overloaded' },
  api_error: { status: 500, type: 'api_error', message: 'Internal server error' },
  gateway_timeout: { status: 504, type: 'timeout_error', message: 'Request timed out' },
};

/** Resolves once the connection is gone (the client left or the server closed). */
function untilGone(gone: AbortSignal): Promise<void> {
  if (gone.aborted) return Promise.resolve();
  return new Promise((resolve) => gone.addEventListener('abort', () => resolve(), { once: true }));
}

/** A stall of a non-streamed request: the response never starts, so nothing is cached or sent. */
async function stallBeforeStart(entry: JournalEntry, gone: AbortSignal): Promise<void> {
  entry.error = { type: 'stall', message: 'the response stalled before it started' };
  await untilGone(gone);
  entry.error.message += '; the client closed the connection';
}

/** Waits, but stops early (clearing its timer) when the signal aborts: a gone client leaves no timer behind. */
function sleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  if (milliseconds <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, milliseconds);
    signal.addEventListener('abort', done, { once: true });
  });
}

const CLIENT_DISCONNECTED = 'client_disconnected';

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => {
      if (size > MAX_BODY_BYTES) {
        reject(
          new SimApiError(
            413,
            'request_too_large',
            'Request exceeds the maximum allowed number of bytes.',
          ),
        );
      } else {
        resolve(Buffer.concat(chunks).toString('utf8'));
      }
    });
    request.on('error', reject);
  });
}

function httpFaultError(
  spec: Pick<FaultSpec, 'kind' | 'message' | 'retryAfterSeconds'>,
): SimApiError {
  const known = HTTP_FAULTS[spec.kind] ?? HTTP_FAULTS.overloaded;
  const seconds = spec.retryAfterSeconds ?? 0.001;
  return new SimApiError(
    known?.status ?? 529,
    known?.type ?? 'overloaded_error',
    spec.message ?? known?.message ?? 'Overloaded',
    {
      'retry-after': String(seconds),
      'retry-after-ms': String(Math.round(seconds * 1000)),
    },
  );
}

function buildSimRequest(
  normalized: NormalizedRequest,
  context: {
    index: number;
    requestId: string;
    headers: Record<string, string>;
    forkDirective: ForkDirectiveMatcher;
  },
): SimRequest {
  const messages = normalized.messages;
  const last = messages.at(-1);
  const lastUser = last?.role === 'user' ? last : undefined;
  const previous = lastUser ? messages.at(-2) : undefined;
  const toolNames = new Map<string, string>();
  for (const block of previous?.content ?? []) {
    if (block.type === 'tool_use') toolNames.set(String(block.id), String(block.name));
  }
  const toolResults: SimToolResult[] = (lastUser?.content ?? [])
    .filter((block) => block.type === 'tool_result')
    .map((block) => ({
      toolUseId: String(block.tool_use_id),
      toolName: toolNames.get(String(block.tool_use_id)),
      content: toolResultText(block.content),
      isError: block.is_error === true,
    }));
  const lastTextBlock = (lastUser?.content ?? [])
    .filter((block) => block.type === 'text' && typeof block.text === 'string')
    .map((block) => String(block.text))
    .at(-1);
  const system = textOf(normalized.system);
  const firstUser = textOf(messages[0]?.content ?? []);
  const thinkingType = normalized.thinking?.type;
  return {
    index: context.index,
    requestId: context.requestId,
    model: normalized.model,
    stream: normalized.stream,
    body: normalized.body,
    system,
    messages,
    toolNames: normalized.tools.map((tool) => String(tool.name)),
    lastUserText: lastUser ? textOf(lastUser.content) : '',
    lastTextBlock,
    toolResults,
    forkDirective: lastTextBlock === undefined ? undefined : context.forkDirective(lastTextBlock),
    agent: agentFromHeader(context.headers['x-delegate-agent']),
    conversationKey: sha256Hex(system, firstUser).slice(0, 16),
    turnIndex: messages.filter((message) => message.role === 'assistant').length,
    thinkingEnabled: thinkingType === 'enabled' || thinkingType === 'adaptive',
    headers: context.headers,
  };
}

/**
 * The agent name an `x-delegate-agent` header carries: the runtime percent-encodes every
 * character outside printable ASCII (and `%`), so `r%C3%A9v` is `rév`. A value that is not
 * valid percent-encoding (`100%` from another client) is taken as it is.
 */
function agentFromHeader(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * Starts a local Messages API server that the real `@anthropic-ai/sdk` can talk to: `POST
 * /v1/messages` (streamed or not) and `POST /v1/messages/count_tokens`, with real validation
 * errors, prompt-cache accounting, scripted answers, fault injection and a request journal.
 */
export async function startSim(options: SimOptions = {}): Promise<Sim> {
  const clock = options.clock ?? { now: () => Date.now() };
  const seed = options.seed ?? 0;
  const policy = options.policy ?? echo;
  const pacing = options.pacing ?? {};
  const forkDirective = options.forkDirective ?? defaultForkDirective;
  const journal = new Journal();
  const cache = new PromptCache({
    clock,
    ...(options.lookbackBlocks === undefined ? {} : { lookbackBlocks: options.lookbackBlocks }),
    ...(options.groupToolRuns === undefined ? {} : { groupToolRuns: options.groupToolRuns }),
    ...(options.minCacheableTokens === undefined
      ? {}
      : { minCacheableTokens: options.minCacheableTokens }),
  });
  const pickFault = createFaultPicker(options.faults ?? [], seed);
  const makeId = (prefix: string, ...parts: string[]) =>
    `${prefix}_${sha256Hex(String(seed), prefix, ...parts).slice(0, 24)}`;
  let counter = 0;

  const authenticate = (headers: Record<string, string>): void => {
    const bearer = headers.authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
    const key = headers['x-api-key']?.trim() || bearer;
    if (!key) throw new SimApiError(401, 'authentication_error', 'x-api-key header is required');
    if (options.apiKeys && !options.apiKeys.includes(key)) {
      throw new SimApiError(401, 'authentication_error', 'invalid x-api-key');
    }
  };

  const parseJson = (raw: string, entry: JournalEntry): unknown => {
    try {
      const body: unknown = JSON.parse(raw);
      entry.body = body;
      return body;
    } catch (error) {
      throw invalidRequest(`Request body is not valid JSON: ${errorMessage(error)}`);
    }
  };

  const handleMessages = async (
    raw: string,
    entry: JournalEntry,
    headers: Record<string, string>,
    connection: { response: ServerResponse; gone: AbortSignal },
  ): Promise<void> => {
    const { response, gone } = connection;
    const body = parseJson(raw, entry);
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
      const record = body as Record<string, unknown>;
      entry.model = typeof record.model === 'string' ? record.model : undefined;
      entry.stream = record.stream === true;
    }
    const normalized = validateMessagesRequest(body, { requireMaxTokens: true });
    const prefix = flattenPrefix(normalized);
    entry.fingerprint = prefix.fingerprint;
    const request = buildSimRequest(normalized, {
      index: entry.index,
      requestId: entry.requestId,
      headers,
      forkDirective,
    });
    entry.conversationKey = request.conversationKey;
    entry.turnIndex = request.turnIndex;

    let fault: Omit<FaultSpec, 'probability' | 'onRequests' | 'times' | 'match'> | undefined =
      pickFault(request);
    if (fault) entry.fault = fault.kind;
    if (fault && HTTP_FAULTS[fault.kind]) throw httpFaultError(fault);

    const plan = cache.plan(normalized.model, prefix.blocks, prefix.totalTokens);
    let reply: Reply;
    try {
      reply = await policy(request);
    } catch (error) {
      throw new SimApiError(500, 'api_error', `api-sim policy failed: ${errorMessage(error)}`, {
        'x-should-retry': 'false',
      });
    }
    if (typeof reply === 'object' && !Array.isArray(reply) && 'fault' in reply) {
      fault = typeof reply.fault === 'string' ? { kind: reply.fault } : reply.fault;
      entry.fault = fault.kind;
      if (HTTP_FAULTS[fault.kind]) throw httpFaultError(fault);
      // A stream fault answered by the policy fails a response without content.
      reply = [];
    }
    if (fault?.kind === 'stream_error' && !normalized.stream) {
      throw httpFaultError({
        kind: 'overloaded',
        ...(fault.message ? { message: fault.message } : {}),
      });
    }
    const built = buildReplyContent(reply, {
      maxTokens: normalized.maxTokens ?? 1,
      stopSequences: normalized.stopSequences,
      thinkingEnabled: request.thinkingEnabled,
      cutToolCalls: normalized.stream,
      toolUseId: (blockIndex) => makeId('toolu', prefix.fingerprint.prefix, String(blockIndex)),
      sign: (thinking) =>
        Buffer.from(sha256Hex(String(seed), 'signature', thinking), 'hex').toString('base64'),
    });

    const resetEarly =
      fault?.kind === 'connection_reset' && (!normalized.stream || (fault.afterEvents ?? 3) === 0);
    if (resetEarly) {
      entry.status = 0;
      response.socket?.destroy();
      return;
    }
    if (fault?.kind === 'stall' && !normalized.stream) return stallBeforeStart(entry, gone);
    const firstByteDelay =
      (fault?.kind === 'slow_first_byte' ? (fault.delayMs ?? 1000) : 0) +
      (pacing.timeToFirstTokenMs ?? 0) +
      (normalized.stream ? 0 : built.outputTokens * (pacing.msPerToken ?? 0));
    await sleep(firstByteDelay, gone);
    if (gone.aborted) {
      // The client left (or the server closed) before the response started: nothing is written.
      entry.error = {
        type: CLIENT_DISCONNECTED,
        message: 'the connection closed before the response started',
      };
      return;
    }

    // The response starts here: from now on later requests can read what this one writes.
    plan.commit();
    const message: ResponseMessage = {
      id: makeId('msg', String(entry.index)),
      type: 'message',
      role: 'assistant',
      model: normalized.model,
      content: built.content,
      stop_reason: built.stopReason,
      stop_sequence: built.stopSequence,
      stop_details: null,
      container: null,
      usage: { ...plan.usage, output_tokens: built.outputTokens, service_tier: 'standard' },
    };
    entry.status = 200;
    entry.usage = {
      input_tokens: message.usage.input_tokens,
      output_tokens: message.usage.output_tokens,
      cache_creation_input_tokens: message.usage.cache_creation_input_tokens,
      cache_read_input_tokens: message.usage.cache_read_input_tokens,
      cache_creation: { ...message.usage.cache_creation },
    };
    entry.stopReason = built.stopReason;
    if (!normalized.stream) {
      response.writeHead(200, {
        'content-type': 'application/json',
        'request-id': entry.requestId,
      });
      response.end(JSON.stringify(message));
      return;
    }
    await writeStream(response, buildStreamEvents(message), { entry, fault, pacing, gone });
  };

  const handleCount = async (
    raw: string,
    entry: JournalEntry,
    response: ServerResponse,
  ): Promise<void> => {
    const body = parseJson(raw, entry);
    const normalized = validateMessagesRequest(body, { requireMaxTokens: false });
    entry.model = normalized.model;
    const prefix = flattenPrefix(normalized);
    entry.fingerprint = prefix.fingerprint;
    entry.status = 200;
    response.writeHead(200, { 'content-type': 'application/json', 'request-id': entry.requestId });
    response.end(JSON.stringify({ input_tokens: prefix.totalTokens }));
  };

  const server = createServer((incoming, response) => {
    const index = ++counter;
    const requestId = makeId('req', String(index));
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(incoming.headers)) {
      const text = headerValue(value);
      if (text !== undefined) headers[name] = text;
    }
    const publicHeaders = Object.fromEntries(
      Object.entries(headers).filter(([name]) => !SECRET_HEADERS.has(name)),
    );
    const entry: JournalEntry = {
      index,
      requestId,
      time: clock.now(),
      method: incoming.method ?? 'GET',
      path: (incoming.url ?? '/').split('?')[0] ?? '/',
      headers: Object.fromEntries(
        JOURNAL_HEADERS.flatMap((name) =>
          headers[name] === undefined ? [] : [[name, headers[name]]],
        ),
      ),
      auth: headers['x-api-key'] ? 'x-api-key' : headers.authorization ? 'bearer' : 'none',
      body: undefined,
      model: undefined,
      stream: false,
      fingerprint: undefined,
      conversationKey: undefined,
      turnIndex: undefined,
      status: 0,
      usage: undefined,
      stopReason: undefined,
      fault: undefined,
      error: undefined,
    };
    journal.add(entry);
    const gone = new AbortController();
    response.on('close', () => {
      if (!response.writableFinished) gone.abort();
    });
    const run = async () => {
      const raw = await readBody(incoming);
      entry.body = raw.length > 0 ? raw : undefined;
      const route = `${entry.method} ${entry.path.replace(/\/+$/, '')}`;
      if (route === 'POST /v1/messages') {
        authenticate(headers);
        await handleMessages(raw, entry, publicHeaders, { response, gone: gone.signal });
      } else if (route === 'POST /v1/messages/count_tokens') {
        authenticate(headers);
        await handleCount(raw, entry, response);
      } else {
        throw new SimApiError(404, 'not_found_error', 'Not Found');
      }
    };
    run().catch((error: unknown) => {
      const failure =
        error instanceof SimApiError
          ? error
          : new SimApiError(500, 'api_error', `api-sim internal error: ${errorMessage(error)}`);
      entry.status = failure.status;
      entry.error = { type: failure.type, message: failure.message };
      if (response.headersSent) {
        response.destroy();
        return;
      }
      response.writeHead(failure.status, {
        'content-type': 'application/json',
        'request-id': requestId,
        ...failure.headers,
      });
      response.end(errorBody(failure.type, failure.message, requestId));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    journal,
    cache: {
      get size() {
        return cache.size;
      },
      clear: () => cache.clear(),
      entries: () => cache.entries(),
    },
    close: () => {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Writes one chunk; resolves false when the connection is gone (even if the write never calls back). */
function write(response: ServerResponse, chunk: string, gone: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const abandon = () => resolve(false);
    gone.addEventListener('abort', abandon, { once: true });
    response.write(chunk, (error) => {
      gone.removeEventListener('abort', abandon);
      resolve(!error);
    });
  });
}

async function writeStream(
  response: ServerResponse,
  events: StreamEvent[],
  context: {
    entry: JournalEntry;
    fault: Omit<FaultSpec, 'probability' | 'onRequests' | 'times' | 'match'> | undefined;
    pacing: Pacing;
    gone: AbortSignal;
  },
): Promise<void> {
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'request-id': context.entry.requestId,
  });
  const { fault, pacing, entry, gone } = context;
  const failing =
    fault?.kind === 'stream_error' || fault?.kind === 'connection_reset' || fault?.kind === 'stall';
  const perToken = pacing.msPerToken ?? 0;
  if (!failing && perToken <= 0) {
    response.end(events.map((item) => item.chunk).join(''));
    return;
  }
  const failAt = failing
    ? Math.min(fault.afterEvents ?? 3, events.length)
    : Number.POSITIVE_INFINITY;
  for (const [index, item] of events.entries()) {
    if (index === failAt) break;
    if (perToken > 0 && item.tokens > 0) await sleep(item.tokens * perToken, gone);
    const sent = !gone.aborted && !response.destroyed && (await write(response, item.chunk, gone));
    if (!sent) {
      // A client that goes away mid-stream is recorded, not reported as a server failure.
      entry.error = {
        type: CLIENT_DISCONNECTED,
        message: `the connection closed after ${index} of ${events.length} events`,
      };
      return;
    }
  }
  if (fault?.kind === 'stream_error') {
    const type = fault.errorType ?? 'overloaded_error';
    const message = fault.message ?? 'Overloaded';
    entry.error = { type, message };
    response.end(
      `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message }, request_id: entry.requestId })}\n\n`,
    );
    return;
  }
  if (fault?.kind === 'stall') {
    // Headers go out even when no event does, so the client sees a response that started.
    if (failAt === 0) response.flushHeaders();
    entry.error = {
      type: 'stall',
      message: `the stream stopped after ${failAt} of ${events.length} events, connection left open`,
    };
    await untilGone(gone);
    entry.error.message += '; the client closed the connection';
    return;
  }
  if (fault?.kind === 'connection_reset') {
    entry.error = { type: 'connection_reset', message: `socket destroyed after ${failAt} events` };
    response.socket?.destroy();
    return;
  }
  response.end();
}
