import { describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
import {
  MAX_RETRY_AFTER_MS,
  isRetryableRequestError,
  isRetryableStreamError,
  normalizeApiError,
  parseRetryAfter,
  requestRetryDelayMs,
  retryDelayMs,
} from './retry-policy.js';

describe('parseRetryAfter', () => {
  it('reads retry-after-ms first, then retry-after as seconds or as an HTTP date', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }))).toBe(250);
    expect(parseRetryAfter(new Headers({ 'retry-after': '1.5' }))).toBe(1500);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }, now)).toBe(3000);
  });

  it('ignores what it cannot read and caps what is too long', () => {
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(parseRetryAfter(new Headers({ 'retry-after': '86400' }))).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter(new Headers({ 'retry-after': '-5' }))).toBe(0);
  });
});

describe('normalizeApiError', () => {
  it('gives an HTTP answer its status and retry hint', () => {
    const error = Object.assign(new Error('529 overloaded'), {
      status: 529,
      headers: new Headers({ 'retry-after': '2' }),
    });
    expect(normalizeApiError(error)).toMatchObject({
      status: 529,
      retryAfterMs: 2000,
      isNetworkError: false,
      isAbort: false,
    });
    expect(isRetryableStreamError(normalizeApiError(error))).toBe(true);
  });

  it('maps an error event inside a stream to the status of its type', () => {
    const event = Object.assign(new Error('Overloaded'), {
      status: undefined,
      type: 'overloaded_error',
    });
    expect(normalizeApiError(event).status).toBe(529);
    const invalid = Object.assign(new Error('bad'), { type: 'invalid_request_error' });
    expect(isRetryableStreamError(normalizeApiError(invalid))).toBe(false);
  });

  it('knows a cut connection, a cut stream and an abort', () => {
    const cut = Object.assign(new Error('Connection error.'), { name: 'APIConnectionError' });
    expect(normalizeApiError(cut).isNetworkError).toBe(true);
    expect(normalizeApiError(new TypeError('terminated')).isNetworkError).toBe(true);
    const early = new DelegateError('API_ERROR', 'ended', { details: { streamEndedEarly: true } });
    expect(isRetryableStreamError(normalizeApiError(early))).toBe(true);
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    expect(isRetryableStreamError(normalizeApiError(abort))).toBe(false);
    expect(isRetryableStreamError(normalizeApiError(new Error('400 bad request')))).toBe(false);
  });

  it('says in words that the connection closed mid-response, and retries an event that is not JSON', () => {
    const reset = new TypeError('terminated', { cause: new Error('other side closed') });
    expect(normalizeApiError(reset).message).toBe(
      'the connection closed in the middle of the response (terminated: other side closed)',
    );
    const garbled = normalizeApiError(new SyntaxError('Unexpected token } in JSON at position 31'));
    expect(garbled.message).toMatch(/^the response stream held an event that is not valid JSON/);
    expect(isRetryableStreamError(garbled)).toBe(true);
  });
});

describe('retryDelayMs', () => {
  it("waits the server's hint when it gave one, else backs off from 200 ms to at most 2 s", () => {
    const hinted = normalizeApiError(
      Object.assign(new Error('x'), { status: 529, headers: { 'retry-after-ms': '700' } }),
    );
    expect(retryDelayMs(0, hinted)).toBe(700);
    const plain = normalizeApiError(Object.assign(new Error('x'), { status: 529 }));
    expect([0, 1, 2, 5].map((attempt) => retryDelayMs(attempt, plain))).toEqual([
      200, 400, 800, 2000,
    ]);
  });
});

describe('isRetryableRequestError and requestRetryDelayMs', () => {
  const answer = (status: number, headers: Record<string, string> = {}) =>
    normalizeApiError(Object.assign(new Error(`${status}`), { status, headers }));

  it('retries what the SDK would: x-should-retry first, then 408, 409, 429, 5xx and lost connections', () => {
    expect(
      [408, 409, 429, 500, 502, 529].map((status) => isRetryableRequestError(answer(status))),
    ).toEqual([true, true, true, true, true, true]);
    expect(
      [400, 401, 403, 404, 413].map((status) => isRetryableRequestError(answer(status))),
    ).toEqual([false, false, false, false, false]);
    expect(isRetryableRequestError(answer(400, { 'x-should-retry': 'true' }))).toBe(true);
    expect(isRetryableRequestError(answer(529, { 'x-should-retry': 'false' }))).toBe(false);
    const refused = Object.assign(new Error('Connection error.'), { name: 'APIConnectionError' });
    expect(isRetryableRequestError(normalizeApiError(refused))).toBe(true);
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    expect(isRetryableRequestError(normalizeApiError(abort))).toBe(false);
  });

  it("waits the server's hint (at most a minute), else 0.5 s doubling to 8 s less up to a quarter", () => {
    expect(requestRetryDelayMs(0, answer(429, { 'retry-after': '30' }))).toBe(30_000);
    expect(requestRetryDelayMs(0, answer(429, { 'retry-after': '3000' }))).toBe(MAX_RETRY_AFTER_MS);
    expect(
      [0, 1, 2, 3, 4, 6].map((attempt) => requestRetryDelayMs(attempt, answer(529), () => 0)),
    ).toEqual([500, 1_000, 2_000, 4_000, 8_000, 8_000]);
    expect(requestRetryDelayMs(4, answer(529), () => 0.999)).toBeGreaterThan(6_000);
  });
});
