import { setMaxListeners } from 'node:events';
import { checkMaxListeners } from './check-max-listeners.js';

/** Listener limit given to new child signals unless `maxListeners` says otherwise. */
export const DEFAULT_ABORT_MAX_LISTENERS = 50;

/** Options of {@link createChildAbortController}. */
export type ChildAbortControllerOptions = {
  /** Listener limit of the child's signal before Node warns; default 50, 0 for no limit. */
  maxListeners?: number;
};

/** The bond between one child controller and its parent's signal. */
type Link = {
  /** The parent's signal, held weakly so a child never keeps its parent alive. */
  parent: WeakRef<AbortSignal>;
  /** Listener on the parent's signal; holds the child only through a WeakRef. */
  propagate: (event: Event) => void;
  /** Listener on the child's signal that undoes the link when the child aborts. */
  unlinkOnChildAbort: () => void;
  /** False once the parent listener has been removed. */
  active: boolean;
};

const links = new WeakMap<AbortController, Link>();
const linkedCounts = new WeakMap<AbortSignal, number>();

// A child that is neither aborted nor released but became unreachable is collected
// (the parent's listener holds it weakly); this then removes the listener it left.
const finalizer = new FinalizationRegistry<Link>((link) => unlink(link));

function unlink(link: Link): void {
  if (!link.active) return;
  link.active = false;
  const parent = link.parent.deref();
  if (parent === undefined) return;
  parent.removeEventListener('abort', link.propagate);
  linkedCounts.set(parent, (linkedCounts.get(parent) ?? 1) - 1);
}

/**
 * Returns a controller whose signal aborts when `parent`'s does (with the parent's
 * reason), while aborting the child leaves the parent untouched. The listener the
 * child adds to the parent is removed when the child aborts, when it is released
 * with {@link releaseChildAbortController}, or after an unreleased child has been
 * garbage-collected; the parent holds the child only weakly. A child of an
 * already aborted parent starts aborted.
 */
export function createChildAbortController(
  parent: AbortController,
  options: ChildAbortControllerOptions = {},
): AbortController {
  const maxListeners = checkMaxListeners(
    options.maxListeners ?? DEFAULT_ABORT_MAX_LISTENERS,
    'createChildAbortController: maxListeners',
  );
  const child = new AbortController();
  setMaxListeners(maxListeners, child.signal);
  const parentSignal = parent.signal;
  if (parentSignal.aborted) {
    child.abort(parentSignal.reason);
    return child;
  }

  const childRef = new WeakRef(child);
  const link: Link = {
    parent: new WeakRef(parentSignal),
    propagate: (event: Event) => {
      // `once` already removed this listener; only the bookkeeping is left.
      unlink(link);
      finalizer.unregister(link);
      childRef.deref()?.abort((event.target as AbortSignal).reason);
    },
    unlinkOnChildAbort: () => {
      unlink(link);
      finalizer.unregister(link);
    },
    active: true,
  };
  parentSignal.addEventListener('abort', link.propagate, { once: true });
  child.signal.addEventListener('abort', link.unlinkOnChildAbort, { once: true });
  linkedCounts.set(parentSignal, (linkedCounts.get(parentSignal) ?? 0) + 1);
  links.set(child, link);
  finalizer.register(child, link, link);
  return child;
}

/**
 * Ends a child's bond with its parent without aborting it: the parent's listener is
 * removed, so a later parent abort no longer reaches the child. Call it when the
 * child's work is over. Returns true when the child was still linked.
 */
export function releaseChildAbortController(child: AbortController): boolean {
  const link = links.get(child);
  if (link === undefined) return false;
  links.delete(child);
  const wasActive = link.active;
  unlink(link);
  finalizer.unregister(link);
  child.signal.removeEventListener('abort', link.unlinkOnChildAbort);
  return wasActive;
}

/** Diagnostic: how many child controllers currently listen on `parent`'s signal. */
export function countLinkedChildren(parent: AbortController): number {
  return linkedCounts.get(parent.signal) ?? 0;
}
