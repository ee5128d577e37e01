/**
 * One request for many keys: the Metrics cards ask for their own series one key at a
 * time (each card is its own react-query entry, so a poll repaints only its chart), and
 * this batcher sends the keys asked for in the same tick as one `GET /api/metrics?keys=…`
 * (docs/api.md, "GET /api/metrics": comma-separated keys, ≤ `LIMITS.metric_keys` per
 * request) — the first screen of a 200-metric page is one request instead of one per
 * card, each of which queued behind the server's heavy-query gate (issue #15).
 *
 * A batch that fails is retried key by key, so one bad key (e.g. an unknown `dump/`
 * column, a 400) fails only its own card, with its own message, as before.
 */

export interface KeyBatcherOptions<T> {
  /** fetch these keys (≤ maxKeys) in one request; the answer is keyed by key */
  fetchMany: (keys: readonly string[]) => Promise<Record<string, T>>;
  maxKeys: number;
  /** the keys of one request stay under this many URL-encoded characters (proxies cut URLs at 8 KB); default 4000 */
  maxChars?: number;
  /**
   * Whether a failed batch is asked again key by key: yes for an error one bad key can
   * cause (a 400 naming it), no for one every key would get again (401, 403, an unknown
   * run's 404). Default: always.
   */
  splitOn?: (err: unknown) => boolean;
  /** defer the flush to the end of this tick (default: setTimeout 0) */
  schedule?: (flush: () => void) => void;
}

interface Waiter<T> {
  resolve: (v: T | undefined) => void;
  reject: (e: unknown) => void;
}

export interface KeyBatcher<T> {
  load(key: string): Promise<T | undefined>;
  /**
   * Request exactly these keys now, in this order, as one request (e.g. the URL the server
   * render preloaded); `load` of any of them joins it while it is in flight.
   */
  prime(keys: readonly string[]): void;
}

export function createKeyBatcher<T>(opts: KeyBatcherOptions<T>): KeyBatcher<T> {
  const schedule = opts.schedule ?? ((f: () => void) => void setTimeout(f, 0));
  let pending = new Map<string, Waiter<T>[]>();
  let armed = false;
  /** keys of requests on their way: a second ask joins instead of asking again */
  const inflight = new Map<string, Promise<T | undefined>>();
  /** keys `prime` has asked for */
  const primed = new Set<string>();
  /** primed answers not yet taken: a card that asks after the answer came takes it (once) */
  const primedAnswers = new Map<string, T | undefined>();
  /** primed keys on their way that no `load` has joined yet */
  const untaken = new Set<string>();

  const track = (chunk: Map<string, Waiter<T>[]>) => {
    for (const [k, ws] of chunk) {
      const p = new Promise<T | undefined>((resolve, reject) => ws.push({ resolve, reject }));
      p.catch(() => undefined);
      inflight.set(k, p);
      void p.then(
        () => inflight.get(k) === p && inflight.delete(k),
        () => inflight.get(k) === p && inflight.delete(k),
      );
    }
  };

  const settle = (waiters: Map<string, Waiter<T>[]>, answer: Record<string, T>) => {
    for (const [k, ws] of waiters) for (const w of ws) w.resolve(answer[k]);
  };

  const run = async (chunk: Map<string, Waiter<T>[]>) => {
    const keys = [...chunk.keys()];
    try {
      settle(chunk, await opts.fetchMany(keys));
    } catch (err) {
      if (keys.length === 1 || (opts.splitOn && !opts.splitOn(err))) {
        for (const k of keys) for (const w of chunk.get(k)!) w.reject(err);
        return;
      }
      // one key at a time: only the keys that fail on their own fail
      await Promise.all(
        keys.map(async (k) => {
          const ws = chunk.get(k)!;
          try {
            const one = await opts.fetchMany([k]);
            for (const w of ws) w.resolve(one[k]);
          } catch (e) {
            for (const w of ws) w.reject(e);
          }
        }),
      );
    }
  };

  const send = (chunk: Map<string, Waiter<T>[]>) => {
    track(chunk);
    void run(chunk);
  };

  const flush = () => {
    armed = false;
    const all = pending;
    pending = new Map();
    const maxChars = opts.maxChars ?? 4000;
    let chunk = new Map<string, Waiter<T>[]>();
    let chars = 0;
    for (const [k, ws] of all) {
      const len = encodeURIComponent(k).length + 3; // "%2C" between keys
      if (chunk.size > 0 && (chunk.size >= opts.maxKeys || chars + len > maxChars)) {
        send(chunk);
        chunk = new Map();
        chars = 0;
      }
      chunk.set(k, ws);
      chars += len;
    }
    if (chunk.size > 0) send(chunk);
  };

  return {
    prime(keys) {
      // a key is primed once per batcher: a view re-rendered with the same first keys (a
      // meta refetch on a live run) must not ask again for what it already has — its
      // cards refresh through `load` (issue #15: the first screen took 4 requests, not 2)
      const fresh = keys.slice(0, opts.maxKeys).filter((k) => !primed.has(k));
      const chunk = new Map<string, Waiter<T>[]>();
      for (const k of fresh) if (!inflight.has(k) && !pending.has(k)) chunk.set(k, []);
      if (chunk.size === 0 || chunk.size !== fresh.length) return;
      for (const k of fresh) primed.add(k);
      send(chunk);
      // kept for the first `load` of each key: the viewport observer may report a card near
      // only after the primed answer is back, and that card must not ask again
      for (const k of chunk.keys()) {
        untaken.add(k);
        void inflight.get(k)!.then(
          (v) => untaken.delete(k) && primedAnswers.set(k, v),
          () => untaken.delete(k),
        );
      }
    },
    load(key) {
      if (primedAnswers.has(key)) {
        const v = primedAnswers.get(key);
        primedAnswers.delete(key);
        return Promise.resolve(v);
      }
      const joined = inflight.get(key);
      if (joined) {
        untaken.delete(key); // this ask takes the primed answer
        return joined;
      }
      return new Promise<T | undefined>((resolve, reject) => {
        const ws = pending.get(key);
        if (ws) ws.push({ resolve, reject });
        else pending.set(key, [{ resolve, reject }]);
        if (!armed) {
          armed = true;
          schedule(flush);
        }
      });
    },
  };
}
