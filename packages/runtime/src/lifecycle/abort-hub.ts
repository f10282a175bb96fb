import { setMaxListeners } from 'node:events';
import { DEFAULT_ABORT_MAX_LISTENERS } from '@delegate/context-isolation';

/**
 * Children of one long-lived signal (the session's) that hang off it through a single
 * listener: a thousand background agents add one listener to the session's signal, not a
 * thousand (no `MaxListenersExceededWarning`, and no O(n) listener scan per spawn). The
 * parent's abort reaches every live child; a child's abort never reaches the parent.
 */
export class AbortHub {
  private readonly children = new Set<AbortController>();
  private readonly parent: AbortSignal;

  /** Links the hub to `parent` with one listener. */
  constructor(parent: AbortSignal) {
    this.parent = parent;
    parent.addEventListener(
      'abort',
      () => {
        const live = [...this.children];
        this.children.clear();
        for (const child of live) child.abort(parent.reason);
      },
      { once: true },
    );
  }

  /** A new controller that aborts with the parent; it leaves the hub when it aborts or is released. */
  createChild(): AbortController {
    const child = new AbortController();
    setMaxListeners(DEFAULT_ABORT_MAX_LISTENERS, child.signal);
    if (this.parent.aborted) {
      child.abort(this.parent.reason);
      return child;
    }
    this.children.add(child);
    child.signal.addEventListener('abort', () => this.children.delete(child), { once: true });
    return child;
  }

  /**
   * Links a controller made elsewhere (a foreground agent moved to the background), as
   * `createChild` links its own; one of an aborted hub is aborted at once.
   */
  adopt(child: AbortController): void {
    if (child.signal.aborted || this.children.has(child)) return;
    if (this.parent.aborted) {
      child.abort(this.parent.reason);
      return;
    }
    this.children.add(child);
    child.signal.addEventListener('abort', () => this.children.delete(child), { once: true });
  }

  /** Unlinks `child` (a later parent abort no longer reaches it); false when it was not linked. */
  release(child: AbortController): boolean {
    return this.children.delete(child);
  }

  /** Number of live linked children. */
  get size(): number {
    return this.children.size;
  }
}
