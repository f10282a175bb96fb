import { createRoute } from '@hono/zod-openapi';
import { type App, type AppDependencies, SECURITY } from '../app-context.js';
import {
  ActionView,
  AgentParams,
  CreateRunBody,
  CreatedRunView,
  ListRunsQuery,
  NoQuery,
  ResumeRunBody,
  RunListView,
  RunParams,
  RunView,
  SendMessageBody,
} from '../schemas.js';
import { runSummary, runView } from '../views.js';
import {
  BAD_REQUEST,
  COMMON_ERRORS,
  CONFLICT,
  NOT_FOUND,
  NOT_JSON,
  TOO_LARGE,
  UNAVAILABLE,
  json,
} from './openapi-responses.js';

function body<T>(schema: T, required = true) {
  return { required, content: { 'application/json': { schema } } };
}

const createRun = createRoute({
  method: 'post',
  path: '/v1/runs',
  summary: 'Start a run',
  tags: ['runs'],
  security: SECURITY,
  request: { query: NoQuery, body: body(CreateRunBody) },
  responses: {
    201: json('The run was created and queued.', CreatedRunView),
    ...BAD_REQUEST,
    ...COMMON_ERRORS,
    ...TOO_LARGE,
    ...NOT_JSON,
    ...UNAVAILABLE,
  },
});

const listRuns = createRoute({
  method: 'get',
  path: '/v1/runs',
  summary: 'List runs, newest first',
  tags: ['runs'],
  security: SECURITY,
  request: { query: ListRunsQuery },
  responses: { 200: json('A page of runs.', RunListView), ...BAD_REQUEST, ...COMMON_ERRORS },
});

const getRun = createRoute({
  method: 'get',
  path: '/v1/runs/{id}',
  summary: 'A run with its agent tree, usage and cost per agent',
  tags: ['runs'],
  security: SECURITY,
  request: { params: RunParams, query: NoQuery },
  responses: { 200: json('The run.', RunView), ...BAD_REQUEST, ...NOT_FOUND, ...COMMON_ERRORS },
});

const sendMessage = createRoute({
  method: 'post',
  path: '/v1/runs/{id}/messages',
  summary: 'Continue a run with a user message',
  tags: ['runs'],
  security: SECURITY,
  request: { params: RunParams, query: NoQuery, body: body(SendMessageBody) },
  responses: {
    202: json('The turn was queued.', ActionView),
    ...BAD_REQUEST,
    ...NOT_FOUND,
    ...CONFLICT,
    ...COMMON_ERRORS,
    ...TOO_LARGE,
    ...NOT_JSON,
    ...UNAVAILABLE,
  },
});

const resumeRun = createRoute({
  method: 'post',
  path: '/v1/runs/{id}/resume',
  summary: 'Continue an interrupted, failed or cancelled run from its transcripts',
  tags: ['runs'],
  security: SECURITY,
  request: { params: RunParams, query: NoQuery, body: body(ResumeRunBody, false) },
  responses: {
    202: json('The resumed turn was queued.', ActionView),
    ...BAD_REQUEST,
    ...NOT_FOUND,
    ...CONFLICT,
    ...COMMON_ERRORS,
    ...TOO_LARGE,
    ...NOT_JSON,
    ...UNAVAILABLE,
  },
});

const cancelRun = createRoute({
  method: 'post',
  path: '/v1/runs/{id}/cancel',
  summary: 'Cancel a run (and every agent in it)',
  tags: ['runs'],
  security: SECURITY,
  request: { params: RunParams, query: NoQuery },
  responses: {
    202: json('`cancelled` for a queued run, `cancelling` for a running one.', ActionView),
    ...BAD_REQUEST,
    ...NOT_FOUND,
    ...CONFLICT,
    ...COMMON_ERRORS,
  },
});

const backgroundAgent = createRoute({
  method: 'post',
  path: '/v1/runs/{id}/agents/{agentId}/background',
  summary: 'Move a running foreground sub-agent to the background',
  tags: ['agents'],
  security: SECURITY,
  request: { params: AgentParams, query: NoQuery },
  responses: {
    200: json('The agent now runs in the background.', ActionView),
    ...BAD_REQUEST,
    ...NOT_FOUND,
    ...CONFLICT,
    ...COMMON_ERRORS,
  },
});

const cancelAgent = createRoute({
  method: 'post',
  path: '/v1/runs/{id}/agents/{agentId}/cancel',
  summary: 'Stop one agent of a running run (`main` stops the run)',
  tags: ['agents'],
  security: SECURITY,
  request: { params: AgentParams, query: NoQuery },
  responses: {
    202: json('The agent is being stopped.', ActionView),
    ...BAD_REQUEST,
    ...NOT_FOUND,
    ...CONFLICT,
    ...COMMON_ERRORS,
  },
});

/** Registers the run routes: create, list, read, continue, resume, cancel, steer agents. */
export function registerRunRoutes(app: App, dependencies: AppDependencies): void {
  const { service } = dependencies;
  app.openapi(createRun, async (c) => {
    const run = await service.create(c.req.valid('json'));
    return c.json({ id: run.id, status: run.status, eventsUrl: `/v1/runs/${run.id}/events` }, 201, {
      location: `/v1/runs/${run.id}`,
    });
  });
  app.openapi(listRuns, async (c) => {
    const query = c.req.valid('query');
    const page = await service.list({
      limit: query.limit,
      ...(query.status ? { status: query.status } : {}),
      ...(query.cursor ? { cursor: query.cursor } : {}),
    });
    return c.json({ runs: page.runs.map(runSummary), nextCursor: page.nextCursor }, 200);
  });
  app.openapi(getRun, async (c) => {
    return c.json(runView(await service.details(c.req.valid('param').id)), 200);
  });
  app.openapi(sendMessage, async (c) => {
    const run = await service.sendMessage(c.req.valid('param').id, c.req.valid('json').text);
    return c.json({ runId: run.id, status: run.status }, 202);
  });
  app.openapi(resumeRun, async (c) => {
    const text = (c.req.valid('json') as { text?: string } | undefined)?.text;
    const run = await service.resume(c.req.valid('param').id, text);
    return c.json({ runId: run.id, status: run.status }, 202);
  });
  app.openapi(cancelRun, async (c) => {
    const { id } = c.req.valid('param');
    return c.json({ runId: id, status: await service.cancel(id) }, 202);
  });
  app.openapi(backgroundAgent, async (c) => {
    const { id, agentId } = c.req.valid('param');
    return c.json({ runId: id, agentId, status: await service.backgroundAgent(id, agentId) }, 200);
  });
  app.openapi(cancelAgent, async (c) => {
    const { id, agentId } = c.req.valid('param');
    return c.json({ runId: id, agentId, status: await service.cancelAgent(id, agentId) }, 202);
  });
}
