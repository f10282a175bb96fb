import { createRoute } from '@hono/zod-openapi';
import { errorMessage } from '@delegate/core';
import type { App, AppDependencies } from '../app-context.js';
import { HealthView } from '../schemas.js';
import { json } from './openapi-responses.js';

const healthz = createRoute({
  method: 'get',
  path: '/healthz',
  summary: 'The process is up',
  tags: ['health'],
  responses: { 200: json('Up.', HealthView) },
});

const readyz = createRoute({
  method: 'get',
  path: '/readyz',
  summary: 'The store answers and the queue takes work',
  tags: ['health'],
  responses: {
    200: json('Ready.', HealthView),
    503: json('Not ready; `checks` says why.', HealthView),
  },
});

/** Registers `/healthz` and `/readyz` (no token needed; they reveal no run data). */
export function registerHealthRoutes(app: App, dependencies: AppDependencies): void {
  app.openapi(healthz, (c) => c.json({ status: 'ok' as const }, 200));
  app.openapi(readyz, async (c) => {
    const checks: Record<string, string> = {};
    try {
      await dependencies.store.ping();
      checks.store = 'ok';
    } catch (error) {
      dependencies.logger.warn({ err: errorMessage(error) }, 'store not reachable');
      checks.store = 'unreachable';
    }
    checks.queue = !dependencies.isAccepting()
      ? 'not accepting work'
      : (await dependencies.queue.ready())
        ? 'ok'
        : 'unreachable';
    // A node that does not hear other nodes' appends leaves its followers of their runs waiting.
    if (dependencies.appendWatch)
      checks.events = dependencies.appendWatch() ? 'ok' : 'not listening';
    const ready = Object.values(checks).every((value) => value === 'ok');
    return c.json(
      { status: ready ? ('ok' as const) : ('unavailable' as const), checks },
      ready ? 200 : 503,
    );
  });
}
