import { getMaxListeners } from 'node:events';
import { DelegateError, type ToolUseContext } from '@delegate/core';
import {
  createChildAbortController,
  DEFAULT_ABORT_MAX_LISTENERS,
  releaseChildAbortController,
} from '@delegate/context-isolation';

/** What one query loop hands its tools, and how it stops them. */
export type LoopContext = {
  /** The caller's context with an abort controller of the loop's own, linked to the caller's. */
  context: ToolUseContext;
  /** Stops the tool calls still running (and the foreground agents they started). */
  interrupt: () => void;
  /** Unlinks the loop's controller from the caller's once the loop is over. */
  release: () => void;
};

/** Reason the tool calls of a loop whose consumer stopped reading are aborted with. */
export const LOOP_STOPPED_REASON =
  'The query loop was stopped by its consumer while tool calls ran: they were interrupted.';

/**
 * The context of one `query()` loop: the caller's, but with a controller that stops with the
 * caller's and also on its own, when the loop's consumer stops reading while tool calls run
 * (a `break` out of the loop). The caller's controller is never aborted by that, and work
 * that outlives a call (a background shell) listens to `lifetimeSignal`, the caller's signal.
 */
export function createLoopContext(origin: ToolUseContext): LoopContext {
  const originSignal = origin.abortController.signal;
  const limit = getMaxListeners(originSignal);
  const controller = createChildAbortController(origin.abortController, {
    maxListeners: limit === 0 ? 0 : Math.max(limit, DEFAULT_ABORT_MAX_LISTENERS),
  });
  return {
    context: {
      ...origin,
      abortController: controller,
      lifetimeSignal: origin.lifetimeSignal ?? originSignal,
    },
    interrupt: () => {
      if (!controller.signal.aborted)
        controller.abort(new DelegateError('ABORTED', LOOP_STOPPED_REASON));
    },
    release: () => {
      releaseChildAbortController(controller);
    },
  };
}
