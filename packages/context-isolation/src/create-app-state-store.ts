import { DelegateError, type AppState, type SetAppState } from '@delegate/core';

/** An in-memory application-state store. */
export type AppStateStore = {
  /** Returns the current state. */
  getState: () => AppState;
  /** Replaces the state with `update(previous)` and tells the subscribers when it changed. */
  setState: SetAppState;
  /** Calls `listener` after each change; returns a function that unsubscribes. */
  subscribe: (listener: (state: AppState, previous: AppState) => void) => () => void;
};

/** Returns the state of a fresh session: `default` permission mode, no rules, no tasks, no MCP servers. */
export function createDefaultAppState(): AppState {
  return {
    toolPermissionContext: {
      mode: 'default',
      allowRules: [],
      denyRules: [],
      askRules: [],
      additionalWorkingDirectories: [],
    },
    tasks: {},
    mcp: { clients: [], tools: [] },
  };
}

/** Returns an in-memory store holding `initial` laid over {@link createDefaultAppState}. */
export function createAppStateStore(initial: Partial<AppState> = {}): AppStateStore {
  let state: AppState = { ...createDefaultAppState(), ...initial };
  const listeners = new Set<(state: AppState, previous: AppState) => void>();
  return {
    getState: () => state,
    setState: (update) => {
      const previous = state;
      const next = update(previous);
      if (typeof next !== 'object' || next === null) {
        throw new DelegateError(
          'INVALID_ARGUMENT',
          `setAppState: the update returned ${next === null ? 'null' : typeof next} instead of an AppState. Return a new state object, for example \`(previous) => ({ ...previous, tasks })\`.`,
        );
      }
      if (next === previous) return;
      state = next;
      for (const listener of [...listeners]) listener(next, previous);
    },
    subscribe: (listener) => {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}
