import { checkObject } from '@delegate/core';
import { type CacheReach, assessCacheReach } from './assess-cache-reach.js';
import { describeCacheReach } from './describe-cache-reach.js';
import {
  type CacheKeyRequest,
  type MessageFingerprint,
  type RequestFingerprint,
  MESSAGE_PREFIX_OFFSET,
  fingerprintRequest,
} from './fingerprint-request.js';

/** A part of the prompt-cache key, in the order the cache reads them. */
export type CacheKeyPart = 'model' | 'tools' | 'system' | 'thinking' | 'options' | 'message';

/**
 * What breaks a cache read: a cache-key part that differs, or, with the prefix shared byte
 * for byte, `breakpoints` (no entry written where the later request could find it) or
 * `lookback` (the entry lies beyond the lookback of the later request's breakpoints).
 */
export type CacheBreakPart = CacheKeyPart | 'breakpoints' | 'lookback';

/** Where two requests first differ. */
export type CacheBreakLocation = {
  /** What differs: a cache-key part, or where breakpoints leave a shared prefix unread. */
  part: CacheBreakPart;
  /** Index of the first differing message (part `message`). */
  messageIndex?: number;
  /** Index of the first differing block: in the message (part `message`) or in the system prompt (part `system`). */
  blockIndex?: number;
  /** Index of the first differing tool definition (part `tools`). */
  toolIndex?: number;
  /** Name of the first differing body field (part `options`). */
  field?: string;
  /** One sentence that says what differs, for logs and error messages. */
  detail: string;
};

/** The result of comparing the cache keys of two requests. */
export type CacheBreakDiagnosis =
  | {
      /**
       * Every cache-key part matches and request b's breakpoints reach the entries request
       * a wrote: the second request can read everything the first cached.
       */
      identical: true;
      /** Number of messages (all of them). */
      sharedPrefixMessages: number;
      /** How request b reads what request a cached (see `assessCacheReach`). */
      reach: CacheReach;
    }
  | {
      /** Some cache-key part differs, or the shared prefix cannot be read from the cache. */
      identical: false;
      /**
       * The first difference, in cache order (model, tools, system, thinking, options,
       * messages). When the prefix is shared byte for byte but request b cannot read the
       * entry request a wrote in it, the part is `breakpoints` or `lookback`.
       */
      firstDifference: CacheBreakLocation;
      /** Number of leading messages whose cached prefix the two requests still share. */
      sharedPrefixMessages: number;
      /**
       * Set when the difference is no break: one request is the other with more content
       * appended (more messages, or more blocks in its last message) and its breakpoints
       * reach what the shorter one cached. Names the longer request.
       */
      longerRequest?: 'a' | 'b';
      /** How request b reads what request a cached in the prefix they share. */
      reach: CacheReach;
    };

function toFingerprint(value: CacheKeyRequest | RequestFingerprint): RequestFingerprint {
  return 'prefixBlocks' in value ? value : fingerprintRequest(value);
}

function onlyIn(aHas: boolean): string {
  return aHas ? 'is only in request a' : 'is only in request b';
}

function compareTools(
  a: RequestFingerprint,
  b: RequestFingerprint,
): CacheBreakLocation | undefined {
  if (a.tools.hash === b.tools.hash) return undefined;
  const count = Math.max(a.tools.items.length, b.tools.items.length);
  for (let index = 0; index < count; index++) {
    const left = a.tools.items[index];
    const right = b.tools.items[index];
    if (left && right && left.hash === right.hash) continue;
    if (left && right) {
      const detail =
        left.name === right.name
          ? `tool ${index} ("${left.name}") has a different definition`
          : `tool ${index} differs: "${left.name}" vs "${right.name}"`;
      return { part: 'tools', toolIndex: index, detail };
    }
    const present = left ?? right;
    return {
      part: 'tools',
      toolIndex: index,
      detail: `tool ${index} ("${present?.name}") ${onlyIn(Boolean(left))}`,
    };
  }
  return { part: 'tools', detail: 'tool definitions differ' };
}

