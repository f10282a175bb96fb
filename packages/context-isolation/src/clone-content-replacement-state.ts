import type { ContentReplacementState } from '@delegate/core';

/**
 * Returns a copy of tool-result replacement decisions with new collections, so a
 * fork decides exactly as its parent did for the ids the parent saw, while ids the
 * child adds stay out of the parent's state.
 */
export function cloneContentReplacementState(
  state: ContentReplacementState,
): ContentReplacementState {
  return { seenIds: new Set(state.seenIds), replacements: new Map(state.replacements) };
}
