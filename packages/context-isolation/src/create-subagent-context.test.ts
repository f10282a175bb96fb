import { describe, it, expect } from 'vitest';
import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  createUserMessage,
  type AppState,
  type TaskState,
  type ToolUseContext,
} from '@delegate/core';
import { createFileStateCache } from './create-file-state-cache.js';
import { createRootToolUseContext } from './create-root-tool-use-context.js';
import { createSubagentContext, releaseSubagentContext } from './create-subagent-context.js';

function createRoot(): ToolUseContext {
  return createRootToolUseContext({ cwd: '/repo', tools: [], model: 'model-a' });
}

function task(id: string): TaskState {
  return { id, type: 'local_bash', description: `task ${id}`, status: 'running', startTime: 0 };
}

function registerTask(context: ToolUseContext, id: string): void {
  context.setAppStateForTasks?.((previous) => ({
    ...previous,
    tasks: { ...previous.tasks, [id]: task(id) },
  }));
}

describe('createSubagentContext: file state', () => {
  it("gives the child a clone of the parent's cache: same entries, separate writes", () => {
    const parent = createRoot();
    parent.readFileState.set('/repo/a.ts', { content: 'a', timestamp: 1 });
    const child = createSubagentContext(parent);
    expect(child.readFileState.get('/repo/a.ts')?.content).toBe('a');

    child.readFileState.set('/repo/b.ts', { content: 'b', timestamp: 2 });
    child.readFileState.set('/repo/a.ts', { content: 'a edited', timestamp: 3 });
    expect(parent.readFileState.has('/repo/b.ts')).toBe(false);
    expect(parent.readFileState.get('/repo/a.ts')?.content).toBe('a');

    parent.readFileState.set('/repo/c.ts', { content: 'c', timestamp: 4 });
    expect(child.readFileState.has('/repo/c.ts')).toBe(false);
  });

  it('clones the readFileState override instead of the parent cache', () => {
    const parent = createRoot();
    parent.readFileState.set('/repo/parent.ts', { content: 'p', timestamp: 1 });
    const source = createFileStateCache();
    source.set('/repo/source.ts', { content: 's', timestamp: 1 });
    const child = createSubagentContext(parent, { readFileState: source });
    expect(child.readFileState.has('/repo/parent.ts')).toBe(false);
    expect(child.readFileState.has('/repo/source.ts')).toBe(true);
    child.readFileState.set('/repo/new.ts', { content: 'n', timestamp: 2 });
    expect(source.has('/repo/new.ts')).toBe(false);
  });
});

describe('createSubagentContext: abort', () => {
  it('links a new child controller: parent abort reaches the child, never the reverse', () => {
    const parent = createRoot();
    const first = createSubagentContext(parent);
    const second = createSubagentContext(parent);
    expect(first.abortController).not.toBe(parent.abortController);
    first.abortController.abort();
    expect(parent.abortController.signal.aborted).toBe(false);
    expect(second.abortController.signal.aborted).toBe(false);
    parent.abortController.abort('cancelled');
    expect(second.abortController.signal.reason).toBe('cancelled');
  });

  it("uses the parent's controller itself with shareAbortController", () => {
    const parent = createRoot();
    const child = createSubagentContext(parent, { shareAbortController: true });
    expect(child.abortController).toBe(parent.abortController);
    child.abortController.abort();
    expect(parent.abortController.signal.aborted).toBe(true);
  });

  it('prefers an explicit abortController over sharing', () => {
    const parent = createRoot();
    const own = new AbortController();
    const child = createSubagentContext(parent, {
      abortController: own,
      shareAbortController: true,
    });
    expect(child.abortController).toBe(own);
    parent.abortController.abort();
    expect(own.signal.aborted).toBe(false);
  });
});

