import { describe, it, expect } from 'vitest';
import { DelegateError, type AppState } from '@delegate/core';
import { createAppStateStore, createDefaultAppState } from './create-app-state-store.js';

describe('createAppStateStore', () => {
  it('starts from the defaults with the given fields laid over them', () => {
    const store = createAppStateStore({ theme: 'dark' });
    expect(store.getState()).toEqual({ ...createDefaultAppState(), theme: 'dark' });
    expect(store.getState().toolPermissionContext.mode).toBe('default');
  });

  it('replaces the state through updates and tells subscribers', () => {
    const store = createAppStateStore();
    const seen: Array<[unknown, unknown]> = [];
    const unsubscribe = store.subscribe((state, previous) =>
      seen.push([state.count, previous.count]),
    );
    store.setState((previous) => ({ ...previous, count: 1 }));
    store.setState((previous) => previous);
    unsubscribe();
    store.setState((previous) => ({ ...previous, count: 2 }));
    expect(seen).toEqual([[1, undefined]]);
    expect(store.getState().count).toBe(2);
  });

  it('refuses an update that returns no state, keeping the old one', () => {
    const store = createAppStateStore();
    const before = store.getState();
    let thrown: unknown;
    try {
      store.setState(() => undefined as unknown as AppState);
    } catch (error) {
      thrown = error;
    }
    expect(DelegateError.hasCode(thrown, 'INVALID_ARGUMENT')).toBe(true);
    expect(store.getState()).toBe(before);
  });
});
