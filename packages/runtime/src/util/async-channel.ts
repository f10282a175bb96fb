/** An unbounded queue that one consumer reads with `for await`; `close` ends the iteration. */
export class AsyncChannel<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiter: (() => void) | undefined;
  private closed = false;

  /** Adds an item; ignored after `close`. */
  push(item: T): void {
    if (this.closed) return;
    this.items.push(item);
    this.wake();
  }

  /** Ends the iteration once the queued items are read. */
  close(): void {
    this.closed = true;
    this.wake();
  }

  /** True once `close` was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.items.length > 0) {
        yield this.items.shift() as T;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
    }
  }
}
