/**
 * A least-recently-used cache bounded by a total weight (bytes, entries…)
 * and, optionally, by how long an entry may go unused. Map iteration order
 * is insertion order, so re-inserting on access keeps the oldest entry first.
 */
export class LruCache<K, V> {
  private readonly entries = new Map<K, { value: V; weight: number; usedAt: number }>();
  private total = 0;

  /**
   * @param maxWeight total weight kept before the oldest entries are evicted
   * @param weigh weight of one value (defaults to 1, making it an entry count)
   * @param maxIdleMs entries unused for longer are dropped (checked on each access): a cache sized
   *   for one large turn then does not fill up over hundreds of small ones
   */
  constructor(
    private readonly maxWeight: number,
    private readonly weigh: (value: V) => number = () => 1,
    private readonly maxIdleMs = Infinity,
  ) {}

  get(key: K): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    hit.usedAt = Date.now();
    this.entries.set(key, hit);
    this.evict();
    return hit.value;
  }

  set(key: K, value: V): void {
    const weight = this.weigh(value);
    if (weight > this.maxWeight) return;
    const old = this.entries.get(key);
    if (old) {
      this.total -= old.weight;
      this.entries.delete(key);
    }
    this.entries.set(key, { value, weight, usedAt: Date.now() });
    this.total += weight;
    this.evict();
  }

  /**
   * Drops every entry not used since `time` (epoch ms). A cache whose idle
   * limit is measured in seconds would otherwise hold as many turns' reads as
   * fit in that time, however quickly turns follow one another.
   */
  dropUnusedSince(time: number): void {
    for (const [k, v] of this.entries) {
      if (v.usedAt >= time) break;
      this.entries.delete(k);
      this.total -= v.weight;
    }
  }

  /** Number of entries held. */
  get size(): number {
    return this.entries.size;
  }

  private evict(): void {
    const staleBefore = this.maxIdleMs === Infinity ? -Infinity : Date.now() - this.maxIdleMs;
    for (const [k, v] of this.entries) {
      if (this.total <= this.maxWeight && v.usedAt >= staleBefore) break;
      this.entries.delete(k);
      this.total -= v.weight;
    }
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }
}

/**
 * The bytes in a buffer of their own when they are a small view of a larger
 * one (a slab of Node's buffer pool, a read buffer): a cache weighing them by
 * their length would otherwise keep the whole larger buffer alive.
 */
export function ownBytes(bytes: Uint8Array): Uint8Array {
  return bytes.buffer.byteLength > bytes.byteLength + 64 ? Uint8Array.prototype.slice.call(bytes) : bytes;
}
