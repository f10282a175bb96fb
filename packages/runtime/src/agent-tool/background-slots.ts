import { DelegateError } from '@delegate/core';
import type { AgentRuntime } from '../session/agent-runtime.js';

/** A reserved place among the background agents; `release` is safe to call more than once. */
export type BackgroundSlot = { release: () => void };

/**
 * Reserves a background place for a spawn being set up, or throws `LIMIT_EXCEEDED` at
 * `maxBackgroundAgents`. Several Agent calls of one message run in parallel, so spawns
 * still being set up count too. A foreground spawn reserves nothing.
 */
export function reserveBackgroundSlot(
  runtime: AgentRuntime,
  isBackground: boolean,
): BackgroundSlot {
  if (!isBackground) return { release: () => undefined };
  const limit = runtime.options.maxBackgroundAgents;
  if (runtime.tasks.runningBackgroundCount + runtime.pendingBackgroundSpawns >= limit) {
    throw new DelegateError(
      'LIMIT_EXCEEDED',
      `${limit} background agents are already running, the most allowed at once. Wait for a <task-notification>, or run this agent in the foreground.`,
    );
  }
  runtime.pendingBackgroundSpawns++;
  let held = true;
  return {
    release: () => {
      if (held) runtime.pendingBackgroundSpawns--;
      held = false;
    },
  };
}
