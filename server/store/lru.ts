/**
 * A least-recently-used cache bounded by a total weight (bytes, entries…).
 * Map iteration order is insertion order, so re-inserting on access keeps the
 * oldest entry first.
 */
export class LruCache<K, V> {
  private readonly entries = new Map<K, { value: V; weight: number }>();
  private total = 0;

  /**
   * @param maxWeight total weight kept before the oldest entries are evicted
   * @param weigh weight of one value (defaults to 1, making it an entry count)
   */
  constructor(
    private readonly maxWeight: number,
    private readonly weigh: (value: V) => number = () => 1,
  ) {}

  get(key: K): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    this.entries.set(key, hit);
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
    this.entries.set(key, { value, weight });
    this.total += weight;
    for (const [k, v] of this.entries) {
      if (this.total <= this.maxWeight) break;
      this.entries.delete(k);
      this.total -= v.weight;
    }
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }
}
