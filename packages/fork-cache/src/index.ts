export { assertCacheSafeForkOptions } from './assert-cache-safe-fork-options.js';
export type { CacheSafeForkOptions } from './assert-cache-safe-fork-options.js';
export { assertSharedPrefix } from './assert-shared-prefix.js';
export type { AssertSharedPrefixOptions } from './assert-shared-prefix.js';
export { buildChildMessage } from './build-child-message.js';
export { buildForkedMessages } from './build-forked-messages.js';
export { buildWorktreeNotice } from './build-worktree-notice.js';
export {
  createCacheSafeParamsSlot,
  getLastCacheSafeParams,
  saveCacheSafeParams,
} from './cache-safe-params.js';
export type { CacheSafeParams, CacheSafeParamsSlot } from './cache-safe-params.js';
export { diagnoseCacheBreak } from './diagnose-cache-break.js';
export type {
  CacheBreakDiagnosis,
  CacheBreakLocation,
  CacheKeyPart,
} from './diagnose-cache-break.js';
export { MESSAGE_PREFIX_OFFSET, fingerprintRequest } from './fingerprint-request.js';
export type {
  BlockFingerprint,
  CacheKeyMessage,
  CacheKeyRequest,
  MessageFingerprint,
  RequestFingerprint,
} from './fingerprint-request.js';
export {
  FORK_BOILERPLATE_TAG,
  FORK_DIRECTIVE_PREFIX,
  FORK_PLACEHOLDER_RESULT,
} from './fork-constants.js';
export { formatCacheBreak } from './format-cache-break.js';
export { isInForkChild } from './is-in-fork-child.js';
