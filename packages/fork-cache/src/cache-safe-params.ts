import { type Message, type ToolUseContext, checkArray, checkObject } from '@delegate/core';

/**
 * Everything a fork must send exactly as its parent did to reuse the parent's prompt
 * cache. The Messages API caches request prefixes keyed by model, tools, system prompt,
 * thinking config and messages, in that order; these fields carry all of them.
 */
export type CacheSafeParams = {
  /**
   * The system prompt blocks exactly as last rendered and sent by the parent. Part of
   * the cache key right after the tools: a fork reuses these bytes instead of rendering
   * the prompt again, since a fresh render can differ and invalidate everything after it.
   */
  systemPrompt: string[];
  /**
   * Context placed in front of the conversation (working directory, platform, date…).
   * It lands in the message prefix, so any change breaks the cache from that message on.
   */
  userContext: Record<string, string>;
  /**
   * Context appended to the system prompt. It is part of the system part of the key;
   * a change invalidates the system prompt and every message after it.
   */
  systemContext: Record<string, string>;
  /**
   * The parent's tool-use context. Its `options.tools` form the first part of the key,
   * `options.model` selects the cache altogether, and `options.thinking` is the thinking
   * config (part of the key). It is the live context: isolate it (for example with
   * `createSubagentContext`) before a fork changes anything in it.
   */
  toolUseContext: ToolUseContext;
  /**
   * The parent's conversation, sent unchanged as the fork's message prefix. The cache
   * matches prefixes, so the fork's own messages must only be appended after these.
   */
  forkContextMessages: Message[];
};

/** Holds the most recent `CacheSafeParams` of one session for work that runs after a turn. */
export type CacheSafeParamsSlot = {
  /** Stores a snapshot of the params (or clears the slot with null). */
  save(params: CacheSafeParams | null): void;
  /** Returns the stored snapshot, or null when nothing was saved or it was cleared. */
  get(): CacheSafeParams | null;
};

function checkParams(where: string, params: unknown): void {
  checkObject(where, 'params', params);
  const fields = params as Record<string, unknown>;
  checkArray(where, 'params.systemPrompt', fields.systemPrompt);
  checkObject(where, 'params.userContext', fields.userContext);
  checkObject(where, 'params.systemContext', fields.systemContext);
  checkObject(where, 'params.toolUseContext', fields.toolUseContext);
  checkArray(where, 'params.forkContextMessages', fields.forkContextMessages);
}

function snapshot(params: CacheSafeParams): CacheSafeParams {
  // The arrays and records are copied so that the parent appending to its live message
  // list after the save does not change the prefix a post-turn fork will send. The
  // tool-use context stays shared on purpose: it holds live state that isolation copies.
  return {
    systemPrompt: [...params.systemPrompt],
    userContext: { ...params.userContext },
    systemContext: { ...params.systemContext },
    toolUseContext: params.toolUseContext,
    forkContextMessages: [...params.forkContextMessages],
  };
}

/** Creates a slot of its own, for hosts that run several sessions side by side. */
export function createCacheSafeParamsSlot(): CacheSafeParamsSlot {
  let saved: CacheSafeParams | null = null;
  return {
    save(params) {
      if (params !== null) checkParams('CacheSafeParamsSlot.save()', params);
      saved = params === null ? null : snapshot(params);
    },
    get() {
      return saved;
    },
  };
}

const defaultSlot = createCacheSafeParamsSlot();

/**
 * Saves the params of the turn that just ended in the default slot, so work after the
 * turn (suggestions, summaries, side questions) can fork from it; null clears it.
 */
export function saveCacheSafeParams(params: CacheSafeParams | null): void {
  if (params !== null) checkParams('saveCacheSafeParams()', params);
  defaultSlot.save(params);
}

/** Returns the params last saved in the default slot, or null. */
export function getLastCacheSafeParams(): CacheSafeParams | null {
  return defaultSlot.get();
}
