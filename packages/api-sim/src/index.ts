export { SimApiError } from './api-error.js';
export type { ApiErrorType } from './api-error.js';
export { buildReplyContent } from './build-reply-content.js';
export type { BuiltReply, ResponseBlock, StopReason } from './build-reply-content.js';
export { echo } from './echo.js';
export {
  TOKEN_OVERHEAD,
  estimateBlockTokens,
  estimateTextTokens,
  estimateToolTokens,
} from './estimate-tokens.js';
export { createFaultPicker } from './faults.js';
export type { FaultKind, FaultPicker, FaultSpec } from './faults.js';
export { flattenPrefix } from './flatten-prefix.js';
export type { FlattenedPrefix, PrefixBlock, RequestFingerprint } from './flatten-prefix.js';
export { defaultForkDirective } from './fork-directive.js';
export type { ForkDirectiveMatcher } from './fork-directive.js';
export { Journal } from './journal.js';
export type { JournalEntry, JournalUsage } from './journal.js';
export { createManualClock } from './manual-clock.js';
export type { Clock, ManualClock } from './manual-clock.js';
export { matchRequest } from './match-request.js';
export type { RequestMatcher, TextMatcher } from './match-request.js';
export { parseBinArguments } from './parse-bin-args.js';
export type { BinArguments } from './parse-bin-args.js';
export type {
  Policy,
  Reply,
  ReplyBlock,
  ReplySource,
  SimRequest,
  SimToolResult,
} from './policy.js';
export {
  CACHE_TTL_MS,
  DEFAULT_LOOKBACK_BLOCKS,
  DEFAULT_MIN_CACHEABLE_TOKENS,
  PromptCache,
} from './prompt-cache.js';
export type { CacheEntryInfo, CachePlan, InputUsage, PromptCacheOptions } from './prompt-cache.js';
export { rules } from './rules.js';
export type { Rule } from './rules.js';
export { script } from './script.js';
export { startSim } from './start-sim.js';
export type { Pacing, Sim, SimCacheView, SimOptions } from './start-sim.js';
export { MAX_CACHE_BREAKPOINTS, validateMessagesRequest } from './validate-request.js';
export type {
  CacheTtl,
  JsonObject,
  NormalizedMessage,
  NormalizedRequest,
  WireBlock,
} from './wire-types.js';
