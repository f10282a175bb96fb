import type { StoredEvent } from '../store/run-store.js';

const frames = new WeakMap<StoredEvent, string>();

/**
 * The SSE frame of an event (`id:`, `event:`, `data:`), built once per event object: a
 * live event goes to every subscriber of its run as the same object, so twenty
 * subscribers share one string instead of serializing twenty times.
 */
export function sseFrame(event: StoredEvent): string {
  let frame = frames.get(event);
  if (frame === undefined) {
    // JSON.stringify never emits a raw newline, so the data fits on one `data:` line.
    frame = `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
    frames.set(event, frame);
  }
  return frame;
}
