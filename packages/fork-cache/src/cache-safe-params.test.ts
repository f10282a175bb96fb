import { createUserMessage } from '@delegate/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CacheSafeParams,
  createCacheSafeParamsSlot,
  getLastCacheSafeParams,
  saveCacheSafeParams,
} from './cache-safe-params.js';
import { parentHistory } from './__fixtures__/parent-conversation.js';
import { createToolUseContext } from './__fixtures__/tool-use-context.js';

function createParams(): CacheSafeParams {
  return {
    systemPrompt: ['You are Delegate.', 'Working directory: /repo'],
    userContext: { currentDate: '2025-01-01' },
    systemContext: { gitStatus: 'clean' },
    toolUseContext: createToolUseContext(),
    forkContextMessages: parentHistory(),
  };
}

describe('the default CacheSafeParams slot', () => {
  afterEach(() => saveCacheSafeParams(null));

  it('returns null before anything is saved and after it is cleared', () => {
    expect(getLastCacheSafeParams()).toBeNull();
    saveCacheSafeParams(createParams());
    expect(getLastCacheSafeParams()).not.toBeNull();
    saveCacheSafeParams(null);
    expect(getLastCacheSafeParams()).toBeNull();
  });

  it('returns what the last turn saved, replacing the turn before', () => {
    const first = createParams();
    const second = { ...createParams(), systemPrompt: ['Another prompt.'] };
    saveCacheSafeParams(first);
    saveCacheSafeParams(second);
    const saved = getLastCacheSafeParams();
    expect(saved?.systemPrompt).toEqual(['Another prompt.']);
    expect(saved?.toolUseContext).toBe(second.toolUseContext);
    expect(saved?.forkContextMessages).toEqual(second.forkContextMessages);
  });

  it('keeps the saved prefix when the parent goes on appending to its live message list', () => {
    const params = createParams();
    saveCacheSafeParams(params);
    params.forkContextMessages.push(createUserMessage({ content: 'A later turn.' }));
    params.systemPrompt.push('changed');
    params.userContext.currentDate = '2025-01-02';
    const saved = getLastCacheSafeParams();
    expect(saved?.forkContextMessages).toHaveLength(3);
    expect(saved?.systemPrompt).toEqual(['You are Delegate.', 'Working directory: /repo']);
    expect(saved?.userContext).toEqual({ currentDate: '2025-01-01' });
  });
});

describe('createCacheSafeParamsSlot', () => {
  afterEach(() => saveCacheSafeParams(null));

  it('gives every session a slot of its own, apart from the default one', () => {
    const sessionA = createCacheSafeParamsSlot();
    const sessionB = createCacheSafeParamsSlot();
    const params = createParams();
    sessionA.save(params);
    expect(sessionA.get()?.systemPrompt).toEqual(params.systemPrompt);
    expect(sessionB.get()).toBeNull();
    expect(getLastCacheSafeParams()).toBeNull();
    sessionA.save(null);
    expect(sessionA.get()).toBeNull();
  });
});
