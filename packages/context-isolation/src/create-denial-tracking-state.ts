import type { DenialTrackingState } from '@delegate/core';

/** Returns permission-denial counters at zero. */
export function createDenialTrackingState(): DenialTrackingState {
  return { consecutiveDenials: 0, totalDenials: 0 };
}
