/**
 * Collects a stream's bytes up to a cap, keeping the first and the last half when it
 * overflows, and counting what was cut from the middle.
 */
export class HeadTailBuffer {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  /** Every byte written, kept or not. */
  totalBytes = 0;

  constructor(maxBytes: number) {
    this.headLimit = Math.ceil(maxBytes / 2);
    this.tailLimit = Math.floor(maxBytes / 2);
  }

  /** Appends a chunk. */
  write(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.headLimit) {
      const taken = rest.subarray(0, this.headLimit - this.headBytes);
      this.head.push(taken);
      this.headBytes += taken.length;
      rest = rest.subarray(taken.length);
    }
    if (rest.length === 0 || this.tailLimit === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    while (this.tailBytes - (this.tail[0]?.length ?? 0) >= this.tailLimit && this.tail.length > 1) {
      this.tailBytes -= this.tail.shift()?.length ?? 0;
    }
  }

  /** Counts `byteCount` bytes that follow what was written as seen but not kept (they fall in the cut middle). */
  skip(byteCount: number): void {
    this.totalBytes += byteCount;
    this.tail = [];
    this.tailBytes = 0;
  }

  /** Number of bytes dropped from the middle. */
  get cutBytes(): number {
    return Math.max(0, this.totalBytes - this.headBytes - Math.min(this.tailBytes, this.tailLimit));
  }

  /** The kept text, with a marker saying how much was cut. */
  toString(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    let tail = Buffer.concat(this.tail);
    if (tail.length > this.tailLimit) tail = tail.subarray(tail.length - this.tailLimit);
    const cut = this.cutBytes;
    if (cut === 0) return head + tail.toString('utf8');
    return `${head}\n\n[… ${cut} bytes of output cut from the middle …]\n\n${tail.toString('utf8')}`;
  }
}
