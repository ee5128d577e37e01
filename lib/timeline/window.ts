/**
 * Request bounds shared by the timeline endpoints (docs/api.md 9.1, 9.2, "Limits").
 * Messages of the reference's own checks are the reference server's, verbatim, because
 * clients and parity tests match on them; the upper size limits are rlboard's
 * (lib/contracts/limits.ts). Non-finite `t0`/`t1` never get here: the contracts refuse
 * them (lib/contracts/common.ts, QueryTime).
 */
import { badRequest } from "@/lib/contracts/errors";
import { LIMITS } from "@/lib/contracts/limits";
import { pyFixed, pyRepr } from "@/lib/timeline/pyformat";

export const MAX_WINDOW_S = 4 * 3600.0;
export const X_BUCKETS_MAX = LIMITS.x_buckets;
export const TOP_K_MAX = LIMITS.top_k;
export const MAX_POINTS_MAX = LIMITS.max_points;

/** "W": only when both bounds are given. */
export function checkWindow(t0: number | null | undefined, t1: number | null | undefined): void {
  if (t0 == null || t1 == null) return;
  if (t1 <= t0) throw badRequest(`bad window: t1=${pyRepr(t1)} <= t0=${pyRepr(t0)}`);
  if (t1 - t0 > MAX_WINDOW_S) throw badRequest(`window ${pyFixed(t1 - t0, 0)}s exceeds max_window_s 14400`);
}

/**
 * A window resolved against the run's time range — a bound left out is the range's first
 * or last timestamp — must not be empty: 400, naming where each bound came from. Python
 * answered 500 here (docs/api.md 8.9): one bound past the run's end is the user's input,
 * not a server fault.
 */
export function checkResolvedWindow(t0: number, t1: number, t0Given: boolean, t1Given: boolean): void {
  if (t1 > t0) return;
  const from = (given: boolean, end: "first" | "last") => (given ? "" : ` (the run's ${end} timestamp)`);
  throw badRequest(`empty window: t1=${pyRepr(t1)}${from(t1Given, "last")} <= t0=${pyRepr(t0)}${from(t0Given, "first")}: give t0 < t1`);
}

export function checkMaxPoints(n: number): void {
  if (n < 2) throw badRequest(`max_points=${n} must be >= 2`);
  if (n > MAX_POINTS_MAX) throw badRequest(`max_points=${n} exceeds the maximum ${MAX_POINTS_MAX}`);
}

export function checkXBuckets(n: number): void {
  if (n < 2 || n > X_BUCKETS_MAX) throw badRequest(`x_buckets=${n} out of range [2, ${X_BUCKETS_MAX}]`);
}

export function checkTopK(n: number): void {
  if (n < 1 || n > TOP_K_MAX) throw badRequest(`top_k=${n} out of range [1, ${TOP_K_MAX}]`);
}
