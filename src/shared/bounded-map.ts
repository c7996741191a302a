// A Map that keeps at most `max` entries, dropping the least recently used. Per-namespace state
// (a writer's rule contexts, a pool thread's read ports and their caches) lives in these, so
// 1,000 tenants cost what `max` of them do, not what 1,000 do.
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly max: number, private readonly onEvict?: (value: V, key: K) => void) {
    if (!(max >= 1)) throw new RangeError('BoundedMap needs room for at least one entry');
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value, now the most recently used. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    // Map keeps insertion order: re-inserting moves the key to the young end (unless it is
    // there already: hot paths ask for the same key many times in a row).
    if (key !== this.youngest) {
      this.entries.delete(key);
      this.entries.set(key, value);
      this.youngest = key;
    }
    return value;
  }

  /** The key last inserted or moved to the young end. */
  private youngest: K | undefined;

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    this.youngest = key;
    while (this.entries.size > this.max) {
      const [oldest, evicted] = this.entries.entries().next().value as [K, V];
      this.entries.delete(oldest);
      this.onEvict?.(evicted, oldest);
    }
  }

  /** The value for `key`, made by `make` (and kept) when absent. */
  getOrCreate(key: K, make: () => V): V {
    const found = this.get(key);
    if (found !== undefined) return found;
    const made = make();
    this.set(key, made);
    return made;
  }

  values(): IterableIterator<V> {
    return this.entries.values();
  }

  delete(key: K): void {
    this.entries.delete(key);
    if (key === this.youngest) this.youngest = undefined;
  }

  clear(): void {
    this.entries.clear();
    this.youngest = undefined;
  }
}
