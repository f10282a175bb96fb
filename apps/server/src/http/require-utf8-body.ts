import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './app-context.js';
import { sendError } from './error-response.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** The `charset` of a Content-Type, lower case; undefined when it names none. */
function charsetOf(contentType: string): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType);
  return match?.[1]?.toLowerCase();
}

/**
 * Refuses a request body that is not UTF-8: a Content-Type naming another charset (415: it is
 * not honoured, and decoding it as UTF-8 would turn `café` into `caf\uFFFD` without a word),
 * or bytes that are not valid UTF-8 (400, instead of replacement characters in the prompt). The
 * body read here is the one the route reads afterwards.
 */
export function requireUtf8Body(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const type = c.req.header('content-type');
    if (type === undefined || c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const charset = charsetOf(type);
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      return sendError(c, {
        status: 415,
        body: {
          error: {
            code: 'UNSUPPORTED_MEDIA_TYPE',
            message: `body: sent as ${charset}; send it as UTF-8 (Content-Type: application/json, or with charset=utf-8).`,
          },
        },
      });
    }
    try {
      decoder.decode(await c.req.arrayBuffer());
    } catch {
      return sendError(c, {
        status: 400,
        body: {
          error: {
            code: 'INVALID_ARGUMENT',
            message: 'body: not valid UTF-8. Send the JSON as UTF-8 text.',
          },
        },
      });
    }
    return next();
  };
}
