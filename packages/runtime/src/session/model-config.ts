import { createRequire } from 'node:module';
import { formatWithOptions } from 'node:util';
import type Anthropic from '@anthropic-ai/sdk';
import type { ClientOptions } from '@anthropic-ai/sdk';
import { DelegateError } from '@delegate/core';
import { redactDeep } from '../util/redact-deep.js';
import { secretRedactor } from '../util/redact-secrets.js';
import { checkApiBaseUrl } from './check-api-base-url.js';

// The SDK is the heaviest import of the runtime; it is loaded when the first client is
// made, not when the runtime is imported. `DelegateSession.create` loads its ES module
// first (the copy an application imports too); a client made before any session, by a
// synchronous call, comes from the SDK's CommonJS build.
const requireModule = createRequire(import.meta.url);
let esModuleSdk: typeof Anthropic | undefined;

/** Loads the SDK's ES module, so clients made afterwards use the copy applications import. */
export async function preloadSdk(): Promise<void> {
  esModuleSdk ??= (await import('@anthropic-ai/sdk')).default;
}

function loadSdk(): typeof Anthropic {
  return (
    esModuleSdk ?? (requireModule('@anthropic-ai/sdk') as { default: typeof Anthropic }).default
  );
}

/** Model ids the aliases `sonnet`, `opus`, `haiku` and `fable` stand for, as in Claude Code. */
export const MODEL_ALIASES: Readonly<Record<string, string>> = {
  sonnet: 'claude-sonnet-5-5',
  opus: 'claude-opus-5-5',
  haiku: 'claude-haiku-5-5',
  fable: 'claude-fable-5-2',
};

/** Model sub-agents use when neither the call nor the definition names one. */
export const DEFAULT_SUBAGENT_MODEL = 'sonnet';

/** Model the main agent uses unless told otherwise. */
export const DEFAULT_MAIN_MODEL = 'sonnet';

/** Turns an alias (`sonnet`, `Opus`) into a model id; any other string is returned as is. */
export function resolveModelAlias(model: string): string {
  const trimmed = model.trim();
  return MODEL_ALIASES[trimmed.toLowerCase()] ?? trimmed;
}

/**
 * Picks a sub-agent's model. A fork always inherits the parent's model (a different
 * model cannot read the parent's cache). Otherwise: the call's `model`, then the
 * definition's, then the default sub-agent model; `inherit` means the parent's.
 */
export function resolveAgentModel(options: {
  parentModel: string;
  callModel?: string | undefined;
  definitionModel?: string | undefined;
  defaultSubagentModel?: string | undefined;
  isFork?: boolean;
}): string {
  if (options.isFork) return options.parentModel;
  const chosen =
    options.callModel ??
    options.definitionModel ??
    options.defaultSubagentModel ??
    DEFAULT_SUBAGENT_MODEL;
  if (chosen.trim().toLowerCase() === 'inherit') return options.parentModel;
  return resolveModelAlias(chosen);
}

/** Options of `createApiClient`. */
export type ApiClientOptions = {
  /** API key; defaults to `ANTHROPIC_API_KEY`. */
  apiKey?: string;
  /** Base URL; defaults to `ANTHROPIC_BASE_URL`, then the SDK's default. */
  baseURL?: string;
  /** Retries of 408/409/429/5xx answers (the SDK's backoff honours `retry-after`). */
  maxRetries?: number;
  /** Request timeout in milliseconds. */
  timeout?: number;
  /** Environment to read defaults from. */
  env?: NodeJS.ProcessEnv;
  /**
   * More values the client's log lines must not show (a session passes its `secrets`); the
   * API key and `ANTHROPIC_AUTH_TOKEN` never show.
   */
  secrets?: readonly string[];
};

/**
 * The SDK's logger: every line on stderr (the SDK's default, `console`, writes its debug and
 * info lines to stdout, which is a CLI's output), with the secrets replaced by `[REDACTED]`.
 * With `ANTHROPIC_LOG=debug` the SDK logs request options and raw API error bodies, which can
 * quote a key (a gateway's "rejected x-api-key …").
 */
function stderrLogger(
  redact: ((text: string) => string) | undefined,
): NonNullable<ClientOptions['logger']> {
  const write = (...args: unknown[]): void => {
    // The strings of plain data are redacted before formatting, which could escape or cut
    // them; the whole line after it, for what formatting shows of the rest (an Error).
    const line = formatWithOptions(
      {},
      ...(redact ? args.map((arg) => redactDeep(arg, redact)) : args),
    );
    process.stderr.write(`${redact ? redact(line) : line}\n`);
  };
  return { error: write, warn: write, info: write, debug: write };
}

/**
 * Creates the `@anthropic-ai/sdk` client, honouring `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`.
 * A base URL that is not an http(s) URL is refused at once (INVALID_ARGUMENT naming the
 * variable or option, never its value). The client logs (at the level `ANTHROPIC_LOG` sets) to
 * stderr, with the key and `secrets` replaced by `[REDACTED]`.
 */
export function createApiClient(options: ApiClientOptions = {}): Anthropic {
  const env = options.env ?? process.env;
  const apiKey = options.apiKey ?? env['ANTHROPIC_API_KEY'];
  if (!apiKey) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      'No API key: set ANTHROPIC_API_KEY, or pass apiKey (any non-empty value works against the local simulator).',
    );
  }
  const baseURL = options.baseURL ?? env['ANTHROPIC_BASE_URL'];
  if (baseURL) {
    checkApiBaseUrl(
      baseURL,
      options.baseURL === undefined ? 'ANTHROPIC_BASE_URL' : 'options.baseURL',
    );
  }
  const Client = loadSdk();
  return new Client({
    apiKey,
    ...(baseURL ? { baseURL } : {}),
    maxRetries: options.maxRetries ?? 4,
    timeout: options.timeout ?? 10 * 60 * 1000,
    logger: stderrLogger(
      secretRedactor([apiKey, env['ANTHROPIC_AUTH_TOKEN'], ...(options.secrets ?? [])]),
    ),
  });
}