function compareSystem(
  a: RequestFingerprint,
  b: RequestFingerprint,
): CacheBreakLocation | undefined {
  if (a.system.hash === b.system.hash) return undefined;
  const count = Math.max(a.system.blocks.length, b.system.blocks.length);
  for (let index = 0; index < count; index++) {
    const left = a.system.blocks[index];
    const right = b.system.blocks[index];
    if (left !== undefined && left === right) continue;
    const detail =
      left !== undefined && right !== undefined
        ? `system block ${index} has different text`
        : `system block ${index} ${onlyIn(left !== undefined)}`;
    return { part: 'system', blockIndex: index, detail };
  }
  return { part: 'system', detail: 'system prompt differs' };
}

function compareOptions(
  a: RequestFingerprint,
  b: RequestFingerprint,
): CacheBreakLocation | undefined {
  if (a.options.hash === b.options.hash) return undefined;
  const fields = [
    ...new Set([...Object.keys(a.options.fields), ...Object.keys(b.options.fields)]),
  ].sort();
  for (const field of fields) {
    const left = a.options.fields[field];
    const right = b.options.fields[field];
    if (left === right) continue;
    const detail =
      left !== undefined && right !== undefined
        ? `request field "${field}" differs`
        : `request field "${field}" is only set in request ${left !== undefined ? 'a' : 'b'}`;
    return { part: 'options', field, detail };
  }
  return { part: 'options', detail: 'request options differ' };
}

function compareMessage(
  index: number,
  left: MessageFingerprint | undefined,
  right: MessageFingerprint | undefined,
): CacheBreakLocation | undefined {
  if (left && right && left.hash === right.hash) return undefined;
  if (!left || !right) {
    const present = left ?? right;
    return {
      part: 'message',
      messageIndex: index,
      detail: `message ${index} (${present?.role}) ${onlyIn(Boolean(left))}`,
    };
  }
  if (left.role !== right.role) {
    return {
      part: 'message',
      messageIndex: index,
      detail: `message ${index} role differs: ${left.role} vs ${right.role}`,
    };
  }
  const count = Math.max(left.blocks.length, right.blocks.length);
  for (let blockIndex = 0; blockIndex < count; blockIndex++) {
    const leftBlock = left.blocks[blockIndex];
    const rightBlock = right.blocks[blockIndex];
    if (leftBlock && rightBlock && leftBlock.hash === rightBlock.hash) continue;
    const where = `message ${index} (${left.role}) block ${blockIndex}`;
    let detail: string;
    if (leftBlock && rightBlock) {
      detail =
        leftBlock.type === rightBlock.type
          ? `${where} (${leftBlock.type}) has different content`
          : `${where} differs in type: ${leftBlock.type} vs ${rightBlock.type}`;
    } else {
      detail = `${where} (${(leftBlock ?? rightBlock)?.type}) ${onlyIn(Boolean(leftBlock))}`;
    }
    return { part: 'message', messageIndex: index, blockIndex, detail };
  }
  return { part: 'message', messageIndex: index, detail: `message ${index} differs` };
}

/** Counts the leading messages whose prefix hashes match. */
function countSharedMessages(a: RequestFingerprint, b: RequestFingerprint): number {
  const count = Math.min(a.messages.length, b.messages.length);
  let shared = 0;
  while (
    shared < count &&
    a.prefixHash[MESSAGE_PREFIX_OFFSET + shared] === b.prefixHash[MESSAGE_PREFIX_OFFSET + shared]
  ) {
    shared++;
  }
  return shared;
}

/**
 * Compares the cache keys of two requests (bodies or fingerprints; b is the later one) and
 * names the first part that differs, in cache order, with the tool, block or message index,
 * plus the number of leading messages whose cached prefix the two still share. It also
 * models where the breakpoints are: request a wrote an entry at each of its breakpoints, and
 * b reads one only within the lookback of its own breakpoints (the rule of b's fingerprint,
 * `STRICT_LOOKBACK` for a body). A prefix shared byte for byte that b cannot read is a break
 * in `lookback` ("the nearest cached block is 25 blocks before request b's first breakpoint
 * after it…") or `breakpoints` (no entry where b could find one). When one request only
 * appends to the other (a fork after its parent's request, the next turn after this one)
 * and reaches what it cached, `longerRequest` says so: that is a cache read, not a break.
 */
