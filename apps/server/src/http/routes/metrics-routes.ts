import { errorMessage } from '@delegate/core';
import { createRoute, z } from '@hono/zod-openapi';
import { type App, type AppDependencies, SECURITY } from '../app-context.js';
import { ErrorView, NoQuery, RunStatus } from '../schemas.js';
import { COMMON_ERRORS } from './openapi-responses.js';

/** A label value in the text format (backslash, quote and newline escaped). */
function label(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

type Family = { name: string; help: string; type: 'gauge' | 'counter'; samples: string[] };

function family(name: string, help: string, type: Family['type']): Family {
  return { name, help, type, samples: [] };
}

/** The metrics in the Prometheus text exposition format (0.0.4). */
export async function renderMetrics(dependencies: AppDependencies): Promise<string> {
  const [summary, queue] = await Promise.all([
    dependencies.store.summarize(),
    dependencies.queue.stats(),
  ]);
  const runs = family('delegate_runs', 'Runs in the store by status.', 'gauge');
  for (const status of RunStatus.options)
    runs.samples.push(`{status="${status}"} ${summary.runsByStatus[status] ?? 0}`);
  const depth = family('delegate_queue_jobs', 'Jobs of the run queue by state.', 'gauge');
  depth.samples.push(`{state="waiting"} ${queue.queued}`, `{state="active"} ${queue.active}`);
  const concurrency = family(
    'delegate_worker_concurrency',
    'Most runs this process works on at once.',
    'gauge',
  );
  concurrency.samples.push(` ${queue.concurrency}`);
  const turns = family('delegate_turns_total', 'Model responses recorded, all runs.', 'counter');
  turns.samples.push(` ${summary.turns}`);
  const tokens = family('delegate_tokens_total', 'Tokens by model and kind, all runs.', 'counter');
  const cost = family(
    'delegate_cost_usd_total',
    'Cost in US dollars by model, all runs.',
    'counter',
  );
  for (const totals of summary.models) {
    const model = label(totals.model);
    const kinds: [string, number][] = [
      ['input', totals.usage.input_tokens],
      ['output', totals.usage.output_tokens],
      ['cache_read', totals.usage.cache_read_input_tokens],
      ['cache_write', totals.usage.cache_creation_input_tokens],
    ];
    for (const [kind, value] of kinds)
      tokens.samples.push(`{model="${model}",kind="${kind}"} ${value}`);
    cost.samples.push(`{model="${model}"} ${totals.costUsd}`);
  }
  const failovers = family(
    'delegate_failovers_total',
    'Runs taken over from a worker that stopped answering.',
    'counter',
  );
  failovers.samples.push(` ${summary.failovers}`);
  return `${[runs, depth, concurrency, turns, tokens, cost, failovers]
    .map((item) =>
      [
        `# HELP ${item.name} ${item.help}`,
        `# TYPE ${item.name} ${item.type}`,
        ...item.samples.map((sample) => `${item.name}${sample}`),
      ].join('\n'),
    )
    .join('\n')}\n`;
}

const metrics = createRoute({
  method: 'get',
  path: '/metrics',
  summary: 'Runs, queue, tokens, cost and failovers in the Prometheus text format',
  tags: ['health'],
  security: SECURITY,
  request: { query: NoQuery },
  responses: {
    200: {
      description:
        'The Prometheus text exposition format (0.0.4): `delegate_runs`, `delegate_queue_jobs`, `delegate_worker_concurrency`, `delegate_turns_total`, `delegate_tokens_total`, `delegate_cost_usd_total`, `delegate_failovers_total`.',
      content: { 'text/plain': { schema: z.string() } },
    },
    503: {
      description: 'The store or the queue did not answer.',
      content: { 'application/json': { schema: ErrorView } },
    },
    ...COMMON_ERRORS,
  },
});

/** Registers `GET /metrics` (behind the token, like every route but the health checks). */
export function registerMetricsRoutes(app: App, dependencies: AppDependencies): void {
  app.openapi(metrics, async (c) => {
    try {
      const text = await renderMetrics(dependencies);
      return c.body(text, 200, {
        'content-type': 'text/plain; version=0.0.4; charset=utf-8',
      }) as never;
    } catch (error) {
      dependencies.logger.warn({ err: errorMessage(error) }, 'metrics failed');
      return c.json(
        {
          error: {
            code: 'UNAVAILABLE',
            message: 'The store or the queue did not answer; try again.',
          },
        },
        503,
      );
    }
  });
}
