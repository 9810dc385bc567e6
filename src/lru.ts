// The one in-memory cache shape the service uses: a map that keeps at most `capacity` of weight
// (one per entry unless `weigh` says otherwise), dropping the least recently used entries first.
// A Map iterates in insertion order, so re-inserting on every use keeps the least recently used
// entry first.

export class LruMap<K, V> {
  private readonly entries = new Map<K, V>();
  private weight = 0;

  constructor(
    private readonly capacity: number,
    private readonly weigh: (value: V) => number = () => 1,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** The value, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    if (!this.entries.has(key)) return undefined;
    const value = this.entries.get(key)!;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** Keeps the value as the most recently used, unless it alone outweighs the capacity. */
  set(key: K, value: V): void {
    this.delete(key);
    const weight = this.weigh(value);
    if (weight > this.capacity) return;
    this.entries.set(key, value);
    this.weight += weight;
    for (const [oldKey, old] of this.entries) {
      if (this.weight <= this.capacity) break;
      this.entries.delete(oldKey);
      this.weight -= this.weigh(old);
    }
  }

  delete(key: K): boolean {
    if (!this.entries.has(key)) return false;
    this.weight -= this.weigh(this.entries.get(key)!);
    return this.entries.delete(key);
  }
}
