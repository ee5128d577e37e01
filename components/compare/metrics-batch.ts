/**
 * Batched metric reads for the compare overlay (issue #14: "2 runs × 40 metrics × 10k
 * steps drawn ≤ 1 s"). Each overlay card asks for one metric of one run; asks for the
 * same run and step axis made within one short window go out as one
 * `GET /api/metrics?keys=a,b,…&format=bin` (docs/api.md 9.2: the multi-key form, as a
 * binary column frame), at most `MAX_KEYS_PER_REQUEST` keys each, and each card gets
 * exactly its key's part of the answer — the same series a single-key JSON request
 * returns (app/api/metrics/route.test.ts).
 *
 * Why: one request per card and run was 2 × (cards near the viewport) heavy queries at
 * once; the server admits 2 heavy queries per user and queues 6 (docs/api.md 9.4), so
 * the rest waited (and beyond 6, were answered 503 `busy` and retried a second later);
 * the browser opens at most 6 connections per host, so the last cards queued there too.
 * As JSON, the server spent most of a batch compressing ~2 MB of text (~3× the time
 * it took to compute it, measured), and the page parsing it.
 *
 * A batch that fails with a 4xx names one bad key for all of them: it is asked again key
 * by key, so only that card shows the error. Other failures (503, network) reject every
 * ask; react-query retries each, and retries that land in the same window share a
 * request again.
 */
import { createKeyBatcher, type KeyBatcher } from "@/lib/charts/key-batcher";
import { ApiClientError, apiBinary, mayBeOneKeysFault } from "@/lib/client/fetcher";
import { telemetryUrl } from "@/lib/client/telemetry-queries";
import { decodeMetricsColumns, type MetricColumns } from "@/lib/contracts/metrics-frame";

/** docs/api.md 9.4: the UI asks `/api/metrics` for at most 12 keys at once. */
export const MAX_KEYS_PER_REQUEST = 12;

/** A request's answer: one series per asked key. */
export type FetchSeries<T> = (url: string) => Promise<Record<string, T>>;

/**
 * What the overlay draws from (lib/compare/overlay.ts reads it as it reads the JSON
 * arrays): the frame's columns, NaN for JSON null; a boolean value is 1/0 and a string
 * NaN, as the overlay turns JSON values into numbers.
 */
export interface SeriesColumns {
  x: Float64Array;
  y: Float64Array;
  ts: Float64Array;
}

/** A frame's key as the overlay reads it (booleans 1/0 in y; a copy only then). */
export function overlayColumns(c: MetricColumns): SeriesColumns {
  let y = c.y;
  if (c.others.some(([, v]) => typeof v === "boolean")) {
    y = y.slice();
    for (const [i, v] of c.others) if (typeof v === "boolean") y[i] = v ? 1 : 0;
  }
  return { x: c.x, y, ts: c.ts };
}

/** `format=bin` (lib/contracts/metrics-frame.ts), as columns: no number is parsed or boxed. */
export const fetchColumns: FetchSeries<SeriesColumns> = async (url) => {
  const out: Record<string, SeriesColumns> = {};
  for (const [key, c] of Object.entries(decodeMetricsColumns(await apiBinary(url)))) out[key] = overlayColumns(c);
  return out;
};

/**
 * One key batcher (lib/charts/key-batcher.ts, the Metrics page's too) per run and step
 * axis; asks made within one task share a request.
 */
export class MetricsBatcher<T> {
  private readonly batchers = new Map<string, KeyBatcher<T>>();

  constructor(private readonly fetchSeries: FetchSeries<T>) {}

  /** One metric of one run on step axis `x`: what `/api/metrics?keys=<key>&x=<x>` answers for it. */
  async load(runId: string, x: string, key: string): Promise<T> {
    const id = `${runId}\u0000${x}`;
    let b = this.batchers.get(id);
    if (!b) {
      b = createKeyBatcher<T>({
        maxKeys: MAX_KEYS_PER_REQUEST,
        splitOn: mayBeOneKeysFault,
        schedule: queueMicrotask,
        fetchMany: (keys) => this.fetchSeries(telemetryUrl(runId, "metrics", { keys: keys.join(","), x, format: "bin" })),
      });
      this.batchers.set(id, b);
    }
    const p = await b.load(key);
    if (p === undefined) throw new ApiClientError(500, "missing_key", `the answer has no series for '${key}'`);
    return p;
  }
}

/** The page's batcher: asks made while one render commits (the cards that came near together) share requests. */
export const overlayMetrics = new MetricsBatcher(fetchColumns);
