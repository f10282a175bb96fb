import { OpenAPIHono } from '@hono/zod-openapi';
import { getConnInfo } from '@hono/node-server/conninfo';
import { bodyLimit } from 'hono/body-limit';
import { requireUtf8Body } from './require-utf8-body.js';
import { cors } from 'hono/cors';
import { requestId } from 'hono/request-id';
import { secureHeaders } from 'hono/secure-headers';
import { errorMessage } from '@delegate/core';
import { bearerAuth, rateLimit } from './auth-middleware.js';
import type { AppDependencies, AppEnv } from './app-context.js';
import { errorResponse, sendError, validationError } from './error-response.js';
import { registerAgentRoutes } from './routes/agent-routes.js';
import { registerDashboardRoutes } from './routes/dashboard-routes.js';
import { registerEventRoutes } from './routes/event-routes.js';
import { registerHealthRoutes } from './routes/health-routes.js';
import { registerMetricsRoutes } from './routes/metrics-routes.js';
import { registerRunRoutes } from './routes/run-routes.js';

/** Security and limits of the HTTP layer. */
export type AppSecurity = {
  token: string;
  corsOrigins: readonly string[];
  rateLimitPerMinute: number;
  authFailuresPerMinute: number;
  bodyLimitBytes: number;
  redact: <T>(value: T) => T;
};

function clientAddress(c: Parameters<typeof getConnInfo>[0]): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Request ids (`X-Request-Id`) and one JSON access-log line per request. */
function useRequestLog(app: OpenAPIHono<AppEnv>, logger: AppDependencies['logger']): void {
  app.use(requestId());
  app.use(async (c, next) => {
    const started = performance.now();
    await next();
    logger.info(
      {
        requestId: c.get('requestId'),
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round(performance.now() - started),
      },
      'request',
    );
  });
}

/** Bearer auth with the token, limiting failed attempts per client address. */
function tokenAuth(security: AppSecurity): ReturnType<typeof bearerAuth> {
  return bearerAuth({
    token: security.token,
    failuresPerMinute: security.authFailuresPerMinute,
    clientAddress,
  });
}

/** The 404 answer for unknown routes and the error answer (logged if unexpected) for throws. */
function useErrorAnswers(
  app: OpenAPIHono<AppEnv>,
  options: {
    security: AppSecurity;
    logger: AppDependencies['logger'];
    /** What follows `No route METHOD PATH` in the 404 message. */
    notFoundHint?: string;
  },
): void {
  const { security, logger, notFoundHint = '' } = options;
  app.notFound((c) =>
    sendError(c, {
      status: 404,
      body: {
        error: {
          code: 'NOT_FOUND',
          message: `No route ${c.req.method} ${c.req.path}${notFoundHint}.`,
        },
      },
    }),
  );
  app.onError((error, c) =>
    errorResponse(
      c,
      error,
      (unexpected) =>
        logger.error(
          { requestId: c.get('requestId'), err: security.redact(errorMessage(unexpected)) },
          'request failed',
        ),
      security.redact,
    ),
  );
}

/** Request ids and access logs, security headers, CORS, auth, rate and body limits. */
function useMiddleware(
  app: OpenAPIHono<AppEnv>,
  options: { security: AppSecurity; logger: AppDependencies['logger'] },
): void {
  const { security, logger } = options;
  useRequestLog(app, logger);
  app.use(
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        connectSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        frameAncestors: ["'none'"],
      },
    }),
  );
  if (security.corsOrigins.length > 0) {
    app.use(
      '/v1/*',
      cors({
        origin: [...security.corsOrigins],
        allowHeaders: ['Authorization', 'Content-Type', 'Last-Event-ID'],
        allowMethods: ['GET', 'POST', 'OPTIONS'],
        exposeHeaders: ['X-Request-Id', 'Retry-After', 'Location'],
        maxAge: 600,
      }),
    );
  }
  // One instance, so failed attempts on /metrics count toward the same per-address limit.
  const auth = tokenAuth(security);
  app.use('/v1/*', auth);
  app.use('/metrics', auth);
  app.use('/v1/*', rateLimit({ perMinute: security.rateLimitPerMinute }));
  app.use(
    '/v1/*',
    bodyLimit({
      maxSize: security.bodyLimitBytes,
      onError: (c) =>
        sendError(c, {
          status: 413,
          body: {
            error: {
              code: 'PAYLOAD_TOO_LARGE',
              message: `The request body is larger than ${security.bodyLimitBytes} bytes.`,
            },
          },
          // The rest of the body is not read: the connection cannot carry another request.
          headers: { connection: 'close' },
        }),
    }),
  );
  // After the size limit: what it reads is at most that big.
  app.use('/v1/*', requireUtf8Body());
}

/** The OpenAPI 3.1 document at `/v1/openapi.json`, with the bearer scheme. */
function registerDocument(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'DELEGATE_SERVER_TOKEN, or the token the server generated on its first start.',
  });
  app.doc31('/v1/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'delegate-server',
      version: '0.1.0',
      description:
        'Start and steer Delegate runs, follow their agent trees live, read transcripts.',
    },
  });
}

/**
 * The HTTP app: request ids and JSON access logs, security headers, CORS (only for the
 * configured origins), bearer auth and a per-token rate limit on every /v1 route, body
 * limits, zod-validated routes with an OpenAPI 3.1 document, and the dashboard.
 */
export function createApp(
  dependencies: AppDependencies & { security: AppSecurity },
): OpenAPIHono<AppEnv> {
  const { security, logger } = dependencies;
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (!result.success)
        return validationError(c, { target: result.target, error: result.error });
      return undefined;
    },
  });
  useMiddleware(app, { security, logger });

  registerHealthRoutes(app, dependencies);
  registerRunRoutes(app, dependencies);
  registerEventRoutes(app, { ...dependencies, redact: security.redact });
  registerAgentRoutes(app, { ...dependencies, redact: security.redact });
  registerMetricsRoutes(app, dependencies);
  registerDocument(app);
  registerDashboardRoutes(app);
  useErrorAnswers(app, { security, logger });
  return app;
}

/**
 * A worker's health listener (`--health-port`): only `/healthz` and `/readyz` (no token, as
 * on API nodes) and `/metrics` (behind the token, with the same limit on failed attempts);
 * every other path is a 404. No run data, no dashboard, no API. Request ids and the access
 * log are those of the API.
 */
export function createHealthApp(
  dependencies: AppDependencies & { security: AppSecurity },
): OpenAPIHono<AppEnv> {
  const { security, logger } = dependencies;
  const app = new OpenAPIHono<AppEnv>();
  useRequestLog(app, logger);
  app.use(secureHeaders());
  app.use('/metrics', tokenAuth(security));
  registerHealthRoutes(app, dependencies);
  registerMetricsRoutes(app, dependencies);
  useErrorAnswers(app, {
    security,
    logger,
    notFoundHint: ": a worker's health listener serves only /healthz, /readyz and /metrics",
  });
  return app;
}
