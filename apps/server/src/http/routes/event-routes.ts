import { createRoute, z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { followRunEvents, hasNothingToFollow } from '../../events/follow-run-events.js';
import { sseFrame } from '../sse-frame.js';
import { type App, type AppDependencies, SECURITY } from '../app-context.js';
import { EventsQuery, RunParams, TranscriptQuery } from '../schemas.js';
import { BAD_REQUEST, COMMON_ERRORS, NOT_FOUND } from './openapi-responses.js';

const streamEvents = createRoute({
  method: 'get',
  path: '/v1/runs/{id}/events',
  summary: 'Follow a run as Server-Sent Events',
  description:
    "Replays the run's event log after `Last-Event-ID` (or `?after=`), then streams new events live. Every event has `id:` (its position in the log) and `event:` (its type); `data:` is a RunEvent. A comment line is sent every 15 s as keep-alive. The stream ends after the event that leaves the run inactive; a request with nothing to send for an inactive run gets 204.",
  tags: ['events'],
  security: SECURITY,
  request: {
    params: RunParams,
    query: EventsQuery,
    headers: z.object({
      'last-event-id': z
        .string()
        .regex(/^\d{1,15}$/, 'must be the id of an event this stream sent')
        .optional(),
    }),
  },
  responses: {
    200: {
      description: 'An event stream (text/event-stream) of RunEvent objects.',
      content: { 'text/event-stream': { schema: z.string() } },
    },
    204: { description: 'The run is inactive and has no events after the given position.' },
    ...BAD_REQUEST,
    ...NOT_FOUND,
    ...COMMON_ERRORS,
  },
});

const transcript = createRoute({
  method: 'get',
  path: '/v1/runs/{id}/transcript',
  summary: "An agent's transcript as JSONL (the main agent's without ?agent=)",
  tags: ['runs'],
  security: SECURITY,
  request: { params: RunParams, query: TranscriptQuery },
  responses: {
    200: {
      description: 'One JSON message per line, as the runtime wrote them.',
      content: { 'application/x-ndjson': { schema: z.string() } },
    },
    ...BAD_REQUEST,
    ...NOT_FOUND,
    ...COMMON_ERRORS,
  },
});

/** Registers the event stream and the transcript routes. */
export function registerEventRoutes(
  app: App,
  dependencies: AppDependencies & { redact: <T>(value: T) => T },
): void {
  const { service, store, hub } = dependencies;
  app.openapi(streamEvents, async (c) => {
    const { id } = c.req.valid('param');
    await service.require(id);
    const header = c.req.valid('header')['last-event-id'];
    const after = header !== undefined ? Number(header) : (c.req.valid('query').after ?? 0);
    if (await hasNothingToFollow({ store, hub, runId: id, after })) return c.body(null, 204);
    const abort = new AbortController();
    const onShutdown = (): void => abort.abort();
    dependencies.shutdownSignal.addEventListener('abort', onShutdown, { once: true });
    const closed = dependencies.streams.open();
    return streamSSE(c, async (stream) => {
      stream.onAbort(() => abort.abort());
      const keepAlive = setInterval(() => {
        void stream.write(': keep-alive\n\n').catch(() => abort.abort());
      }, dependencies.keepAliveMs);
      try {
        for await (const event of followRunEvents({
          store,
          hub,
          runId: id,
          after,
          signal: abort.signal,
        })) {
          await stream.write(sseFrame(event));
        }
      } finally {
        clearInterval(keepAlive);
        dependencies.shutdownSignal.removeEventListener('abort', onShutdown);
        closed();
      }
      // A streamed body is not one of zod-openapi's typed JSON answers; the route's
      // document still describes it (text/event-stream).
    }) as never;
  });
  app.openapi(transcript, async (c) => {
    const { id } = c.req.valid('param');
    const text = await service.transcriptText(id, c.req.valid('query').agent);
    return c.body(dependencies.redact(text), 200, {
      'content-type': 'application/x-ndjson; charset=utf-8',
    }) as never;
  });
}
