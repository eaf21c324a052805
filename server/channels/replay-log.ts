/**
 * Fixed-capacity ring buffer of the most recent envelopes, oldest first.
 * Appending is O(1) and allocation-free once the buffer is full.
 */
export class ReplayLog<T extends { serverSeq: number }> {
  private readonly items: (T | undefined)[];
  private start = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) {
      throw new RangeError(`replay log capacity must be a positive integer, got ${String(capacity)}`);
    }
    this.items = new Array<T | undefined>(capacity);
  }

  /** Number of envelopes currently held. */
  get length(): number {
    return this.size;
  }

  /** Appends one envelope, evicting the oldest when full. */
  append(item: T): void {
    if (this.size < this.capacity) {
      this.items[(this.start + this.size) % this.capacity] = item;
      this.size += 1;
      return;
    }
    this.items[this.start] = item;
    this.start = (this.start + 1) % this.capacity;
  }

  /** `serverSeq` of the oldest envelope held, or undefined when empty. */
  get oldestSeq(): number | undefined {
    return this.size === 0 ? undefined : this.items[this.start]?.serverSeq;
  }

  /** Envelopes with `serverSeq > seq`, in order. */
  since(seq: number): T[] {
    const out: T[] = [];
    // Sequence numbers are increasing, so a binary search finds the start.
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).serverSeq <= seq) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.size; i++) out.push(this.at(i));
    return out;
  }

  private at(index: number): T {
    return this.items[(this.start + index) % this.capacity] as T;
  }
}
