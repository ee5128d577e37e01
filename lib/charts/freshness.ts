/**
 * Freshness badge state. The stamp is the newest *data* time (T1), never the time the
 * browser last fetched, so a stalled collector reads as stale although the page polls on.
 */
export type FreshnessState = "waiting" | "live" | "stale" | "static" | "offline";

export interface Freshness {
  state: FreshnessState;
  /** seconds between now and the newest data, null without data */
  ageS: number | null;
}

/** Follow-mode data older than this is stale (collectors sample every few seconds). */
export const STALE_AFTER_S = 120;

export function freshness(opts: { mode: string | undefined; t1: number | null | undefined; nowS: number; failing?: boolean; staleAfterS?: number }): Freshness {
  const t1 = opts.t1;
  const ageS = typeof t1 === "number" && Number.isFinite(t1) ? Math.max(0, opts.nowS - t1) : null;
  if (opts.failing) return { state: "offline", ageS };
  if (ageS === null) return { state: "waiting", ageS };
  if (opts.mode !== "follow") return { state: "static", ageS };
  return { state: ageS > (opts.staleAfterS ?? STALE_AFTER_S) ? "stale" : "live", ageS };
}