describe('createSubagentContext: app state', () => {
  it('shows the child a state that avoids permission prompts, without changing the parent', () => {
    const parent = createRoot();
    const child = createSubagentContext(parent);
    const seen = child.getAppState();
    expect(seen.toolPermissionContext.shouldAvoidPermissionPrompts).toBe(true);
    expect(seen.toolPermissionContext.mode).toBe('default');
    expect(parent.getAppState().toolPermissionContext.shouldAvoidPermissionPrompts).toBeUndefined();
    expect(child.getAppState()).toBe(seen);
  });

  it('returns the parent state object itself when it already avoids prompts', () => {
    const root = createRootToolUseContext({
      cwd: '/repo',
      tools: [],
      model: 'model-a',
      appState: {
        toolPermissionContext: {
          mode: 'dontAsk',
          allowRules: [],
          denyRules: [],
          askRules: [],
          additionalWorkingDirectories: [],
          shouldAvoidPermissionPrompts: true,
        },
      },
    });
    expect(createSubagentContext(root).getAppState()).toBe(root.getAppState());
  });

  it('returns the same object on every read through a chain until the state changes', () => {
    const root = createRoot();
    const grandchild = createSubagentContext(createSubagentContext(createSubagentContext(root)));
    const first = grandchild.getAppState();
    expect(grandchild.getAppState()).toBe(first);
    root.setAppState((previous) => ({ ...previous, theme: 'dark' }));
    const changed = grandchild.getAppState();
    expect(changed).not.toBe(first);
    expect(changed.theme).toBe('dark');
    expect(changed.toolPermissionContext.shouldAvoidPermissionPrompts).toBe(true);
    expect(grandchild.getAppState()).toBe(changed);
  });

  it('follows later parent state changes', () => {
    const parent = createRoot();
    const child = createSubagentContext(parent);
    parent.setAppState((previous) => ({ ...previous, theme: 'dark' }));
    expect(child.getAppState().theme).toBe('dark');
  });

  it("reads the parent's state unmarked when the abort controller is shared", () => {
    const parent = createRoot();
    const child = createSubagentContext(parent, { shareAbortController: true });
    expect(child.getAppState()).toBe(parent.getAppState());
  });

  it('uses a getAppState override as given', () => {
    const parent = createRoot();
    const custom: AppState = { ...parent.getAppState(), custom: 1 };
    const child = createSubagentContext(parent, { getAppState: () => custom });
    expect(child.getAppState()).toBe(custom);
  });

  it('makes setAppState a no-op by default', () => {
    const parent = createRoot();
    const before = parent.getAppState();
    createSubagentContext(parent).setAppState((previous) => ({ ...previous, theme: 'dark' }));
    expect(parent.getAppState()).toBe(before);
  });

  it("shares the parent's setAppState with shareSetAppState", () => {
    const parent = createRoot();
    const child = createSubagentContext(parent, { shareSetAppState: true });
    child.setAppState((previous) => ({ ...previous, theme: 'dark' }));
    expect(parent.getAppState().theme).toBe('dark');
  });

  it("lets a grandchild's task registration reach the root store", () => {
    const root = createRoot();
    const grandchild = createSubagentContext(createSubagentContext(root));
    grandchild.setAppState((previous) => ({ ...previous, theme: 'dark' }));
    registerTask(grandchild, 't1');
    expect(root.getAppState().tasks.t1?.description).toBe('task t1');
    expect(root.getAppState().theme).toBeUndefined();
  });

  it('reaches the root from three levels down when the root has no task setter', () => {
    const root = createRoot();
    const bareRoot: ToolUseContext = { ...root, setAppStateForTasks: undefined };
    const level3 = createSubagentContext(createSubagentContext(createSubagentContext(bareRoot)));
    registerTask(level3, 't3');
    expect(root.getAppState().tasks.t3?.description).toBe('task t3');
  });

  it('falls back to the parent setAppState for tasks when the parent has no task setter', () => {
    const root = createRoot();
    const parent: ToolUseContext = { ...root, setAppStateForTasks: undefined };
    registerTask(createSubagentContext(parent), 't2');
    expect(root.getAppState().tasks.t2).toBeDefined();
  });
});

