/** A small Map-based LRU with an explicit bound and an eviction hook. */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();
  constructor(
    readonly capacity: number,
    private readonly onEvict?: (value: V, key: K) => void,
  ) {
    if (!(capacity >= 1)) throw new Error(`LRU capacity must be ≥ 1, got ${capacity}`);
  }

  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: K, value: V): void {
    if (this.map.has(key)) this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.capacity) {
      const oldest = this.map.keys().next().value as K;
      const v = this.map.get(oldest) as V;
      this.map.delete(oldest);
      this.onEvict?.(v, oldest);
    }
  }

  delete(key: K): void {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.onEvict?.(v, key);
    }
  }

  get size(): number {
    return this.map.size;
  }

  /** Remove and return every value WITHOUT the eviction hook (owner takes over). */
  drain(): V[] {
    const out = [...this.map.values()];
    this.map.clear();
    return out;
  }

  clear(): void {
    for (const [k, v] of this.map) this.onEvict?.(v, k);
    this.map.clear();
  }
}

/**
 * Memoise concurrent async loads per key so two requests for the same rollout do one
 * join (async interleaving would otherwise duplicate the work).
 */
export class Inflight<K, V> {
  private readonly pending = new Map<K, Promise<V>>();
  run(key: K, load: () => Promise<V>): Promise<V> {
    const p = this.pending.get(key);
    if (p) return p;
    const q = load().finally(() => this.pending.delete(key));
    this.pending.set(key, q);
    return q;
  }
}

/**
 * An async value computed at most once every `ms` per key (at most `capacity` keys kept):
 * the file checks (listings, stats, real paths) a reader repeats on every request. Within
 * `ms` a caller gets the promise of the last check; a check that fails is not kept.
 * `ms` ≤ 0 checks every time.
 */
export class Recent<K, V> {
  private readonly memo: Lru<K, { at: number; value: Promise<V> }>;
  constructor(
    readonly ms: number,
    capacity: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.memo = new Lru(capacity);
  }

  get(key: K, check: () => Promise<V>): Promise<V> {
    if (!(this.ms > 0)) return check();
    const t = this.now();
    const hit = this.memo.get(key);
    if (hit && t - hit.at < this.ms) return hit.value;
    const entry = { at: t, value: check() };
    this.memo.set(key, entry);
    entry.value.catch(() => {
      if (this.memo.get(key) === entry) this.memo.delete(key);
    });
    return entry.value;
  }
}
