/**
 * A least-recently-used cache on a Map, whose iteration order is insertion order: a hit is
 * re-inserted to become the newest, and the oldest key is the first one iterated.
 */
export class LruCache<Key, Value> {
  private readonly entries = new Map<Key, Value>();

  /** `maxSize` 0 keeps nothing. */
  constructor(readonly maxSize: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: Key): Value | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: Key, value: Value): void {
    if (this.maxSize === 0) return;
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.maxSize) this.entries.delete(this.entries.keys().next().value as Key);
  }

  clear(): void {
    this.entries.clear();
  }
}
