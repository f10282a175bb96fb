import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { AbortHub } from './abort-hub.js';

describe('AbortHub', () => {
  it('links a thousand children through one listener, and the parent abort reaches them all', () => {
    const parent = new AbortController();
    const hub = new AbortHub(parent.signal);
    const children = Array.from({ length: 1_000 }, () => hub.createChild());
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    expect(hub.size).toBe(1_000);
    parent.abort('session over');
    expect(children.every((child) => child.signal.reason === 'session over')).toBe(true);
    expect(hub.size).toBe(0);
  });

  it("never lets a child's abort reach the parent, and unlinks aborted and released children", () => {
    const parent = new AbortController();
    const hub = new AbortHub(parent.signal);
    const stopped = hub.createChild();
    const released = hub.createChild();
    const live = hub.createChild();
    stopped.abort();
    expect(parent.signal.aborted).toBe(false);
    expect(hub.release(released)).toBe(true);
    expect(hub.release(released)).toBe(false);
    expect(hub.size).toBe(1);
    parent.abort();
    expect(released.signal.aborted).toBe(false);
    expect(live.signal.aborted).toBe(true);
  });

  it('starts a child of an aborted parent aborted', () => {
    const parent = new AbortController();
    parent.abort('already');
    expect(new AbortHub(parent.signal).createChild().signal.reason).toBe('already');
  });
});
