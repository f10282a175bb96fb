import { describe, it, expect } from 'vitest';
import { getEventListeners, getMaxListeners, setMaxListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  countLinkedChildren,
  createChildAbortController,
  releaseChildAbortController,
} from './create-child-abort-controller.js';

function parentListeners(parent: AbortController): number {
  return getEventListeners(parent.signal, 'abort').length;
}

function collectGarbage(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

describe('createChildAbortController', () => {
  it("aborts the child with the parent's reason when the parent aborts", () => {
    const parent = new AbortController();
    const child = createChildAbortController(parent);
    const reason = new Error('user pressed Esc');
    parent.abort(reason);
    expect(child.signal.aborted).toBe(true);
    expect(child.signal.reason).toBe(reason);
  });

  it('reaches grandchildren through a chain of children', () => {
    const root = new AbortController();
    const grandchild = createChildAbortController(createChildAbortController(root));
    root.abort('stop');
    expect(grandchild.signal.reason).toBe('stop');
  });

  it('never aborts the parent when the child aborts', () => {
    const parent = new AbortController();
    const child = createChildAbortController(parent);
    child.abort();
    expect(child.signal.aborted).toBe(true);
    expect(parent.signal.aborted).toBe(false);
  });

  it('starts aborted, with the same reason, when the parent already is', () => {
    const parent = new AbortController();
    parent.abort('too late');
    const child = createChildAbortController(parent);
    expect(child.signal.aborted).toBe(true);
    expect(child.signal.reason).toBe('too late');
    expect(parentListeners(parent)).toBe(0);
  });

  it('removes its listener from the parent when the child aborts', () => {
    const parent = new AbortController();
    const child = createChildAbortController(parent);
    expect(parentListeners(parent)).toBe(1);
    expect(countLinkedChildren(parent)).toBe(1);
    child.abort();
    expect(parentListeners(parent)).toBe(0);
    expect(countLinkedChildren(parent)).toBe(0);
  });

  it('on release removes its listener and no longer follows the parent', () => {
    const parent = new AbortController();
    const child = createChildAbortController(parent);
    expect(releaseChildAbortController(child)).toBe(true);
    expect(parentListeners(parent)).toBe(0);
    parent.abort();
    expect(child.signal.aborted).toBe(false);
    expect(releaseChildAbortController(child)).toBe(false);
  });

  it('release is harmless for controllers it did not create or already aborted', () => {
    const parent = new AbortController();
    expect(releaseChildAbortController(parent)).toBe(false);
    const child = createChildAbortController(parent);
    parent.abort();
    expect(releaseChildAbortController(child)).toBe(false);
    expect(parent.signal.aborted).toBe(true);
  });

  it("starts aborted when created while the parent's abort is being dispatched", () => {
    const parent = new AbortController();
    const reason = new Error('user pressed Escape');
    let lateChild: AbortController | undefined;
    parent.signal.addEventListener('abort', () => {
      lateChild = createChildAbortController(parent);
    });
    parent.abort(reason);
    expect(lateChild?.signal.aborted).toBe(true);
    expect(lateChild?.signal.reason).toBe(reason);
    expect(countLinkedChildren(parent)).toBe(0);
  });

  it("keeps a child's own abort reason when the parent aborts later", () => {
    const parent = new AbortController();
    const child = createChildAbortController(parent);
    const own = new Error('child timed out');
    child.abort(own);
    parent.abort(new Error('parent stopped'));
    expect(child.signal.reason).toBe(own);
  });

  it('reports a link only on the first of two releases', () => {
    const parent = new AbortController();
    const child = createChildAbortController(parent);
    expect(releaseChildAbortController(child)).toBe(true);
    expect(releaseChildAbortController(child)).toBe(false);
    expect(countLinkedChildren(parent)).toBe(0);
    parent.abort();
    expect(child.signal.aborted).toBe(false);
  });

  it("sets the child's listener limit (default 50)", () => {
    const parent = new AbortController();
    expect(getMaxListeners(createChildAbortController(parent).signal)).toBe(50);
    expect(getMaxListeners(createChildAbortController(parent, { maxListeners: 500 }).signal)).toBe(
      500,
    );
    expect(() => createChildAbortController(parent, { maxListeners: -1 })).toThrow(/maxListeners/);
  });

  it('leaves no listener on a long-lived parent after 100,000 released or aborted children', () => {
    const parent = new AbortController();
    for (let index = 0; index < 50_000; index++) {
      releaseChildAbortController(createChildAbortController(parent));
    }
    for (let index = 0; index < 50_000; index++) {
      createChildAbortController(parent).abort();
    }
    expect(parentListeners(parent)).toBe(0);
    expect(countLinkedChildren(parent)).toBe(0);
  });

  it('still aborts every live child after many have come and gone', () => {
    const parent = new AbortController();
    setMaxListeners(0, parent.signal);
    const live: AbortController[] = [];
    const released: AbortController[] = [];
    for (let index = 0; index < 20_000; index++) {
      const child = createChildAbortController(parent);
      if (index % 4 === 0) live.push(child);
      else if (index % 4 === 1) {
        releaseChildAbortController(child);
        released.push(child);
      } else child.abort('finished');
    }
    expect(parentListeners(parent)).toBe(live.length);
    parent.abort('shutdown');
    expect(live.every((child) => child.signal.reason === 'shutdown')).toBe(true);
    expect(released.some((child) => child.signal.aborted)).toBe(false);
    expect(parentListeners(parent)).toBe(0);
    expect(countLinkedChildren(parent)).toBe(0);
  });

  it('lets an unreleased child that nobody references be garbage-collected', async () => {
    const gc = collectGarbage();
    const parent = new AbortController();
    const reference = (() => new WeakRef(createChildAbortController(parent)))();
    // A WeakRef target stays alive until the current job ends; wait for the next one.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(reference.deref()).toBeUndefined();
    // The finalizer then takes the collected child's listener off the parent.
    for (let turn = 0; turn < 20 && parentListeners(parent) > 0; turn++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(parentListeners(parent)).toBe(0);
    expect(countLinkedChildren(parent)).toBe(0);
    expect(() => parent.abort()).not.toThrow();
  });
});
