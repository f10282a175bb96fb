import { createAgentId, createUuid, type AppState, type ToolUseContext } from '@delegate/core';
import { cloneFileStateCache } from './clone-file-state-cache.js';
import {
  createChildAbortController,
  releaseChildAbortController,
} from './create-child-abort-controller.js';
import type { SubagentContextOverrides } from './subagent-context-overrides.js';

// Child controllers created here, by the context they belong to, so that releasing a
// context never touches a controller that was shared or passed in.
const ownedControllers = new WeakMap<ToolUseContext, AbortController>();

function noop(): void {}

/**
 * Derives the context of a sub-agent from its parent's. Isolated by default on three
 * dimensions, each shared only on request:
 * - file reads: a clone of the parent's cache (or of `overrides.readFileState`);
 * - abort: a child controller (parent abort reaches the child, never the reverse);
 * - state: `setAppState` is a no-op, while `setAppStateForTasks` always reaches the root
 *   store.
 */
export function createSubagentContext(
  parent: ToolUseContext,
  overrides: SubagentContextOverrides = {},
): ToolUseContext {
  let abortController: AbortController;
  let ownsAbortController = false;
  if (overrides.abortController !== undefined) {
    abortController = overrides.abortController;
  } else if (overrides.shareAbortController === true) {
    abortController = parent.abortController;
  } else {
    abortController = createChildAbortController(parent.abortController);
    ownsAbortController = true;
  }

  const getAppState =
    overrides.getAppState ??
    (overrides.shareAbortController === true
      ? parent.getAppState
      : avoidPermissionPrompts(parent.getAppState));

  const context: ToolUseContext = {
    options: overrides.options ?? parent.options,
    // A copy: a child that adds to its conversation never adds to its parent's.
    messages: overrides.messages ?? [...parent.messages],
    cwd: overrides.cwd ?? parent.cwd,
    readFileState: cloneFileStateCache(overrides.readFileState ?? parent.readFileState),
    abortController,
    getAppState,
    setAppState: overrides.shareSetAppState === true ? parent.setAppState : noop,
    // Task registration must reach the root even from isolated children, or their
    // background work would be left running with nobody to track or stop it.
    setAppStateForTasks: parent.setAppStateForTasks ?? parent.setAppState,
    agentId: overrides.agentId ?? createAgentId(),
    agentType: overrides.agentType,
    queryTracking: {
      chainId: createUuid(),
      depth: (parent.queryTracking?.depth ?? -1) + 1,
    },
    fileReadingLimits: parent.fileReadingLimits,
    emit: parent.emit,
  };
  if (ownsAbortController) ownedControllers.set(context, abortController);
  return context;
}

/**
 * Ends a sub-agent context's link to its parent's abort signal, so a parent that
 * outlives many children does not keep a listener per child. Only a child controller
 * that `createSubagentContext` made is released; a shared or passed-in controller is
 * left alone. Returns true when a link was removed.
 */
export function releaseSubagentContext(context: ToolUseContext): boolean {
  const controller = ownedControllers.get(context);
  if (controller === undefined) return false;
  ownedControllers.delete(context);
  return releaseChildAbortController(controller);
}

/** Wraps a state getter so the state it returns asks for no permission prompts. */
function avoidPermissionPrompts(getParentState: () => AppState): () => AppState {
  let lastSource: AppState | undefined;
  let lastMarked: AppState | undefined;
  return () => {
    const state = getParentState();
    if (state.toolPermissionContext.shouldAvoidPermissionPrompts === true) return state;
    // The same parent state gives the same marked object, so identity checks still work.
    if (state === lastSource && lastMarked !== undefined) return lastMarked;
    const marked: AppState = {
      ...state,
      toolPermissionContext: { ...state.toolPermissionContext, shouldAvoidPermissionPrompts: true },
    };
    lastSource = state;
    lastMarked = marked;
    return marked;
  };
}
