/**
 * The Rollouts scatter: one point per sample, y = reward (default) against x =
 * response length (default), truncated samples flagged red. Axes are selectable among
 * the numeric columns, and a y column with ≤ 3 distinct values (binary rewards) gets a
 * small deterministic jitter so stacked points separate (docs/views.md 9 #41); the tooltip
 * always shows the true values.
 */
import { formatValue } from "@/lib/charts/core/format";
import { chartModel, type ChartModel } from "@/lib/charts/core/model";
import type { Cell, SummaryRow } from "./types";

export interface ScatterOptions {
  x: string;
  y: string;
  jitter?: boolean;
}

export interface ScatterModel {
  model: ChartModel;
  /** sample_index of point i (for click-to-open). */
  ids: Int32Array;
  /** Rows left out because x or y is null. */
  skipped: number;
  jittered: boolean;
}

const finite = (v: Cell | undefined): v is number => typeof v === "number" && Number.isFinite(v);

/** Numeric columns that make sense as scatter axes. */
/** A deterministic jitter in [-1, 1] per id, so stacked binary rewards spread out. */
export function jitterUnit(id: number): number {
  let h = (id | 0) ^ 0x9e3779b9;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  h ^= h >>> 16;
  return ((h >>> 0) / 0xffffffff) * 2 - 1;
}

export function numericColumns(columns: readonly string[], rows: readonly SummaryRow[]): string[] {
  return columns.filter((c) => c !== "sample_index" && rows.some((r) => finite(r[c])));
}

export function prepareScatter(rows: readonly SummaryRow[], opts: ScatterOptions): ScatterModel {
  const keep = rows.filter((r) => finite(r[opts.x]) && finite(r[opts.y]));
  const n = keep.length;
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  const flag = new Uint8Array(n);
  const ids = new Int32Array(n);
  const distinct = new Set<number>();
  let lo = Infinity;
  let hi = -Infinity;
  keep.forEach((r, i) => {
    const yv = r[opts.y] as number;
    x[i] = r[opts.x] as number;
    y[i] = yv;
    flag[i] = r.truncated === true ? 1 : 0;
    ids[i] = r.sample_index;
    if (distinct.size <= 3) distinct.add(yv);
    lo = Math.min(lo, yv);
    hi = Math.max(hi, yv);
  });
  const jittered = (opts.jitter ?? true) && n > 1 && distinct.size <= 3;
  if (jittered) {
    const amp = (hi > lo ? hi - lo : 1) * 0.035;
    for (let i = 0; i < n; i++) y[i] = y[i]! + jitterUnit(ids[i]!) * amp;
  }
  const tooltip = (i: number) => {
    const r = keep[i]!;
    const lines = [`sample ${r.sample_index}`, `${opts.y}=${formatValue(r[opts.y])}  ${opts.x}=${formatValue(r[opts.x])}`];
    if (finite(r.mean_abs_lp_diff)) lines.push(`|lp diff|=${formatValue(r.mean_abs_lp_diff)}`);
    if (r.truncated === true) lines.push("truncated");
    if (r.remove_sample === true) lines.push("removed from training");
    lines.push("click to open");
    return lines.join("\n");
  };
  return {
    model: chartModel("scatter", [{ id: opts.y, label: opts.y, color: null, x, y, flag }], { axisTitles: { x: opts.x, y: opts.y }, tooltip }),
    ids,
    skipped: rows.length - n,
    jittered,
  };
}
