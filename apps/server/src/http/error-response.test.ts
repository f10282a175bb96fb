import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { errorResponse } from './error-response.js';

const SECRET = 'sk-ant-secret-0123456789abcdef';

describe('errorResponse for an unexpected error', () => {
  it('answers 500 with the redacted message, redacted before it is cut to 200 characters', async () => {
    const logged: unknown[] = [];
    const app = new Hono();
    // The secret straddles character 200 of the message: cut first, its head would stay.
    const padding = 'x'.repeat(190);
    app.get('/fail', () => {
      throw new Error(`${padding}${SECRET} and more`);
    });
    app.onError((error, c) =>
      errorResponse(
        c,
        error,
        (unexpected) => logged.push(unexpected),
        (text) => text.split(SECRET).join('[REDACTED]'),
      ),
    );
    const response = await app.request('/fail');
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('INTERNAL');
    expect(body.error.message).toContain(`${padding}[REDACTED]`);
    expect(body.error.message).not.toContain(SECRET.slice(0, 10));
    expect(logged).toHaveLength(1);
  });
});
