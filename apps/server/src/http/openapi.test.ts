import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gates, scenarioPolicy } from '../__fixtures__/scenario-policy.js';
import { type TestServer, startTestServer } from '../__fixtures__/test-server.js';

describe('GET /v1/openapi.json', () => {
  let test: TestServer;
  beforeAll(async () => {
    test = await startTestServer({ policy: scenarioPolicy(new Gates()) });
  });
  afterAll(() => test.close());

  it('is a valid OpenAPI 3.1 document that lists every route', async () => {
    const response = await test.api('/v1/openapi.json');
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
    };
    expect(document.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    const routes = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(routes.sort()).toEqual(
      [
        'POST /v1/runs',
        'GET /v1/runs',
        'GET /v1/runs/{id}',
        'GET /v1/runs/{id}/events',
        'POST /v1/runs/{id}/messages',
        'POST /v1/runs/{id}/resume',
        'POST /v1/runs/{id}/cancel',
        'POST /v1/runs/{id}/agents/{agentId}/background',
        'POST /v1/runs/{id}/agents/{agentId}/cancel',
        'GET /v1/runs/{id}/transcript',
        'GET /v1/agents',
        'GET /healthz',
        'GET /readyz',
        'GET /metrics',
      ].sort(),
    );
  });
});