describe('createSubagentContext: other fields', () => {
  it('takes options, messages and cwd from the overrides, else from the parent', () => {
    const parent = createRoot();
    const inherited = createSubagentContext(parent);
    expect(inherited.options).toBe(parent.options);
    // The parent's conversation, as a copy the child can add to alone.
    expect(inherited.messages).toEqual(parent.messages);
    expect(inherited.messages).not.toBe(parent.messages);
    inherited.messages.push(createUserMessage({ content: 'only the child has this' }));
    expect(parent.messages).toHaveLength(inherited.messages.length - 1);
    expect(inherited.cwd).toBe('/repo');
    const options = { tools: [], model: 'model-b' };
    const messages = [createUserMessage({ content: 'Find the flaky test.' })];
    const custom = createSubagentContext(parent, { options, messages, cwd: '/repo/.worktrees/w1' });
    expect(custom.options.model).toBe('model-b');
    expect(custom.messages).toBe(messages);
    expect(custom.cwd).toBe('/repo/.worktrees/w1');
  });

  it('gives each child a new agent id unless one is given, and the agent type only from overrides', () => {
    const parent = createRoot();
    parent.agentType = 'general-purpose';
    const first = createSubagentContext(parent);
    const second = createSubagentContext(parent);
    expect(first.agentId).toMatch(/^a[0-9a-f]{16}$/);
    expect(first.agentId).not.toBe(second.agentId);
    expect(first.agentType).toBeUndefined();
    const named = createSubagentContext(parent, { agentId: 'aexplore-1', agentType: 'Explore' });
    expect(named.agentId).toBe('aexplore-1');
    expect(named.agentType).toBe('Explore');
  });

  it('starts a new query chain one level deeper than the parent', () => {
    const root = createRoot();
    const child = createSubagentContext(root);
    const grandchild = createSubagentContext(child);
    expect(child.queryTracking?.depth).toBe(0);
    expect(grandchild.queryTracking?.depth).toBe(1);
    expect(grandchild.queryTracking?.chainId).not.toBe(child.queryTracking?.chainId);
    const deep = createSubagentContext({ ...root, queryTracking: { chainId: 'c', depth: 4 } });
    expect(deep.queryTracking?.depth).toBe(5);
  });

  it('keeps file-reading limits and the event sink', () => {
    const events: unknown[] = [];
    const root = createRootToolUseContext({
      cwd: '/repo',
      tools: [],
      model: 'model-a',
      fileReadingLimits: { maxLines: 200 },
      emit: (event) => events.push(event),
    });
    const child = createSubagentContext(root);
    expect(child.fileReadingLimits).toEqual({ maxLines: 200 });
    expect(child.emit).toBe(root.emit);
  });
});

describe('releaseSubagentContext', () => {
  it('unlinks the child from the parent signal', () => {
    const parent = createRoot();
    const child = createSubagentContext(parent);
    expect(releaseSubagentContext(child)).toBe(true);
    expect(getEventListeners(parent.abortController.signal, 'abort')).toHaveLength(0);
    parent.abortController.abort();
    expect(child.abortController.signal.aborted).toBe(false);
  });

  it('never unlinks a shared or passed-in controller', () => {
    const root = createRoot();
    const middle = createSubagentContext(root);
    const sharing = createSubagentContext(middle, { shareAbortController: true });
    expect(releaseSubagentContext(sharing)).toBe(false);
    const passed = createSubagentContext(middle, { abortController: middle.abortController });
    expect(releaseSubagentContext(passed)).toBe(false);
    root.abortController.abort();
    expect(middle.abortController.signal.aborted).toBe(true);
  });

  it('keeps a parent lean through 100,000 finished children', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const parent = createRoot();
    for (let index = 0; index < 1_000; index++)
      parent.readFileState.set(`/repo/f${index}`, { content: 'x', timestamp: 0 });
    const signal = parent.abortController.signal;
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    for (let index = 0; index < 100_000; index++) {
      const child = createSubagentContext(parent, { agentType: 'worker' });
      child.readFileState.set('/repo/out.txt', { content: `result ${index}`, timestamp: index });
      if (index % 2 === 0) releaseSubagentContext(child);
      else child.abortController.abort('finished');
    }
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    const growth = process.memoryUsage().heapUsed - heapBefore;
    // A retained child would cost well over 1 KB (context, cache copy, controller).
    expect(growth).toBeLessThan(100_000 * 100);
    expect(parent.readFileState.has('/repo/out.txt')).toBe(false);
  });
});
