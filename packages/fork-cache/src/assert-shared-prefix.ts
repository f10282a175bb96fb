import { DelegateError, checkArray, checkObject } from '@delegate/core';
import { describeCacheReach } from './describe-cache-reach.js';
import { diagnoseCacheBreak } from './diagnose-cache-break.js';
import {
  type CacheKeyRequest,
  type RequestFingerprint,
  fingerprintRequest,
} from './fingerprint-request.js';
import { formatCacheBreak } from './format-cache-break.js';
import { type LookbackRule } from './lookback.js';

/** How much of the requests must match, and under which lookback. */
export type AssertSharedPrefixOptions = {
  /** The lookback of the server the requests go to (default `STRICT_LOOKBACK`), for bodies. */
  lookback?: Partial<LookbackRule>;
  /**
   * True (the default): the requests must match in everything except the last block of
   * the last message, which is where sibling forks put their directives. They must still
   * have as many messages, and the last message as many blocks. False: they must match
   * in every cache-key part.
   */
  upToLastBlock?: boolean;
};

// How the two requests' shapes differ (number of messages, blocks of the last message).
function shapeDifference(
  reference: RequestFingerprint,
  other: RequestFingerprint,
): string | undefined {
  const count = (fingerprint: RequestFingerprint) => fingerprint.messages.length;
  if (count(other) !== count(reference)) {
    return `it has ${count(other)} messages where request 0 has ${count(reference)}`;
  }
  const last = count(reference) - 1;
  const blocks = (fingerprint: RequestFingerprint) =>
    fingerprint.messages[last]?.blocks.length ?? 0;
  if (blocks(other) !== blocks(reference)) {
    return `its last message has ${blocks(other)} blocks where request 0's has ${blocks(reference)}`;
  }
  return undefined;
}

/**
 * Throws `CACHE_UNSAFE` unless every request shares the first one's cache key (up to
 * the last block of the last message by default) and can read, within the lookback of its
 * breakpoints, the latest entry the first one wrote in that shared prefix; the message names
 * the first difference or why the shared prefix is not read.
 */
export function assertSharedPrefix(
  requests: readonly (CacheKeyRequest | RequestFingerprint)[],
  options: AssertSharedPrefixOptions = {},
): void {
  checkArray('assertSharedPrefix()', 'requests', requests);
  requests.forEach((request, index) =>
    checkObject('assertSharedPrefix()', `requests[${index}]`, request),
  );
  checkObject('assertSharedPrefix()', 'options', options);
  const upToLastBlock = options.upToLastBlock ?? true;
  const lookback = options.lookback;
  const fingerprints = requests.map((request) =>
    'prefixBlocks' in request
      ? request
      : fingerprintRequest(request, lookback === undefined ? {} : { lookback }),
  );
  const [reference, ...others] = fingerprints;
  if (reference === undefined) return;
  others.forEach((other, offset) => {
    const requestIndex = offset + 1;
    const diagnosis = diagnoseCacheBreak(reference, other);
    if (diagnosis.identical) return;
    const { firstDifference } = diagnosis;
    const lastMessageIndex = reference.messages.length - 1;
    const lastBlockIndex = (reference.messages[lastMessageIndex]?.blocks.length ?? 0) - 1;
    const differsOnlyAtLastBlock =
      upToLastBlock &&
      other.messages.length === reference.messages.length &&
      other.messages[lastMessageIndex]?.blocks.length === lastBlockIndex + 1 &&
      firstDifference.part === 'message' &&
      firstDifference.messageIndex === lastMessageIndex &&
      firstDifference.blockIndex === lastBlockIndex;
    // Sharing the bytes is not enough: the shared prefix must also be readable from the cache.
    if (differsOnlyAtLastBlock && diagnosis.reach.reachable) return;
    if (differsOnlyAtLastBlock) {
      throw new DelegateError(
        'CACHE_UNSAFE',
        `Request ${requestIndex} shares request 0's prefix byte for byte but cannot read it from the cache: ` +
          `${describeCacheReach(diagnosis.reach) ?? 'the shared prefix is not read'}. Place the breakpoints with planForkBreakpoints or planCacheBreakpoints.`,
        { details: { requestIndex, reach: diagnosis.reach } },
      );
    }
    const expected = upToLastBlock
      ? 'everything but the last block of the last message'
      : 'every cache-key part';
    // The content differs where the last block is, but the real cause is a different shape.
    const shape = shapeDifference(reference, other);
    const cause =
      shape !== undefined &&
      firstDifference.part === 'message' &&
      firstDifference.messageIndex === lastMessageIndex
        ? shape
        : formatCacheBreak(diagnosis);
    throw new DelegateError(
      'CACHE_UNSAFE',
      `Request ${requestIndex} does not match request 0 in ${expected}: ` +
        `${cause}. Make the forks reuse the parent's exact tools, system prompt, model, thinking config and history.`,
      {
        details: {
          requestIndex,
          firstDifference,
          sharedPrefixMessages: diagnosis.sharedPrefixMessages,
          reach: diagnosis.reach,
        },
      },
    );
  });
}
