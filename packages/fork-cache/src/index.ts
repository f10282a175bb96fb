export { applyCacheBreakpoints } from './apply-cache-breakpoints.js';
export type { ApplyCacheBreakpointsOptions } from './apply-cache-breakpoints.js';
export { assertCacheSafeForkOptions } from './assert-cache-safe-fork-options.js';
export type { CacheSafeForkOptions } from './assert-cache-safe-fork-options.js';
export { assertSharedPrefix } from './assert-shared-prefix.js';
export type { AssertSharedPrefixOptions } from './assert-shared-prefix.js';
export { assessCacheReach } from './assess-cache-reach.js';
export type { CacheReach, PrefixBlockAddress } from './assess-cache-reach.js';
export { buildChildMessage } from './build-child-message.js';
export { buildForkChildMessages } from './build-fork-child-messages.js';
export type { BuildForkChildMessagesOptions } from './build-fork-child-messages.js';
export { buildForkedMessages } from './build-forked-messages.js';
export { buildWorktreeNotice } from './build-worktree-notice.js';
export {
  createCacheSafeParamsSlot,
  getLastCacheSafeParams,
  saveCacheSafeParams,
} from './cache-safe-params.js';
export type { CacheSafeParams, CacheSafeParamsSlot } from './cache-safe-params.js';
export { describeCacheReach } from './describe-cache-reach.js';
export { diagnoseCacheBreak } from './diagnose-cache-break.js';
export type {
  CacheBreakDiagnosis,
  CacheBreakLocation,
  CacheBreakPart,
  CacheKeyPart,
} from './diagnose-cache-break.js';
export { MESSAGE_PREFIX_OFFSET, fingerprintRequest } from './fingerprint-request.js';
export type {
  BlockFingerprint,
  CacheKeyMessage,
  CacheKeyRequest,
  FingerprintOptions,
  MessageFingerprint,
  RequestFingerprint,
} from './fingerprint-request.js';
export {
  FORK_BOILERPLATE_TAG,
  FORK_DIRECTIVE_PREFIX,
  FORK_PLACEHOLDER_RESULT,
} from './fork-constants.js';
export { DEFAULT_FORK_LAYOUT, FORK_LAYOUTS } from './fork-layout.js';
export type { ForkLayout } from './fork-layout.js';
export {
  FORK_RULES_PLACEMENTS,
  buildForkDirectiveLine,
  buildForkRulesBlock,
  buildForkRulesForParent,
} from './fork-worker-rules.js';
export type { ForkRulesPlacement } from './fork-worker-rules.js';
export { formatCacheBreak } from './format-cache-break.js';
export { isInForkChild } from './is-in-fork-child.js';
export { CLAUDE_API_LOOKBACK, STRICT_LOOKBACK } from './lookback.js';
export type { LookbackRule } from './lookback.js';
export type { BlockAddress, BreakpointMessage } from './message-blocks.js';
export { planCacheBreakpoints } from './plan-cache-breakpoints.js';
export type { PlanCacheBreakpointsOptions } from './plan-cache-breakpoints.js';
export { planForkBreakpoints } from './plan-fork-breakpoints.js';
export type { PlanForkBreakpointsOptions } from './plan-fork-breakpoints.js';
export type { BreakpointFingerprint, PrefixBlockFingerprint } from './prefix-blocks.js';
export {
  DEFAULT_MINIMUM_SAVED_TOKENS,
  estimateSiblingSharedTokens,
  shouldWaitForFirstSibling,
} from './should-wait-for-first-sibling.js';
export type { SiblingWaitOptions } from './should-wait-for-first-sibling.js';
