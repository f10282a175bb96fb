import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { sendError } from './error-response.js';

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Variables the middleware sets on the context. */
export type AuthVariables = {
  /** A short, non-secret fingerprint of the caller's token (the rate-limit key). */
  tokenId: string;
};

/**
 * Requires `Authorization: Bearer <token>`. The comparison hashes both sides first, so it
 * takes the same time whatever the length or content of the sent value. Every failure is
 * the same 401, before any route runs (so it never tells whether a run exists); a client
 * address that fails too often gets 429 with `retry-after` for its further failures.
 */
export function bearerAuth(options: {
  token: string;
  failuresPerMinute: number;
  clientAddress: (c: Parameters<MiddlewareHandler>[0]) => string;
}): MiddlewareHandler<{ Variables: AuthVariables }> {
  const expected = digest(options.token);
  const tokenId = expected.subarray(0, 6).toString('hex');
  const failures = new RateLimiterMemory({ points: options.failuresPerMinute, duration: 60 });
  return async (c, next) => {
    // A CORS preflight carries no credentials by design; the CORS middleware answers it.
    if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method')) return next();
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    const sent = digest(match?.[1] ?? '');
    if (match && timingSafeEqual(sent, expected)) {
      c.set('tokenId', tokenId);
      return next();
    }
    // Only failures are limited, so a client with the right token is never locked out by
    // someone guessing from the same address.
    const address = options.clientAddress(c);
    const blocked = await failures.get(address);
    if (blocked && blocked.remainingPoints <= 0) {
      const retryAfter = Math.max(1, Math.ceil(blocked.msBeforeNext / 1000));
      return sendError(c, {
        status: 429,
        headers: { 'retry-after': String(retryAfter) },
        body: {
          error: {
            code: 'RATE_LIMITED',
            message: `Too many failed authentications from this address; try again in ${retryAfter} s.`,
          },
        },
      });
    }
    await failures.consume(address).catch(() => undefined);
    return sendError(c, {
      status: 401,
      headers: { 'www-authenticate': 'Bearer realm="delegate-server"' },
      body: {
        error: {
          code: 'UNAUTHORIZED',
          message:
            'A valid bearer token is required: send Authorization: Bearer <token> (DELEGATE_SERVER_TOKEN, or the token the server printed on its first start).',
        },
      },
    });
  };
}

/** Limits requests per token per minute; over the limit, 429 with `retry-after` in seconds. */
export function rateLimit(options: {
  perMinute: number;
}): MiddlewareHandler<{ Variables: AuthVariables }> {
  const limiter = new RateLimiterMemory({ points: options.perMinute, duration: 60 });
  return async (c, next) => {
    try {
      await limiter.consume(c.get('tokenId') ?? 'anonymous');
    } catch (rejection) {
      const msBeforeNext =
        typeof rejection === 'object' && rejection !== null && 'msBeforeNext' in rejection
          ? Number((rejection as { msBeforeNext: number }).msBeforeNext)
          : 60_000;
      const retryAfter = Math.max(1, Math.ceil(msBeforeNext / 1000));
      return sendError(c, {
        status: 429,
        headers: { 'retry-after': String(retryAfter) },
        body: {
          error: {
            code: 'RATE_LIMITED',
            message: `More than ${options.perMinute} requests in a minute with this token; try again in ${retryAfter} s.`,
          },
        },
      });
    }
    return next();
  };
}
