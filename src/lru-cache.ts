/**
 * A least-recently-used cache on a Map, whose iteration order is insertion order: a hit is
 * re-inserted to become the newest, and the oldest key is the first one iterated.
 *
 * Bounded by its entries' total weight: each weighs 1 unless `weigh` says otherwise (say, the
 * characters of a cached text). An entry heavier than the whole bound is not kept.
 */
export class LruCache<Key, Value> {
  private readonly entries = new Map<Key, { value: Value; weight: number }>();
  private total = 0;

  /** `maxSize`: the most total weight kept (0 keeps nothing). */
  constructor(
    readonly maxSize: number,
    private readonly weigh: (key: Key, value: Value) => number = () => 1,
  ) {}

  /** How many entries are kept. */
  get size(): number {
    return this.entries.size;
  }

  /** Their total weight. */
  get weight(): number {
    return this.total;
  }

  /** Whether the key is kept, without making it the newest. */
  has(key: Key): boolean {
    return this.entries.has(key);
  }

  get(key: Key): Value | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: Key, value: Value): void {
    this.remove(key);
    const weight = this.weigh(key, value);
    if (weight > this.maxSize) return;
    this.entries.set(key, { value, weight });
    this.total += weight;
    while (this.total > this.maxSize) this.remove(this.entries.keys().next().value as Key);
  }

  /** Drops the key; false when it was not kept. */
  delete(key: Key): boolean {
    if (!this.entries.has(key)) return false;
    this.remove(key);
    return true;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }

  private remove(key: Key): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.total -= entry.weight;
  }
}
