import { describe, it, expect } from 'vitest';
import { getMaxListeners } from 'node:events';
import { createFileStateCache } from './create-file-state-cache.js';
import { createRootToolUseContext } from './create-root-tool-use-context.js';
import { LruFileStateCache } from './lru-file-state-cache.js';

describe('createRootToolUseContext', () => {
  it('builds a main-thread context with tools, model and working directory', () => {
    const context = createRootToolUseContext({
      cwd: '/repo',
      tools: [],
      model: 'model-a',
      options: { querySource: 'repl_main_thread', model: 'ignored' },
    });
    expect(context.cwd).toBe('/repo');
    expect(context.options).toEqual({
      querySource: 'repl_main_thread',
      tools: [],
      model: 'model-a',
    });
    expect(context.messages).toEqual([]);
    expect(context.agentId).toBeUndefined();
    expect(context.queryTracking).toBeUndefined();
    expect(context.abortController.signal.aborted).toBe(false);
  });

  it('puts getAppState, setAppState and setAppStateForTasks on one store', () => {
    const context = createRootToolUseContext({
      cwd: '/repo',
      tools: [],
      model: 'model-a',
      appState: { theme: 'light' },
    });
    expect(context.getAppState().theme).toBe('light');
    context.setAppState((previous) => ({ ...previous, theme: 'dark' }));
    context.setAppStateForTasks?.((previous) => ({
      ...previous,
      tasks: {
        t1: { id: 't1', type: 'local_agent', description: 'd', status: 'running', startTime: 1 },
      },
    }));
    expect(context.getAppState().theme).toBe('dark');
    expect(Object.keys(context.getAppState().tasks)).toEqual(['t1']);
  });

  it('creates a bounded file cache with the given limits, or uses the given cache', () => {
    const limited = createRootToolUseContext({
      cwd: '/repo',
      tools: [],
      model: 'model-a',
      fileStateCacheLimits: { maxEntries: 2 },
    });
    expect(limited.readFileState).toBeInstanceOf(LruFileStateCache);
    for (const name of ['/a', '/b', '/c'])
      limited.readFileState.set(name, { content: '', timestamp: 0 });
    expect(limited.readFileState.size).toBe(2);
    const cache = createFileStateCache();
    expect(
      createRootToolUseContext({ cwd: '/', tools: [], model: 'm', readFileState: cache })
        .readFileState,
    ).toBe(cache);
  });

  it('uses a given abort controller, else a new one with room for 50 child listeners', () => {
    const own = new AbortController();
    expect(
      createRootToolUseContext({ cwd: '/', tools: [], model: 'm', abortController: own })
        .abortController,
    ).toBe(own);
    const fresh = createRootToolUseContext({ cwd: '/', tools: [], model: 'm' }).abortController;
    expect(getMaxListeners(fresh.signal)).toBe(50);
    const wide = createRootToolUseContext({
      cwd: '/',
      tools: [],
      model: 'm',
      maxAbortListeners: 500,
    });
    expect(getMaxListeners(wide.abortController.signal)).toBe(500);
    expect(() =>
      createRootToolUseContext({ cwd: '/', tools: [], model: 'm', maxAbortListeners: -1 }),
    ).toThrow(/maxAbortListeners must be a non-negative integer/);
  });

  it('gives separate roots separate state', () => {
    const first = createRootToolUseContext({ cwd: '/', tools: [], model: 'm' });
    const second = createRootToolUseContext({ cwd: '/', tools: [], model: 'm' });
    first.setAppState((previous) => ({ ...previous, flag: true }));
    first.readFileState.set('/a', { content: 'a', timestamp: 0 });
    expect(second.getAppState().flag).toBeUndefined();
    expect(second.readFileState.has('/a')).toBe(false);
  });
});