export function diagnoseCacheBreak(
  a: CacheKeyRequest | RequestFingerprint,
  b: CacheKeyRequest | RequestFingerprint,
): CacheBreakDiagnosis {
  checkObject('diagnoseCacheBreak()', 'a', a);
  checkObject('diagnoseCacheBreak()', 'b', b);
  const left = toFingerprint(a);
  const right = toFingerprint(b);
  const sharedPrefixMessages = countSharedMessages(left, right);
  const difference = firstDifference(left, right);
  const longerRequest = difference && extendingRequest(left, right, difference);
  // The reader is the request that continues the other: b, unless a is the longer one.
  const reach =
    longerRequest === 'a' ? assessCacheReach(right, left) : assessCacheReach(left, right);
  const unreadable = reachBreak(reach);
  if (difference === undefined || longerRequest !== undefined) {
    // The prefix is shared byte for byte; whether it is read depends on the breakpoints.
    if (unreadable) {
      return { identical: false, firstDifference: unreadable, sharedPrefixMessages, reach };
    }
    if (difference === undefined) return { identical: true, sharedPrefixMessages, reach };
    return {
      identical: false,
      firstDifference: difference,
      sharedPrefixMessages,
      longerRequest,
      reach,
    };
  }
  return { identical: false, firstDifference: difference, sharedPrefixMessages, reach };
}

/** The break a reach problem amounts to, located at the cached block it fails to read. */
function reachBreak(reach: CacheReach): CacheBreakLocation | undefined {
  const detail = describeCacheReach(reach);
  if (detail === undefined) return undefined;
  const where = reach.breakpoint ?? reach.nearestEntry;
  return {
    part: reach.problem === 'beyond-lookback' ? 'lookback' : 'breakpoints',
    ...(where?.messageIndex === undefined ? {} : { messageIndex: where.messageIndex }),
    ...(where?.blockIndex === undefined ? {} : { blockIndex: where.blockIndex }),
    ...(where?.toolIndex === undefined ? {} : { toolIndex: where.toolIndex }),
    detail,
  };
}

/** True when `shorter` is `longer` with blocks missing at the end (same role, same leading blocks). */
function isBlockPrefix(shorter: MessageFingerprint, longer: MessageFingerprint): boolean {
  return (
    shorter.role === longer.role &&
    shorter.blocks.length < longer.blocks.length &&
    shorter.blocks.every((block, index) => block.hash === longer.blocks[index]?.hash)
  );
}

/**
 * Names the request that merely continues the other one, when the first difference is
 * in the messages and the shorter request ends there: either it has no message at that
 * index, or that is its last message and holds a leading part of the longer one's blocks.
 */
function extendingRequest(
  a: RequestFingerprint,
  b: RequestFingerprint,
  difference: CacheBreakLocation,
): 'a' | 'b' | undefined {
  if (difference.part !== 'message' || difference.messageIndex === undefined) return undefined;
  const index = difference.messageIndex;
  const continues = (shorter: RequestFingerprint, longer: RequestFingerprint): boolean => {
    const longerMessage = longer.messages[index];
    if (longerMessage === undefined) return false;
    if (shorter.messages.length === index) return true;
    const shorterMessage = shorter.messages[index];
    return (
      shorter.messages.length === index + 1 &&
      shorterMessage !== undefined &&
      isBlockPrefix(shorterMessage, longerMessage)
    );
  };
  if (continues(a, b)) return 'b';
  if (continues(b, a)) return 'a';
  return undefined;
}

function firstDifference(
  a: RequestFingerprint,
  b: RequestFingerprint,
): CacheBreakLocation | undefined {
  if (a.model.hash !== b.model.hash) {
    return { part: 'model', detail: `model differs: "${a.model.name}" vs "${b.model.name}"` };
  }
  const toolDifference = compareTools(a, b);
  if (toolDifference) return toolDifference;
  const systemDifference = compareSystem(a, b);
  if (systemDifference) return systemDifference;
  if (a.thinking.hash !== b.thinking.hash) {
    return {
      part: 'thinking',
      detail: `thinking config differs: ${a.thinking.canonical} vs ${b.thinking.canonical}`,
    };
  }
  const optionDifference = compareOptions(a, b);
  if (optionDifference) return optionDifference;
  const count = Math.max(a.messages.length, b.messages.length);
  for (let index = 0; index < count; index++) {
    const messageDifference = compareMessage(index, a.messages[index], b.messages[index]);
    if (messageDifference) return messageDifference;
  }
  return undefined;
}
