/** Counts open event streams so a shutdown can let them end cleanly before closing sockets. */
export class OpenStreams {
  private count = 0;
  private waiters: (() => void)[] = [];

  /** Marks a stream open; call the returned function when it ends. */
  open(): () => void {
    this.count += 1;
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      this.count -= 1;
      if (this.count === 0) for (const waiter of this.waiters.splice(0)) waiter();
    };
  }

  /** Number of open streams. */
  get size(): number {
    return this.count;
  }

  /** Resolves when every stream has ended, or after `timeoutMs`. */
  async drained(timeoutMs: number): Promise<void> {
    if (this.count === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
