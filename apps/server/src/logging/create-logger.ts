import { pino, type DestinationStream, type Logger } from 'pino';
import { REDACTED, createRedactor } from '../security/create-redactor.js';

/** Field paths that may hold credentials, removed from every log line. */
const REDACT_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'apiKey',
  'token',
  '*.apiKey',
  '*.token',
];

/**
 * A JSON logger (pino) that drops credential fields and replaces the configured secrets
 * wherever they appear (messages included).
 */
export function createLogger(options: {
  level: string;
  secrets: readonly (string | undefined)[];
  destination?: DestinationStream;
}): Logger {
  const redact = createRedactor(options.secrets);
  return pino(
    {
      level: options.level,
      base: { service: 'delegate-server' },
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      formatters: { log: (object) => redact(object) },
      hooks: {
        logMethod(args, method) {
          method.apply(this, redact(args) as typeof args);
        },
      },
    },
    options.destination ?? pino.destination(1),
  );
}
