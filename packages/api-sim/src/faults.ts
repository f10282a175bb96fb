import { sha256Hex } from './hash.js';
import { matchRequest, type RequestMatcher } from './match-request.js';
import type { SimRequest } from './policy.js';
import { seededRandom } from './seeded-random.js';

/**
 * What can go wrong: `rate_limit` (429), `overloaded` (529), `api_error` (500),
 * `gateway_timeout` (504), `stream_error` (an `error` event mid-stream), `connection_reset`
 * (the socket is destroyed mid-stream), `stall` (the stream stops sending events but keeps the
 * connection open until the client leaves) and `slow_first_byte` (a delay before the response starts).
 */
export type FaultKind =
  | 'rate_limit'
  | 'overloaded'
  | 'api_error'
  | 'gateway_timeout'
  | 'stream_error'
  | 'connection_reset'
  | 'stall'
  | 'slow_first_byte';

/** One fault to inject. Conditions combine: every one given must hold. */
export type FaultSpec = {
  /** What goes wrong. */
  kind: FaultKind;
  /** Chance (0–1) that it fires when the other conditions hold; drawn from the seeded generator. */
  probability?: number;
  /** 1-based request indexes it applies to (retries count as new requests). */
  onRequests?: number[];
  /** Fires at most this many times. */
  times?: number;
  /** Applies only to requests meeting these conditions (or this predicate). */
  match?: RequestMatcher | ((request: SimRequest) => boolean);
  /** For HTTP faults: the `retry-after` hint in seconds (default 0.001; the SDK ignores 0 and backs off ~0.5 s). */
  retryAfterSeconds?: number;
  /**
   * For `stream_error`, `connection_reset` and `stall`: events sent before the failure (default 3).
   * 0 resets before the headers (`connection_reset`), or sends only the headers (`stall`).
   */
  afterEvents?: number;
  /** For `slow_first_byte`: the delay in milliseconds (default 1000). */
  delayMs?: number;
  /** The error message (defaults follow the real API). */
  message?: string;
  /** For `stream_error`: the error type in the event (default `overloaded_error`). */
  errorType?: string;
};

/** Picks the fault (if any) for each request, deterministically for a given seed. */
export type FaultPicker = (request: SimRequest) => FaultSpec | undefined;

/**
 * Creates a fault picker: the first spec whose conditions hold (and whose draw succeeds) fires.
 * A probability draw comes from the seed, the spec, the request's content and agent, and how many
 * identical requests that spec already drew for, so many requests in flight at once get the same
 * faults whatever order they arrive in.
 */
export function createFaultPicker(specs: readonly FaultSpec[], seed: number | string): FaultPicker {
  const fired = specs.map(() => 0);
  const draws = new Map<string, number>();
  return (request) => {
    let identity: string | undefined;
    for (const [index, spec] of specs.entries()) {
      if (spec.onRequests && !spec.onRequests.includes(request.index)) continue;
      if (spec.times !== undefined && (fired[index] ?? 0) >= spec.times) continue;
      if (spec.match) {
        const matched =
          typeof spec.match === 'function'
            ? spec.match(request)
            : matchRequest(spec.match, request);
        if (!matched) continue;
      }
      if (spec.probability !== undefined) {
        identity ??= sha256Hex(JSON.stringify(request.body), request.agent ?? '');
        const key = `${index}:${identity}`;
        const occurrence = draws.get(key) ?? 0;
        draws.set(key, occurrence + 1);
        const draw = seededRandom(`faults:${seed}:${key}:${occurrence}`)();
        if (draw >= spec.probability) continue;
      }
      fired[index] = (fired[index] ?? 0) + 1;
      return spec;
    }
    return undefined;
  };
}
