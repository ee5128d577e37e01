/**
 * Freshness badge state. The stamp is the newest *data* time (T1), never the time the
 * browser last fetched, so a stalled collector reads as stale although the page polls on.
 *
 * Two scopes (#15 defect 6): the view's badge is about the run's newest data of any
 * stream; a panel's badge (`panelFreshness`) is about *its own* last point, so SGLang
 * charts frozen for 43 min say so while GPU samples keep the view "live". Without data,
 * "waiting" is only said of a running run: a finished (or killed, crashed) run without a
 * stream has "none" — it is not coming.
 */
import type { RunState } from "@/lib/contracts/health";

export type FreshnessState = "waiting" | "live" | "stale" | "static" | "offline" | "none";

export interface Freshness {
  state: FreshnessState;
  /** seconds between now and the newest data, null without data */
  ageS: number | null;
}

/** Follow-mode data older than this is stale (collectors sample every few seconds). */
export const STALE_AFTER_S = 120;

export function freshness(opts: {
  mode: string | undefined;
  t1: number | null | undefined;
  nowS: number;
  failing?: boolean;
  staleAfterS?: number;
  /** run_status's lifecycle state, when known (docs/api.md 9.5.2) */
  runState?: RunState | null;
}): Freshness {
  const t1 = opts.t1;
  const ageS = typeof t1 === "number" && Number.isFinite(t1) ? Math.max(0, opts.nowS - t1) : null;
  if (opts.failing) return { state: "offline", ageS };
  if (ageS === null) return { state: opts.runState && opts.runState !== "running" ? "none" : "waiting", ageS };
  if (opts.mode !== "follow") return { state: "static", ageS };
  return { state: ageS > (opts.staleAfterS ?? STALE_AFTER_S) ? "stale" : "live", ageS };
}

/** The newest timestamp among series (each a sorted `ts` array); null when all are empty. */
export function lastPointTs(series: readonly { ts: ArrayLike<number> }[] | null | undefined): number | null {
  let last: number | null = null;
  for (const s of series ?? []) {
    const n = s.ts.length;
    if (n && (last === null || s.ts[n - 1]! > last)) last = s.ts[n - 1]!;
  }
  return last;
}

/**
 * A panel's freshness against the run's newest data: a panel whose last point trails the
 * run's by more than `staleAfterS` is "stale" (frozen while other streams move) even when
 * the run is live; otherwise the same states as the view's badge.
 */
export function panelFreshness(opts: {
  mode: string | undefined;
  t1: number | null;
  runT1: number | null;
  nowS: number;
  staleAfterS?: number;
  runState?: RunState | null;
}): Freshness & { behindS: number | null } {
  const base = freshness({ mode: opts.mode, t1: opts.t1, nowS: opts.nowS, staleAfterS: opts.staleAfterS, runState: opts.runState });
  const behindS = opts.t1 !== null && opts.runT1 !== null ? Math.max(0, opts.runT1 - opts.t1) : null;
  if (base.state === "static" && behindS !== null && behindS > (opts.staleAfterS ?? STALE_AFTER_S)) return { ...base, state: "stale", behindS };
  return { ...base, behindS };
}
