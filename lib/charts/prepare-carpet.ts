/**
 * Carpet (rank heatmap) preparer: the binary frame (docs/api.md 8.9) → an RGBA image of
 * x_buckets × rows, row geometry, separators and per-cell lookups. The image is drawn
 * stretched with no smoothing, positioned by its own [t0, t1] so a pan moves it at once
 * while the refetch for the new window is pending.
 */
import type { HeatmapHeader, HeatmapRowHeader } from "@/lib/charts/api-shapes";
import { lifecycleColor, magnitudeRamp, phaseColor, type ThemeName } from "@/lib/charts/palette";

export type CarpetMetric = "util" | "phase" | "mem_mb" | "power_w" | "lifecycle";
export const CARPET_METRICS: { id: CarpetMetric; label: string }[] = [
  { id: "util", label: "util" },
  { id: "phase", label: "phase" },
  { id: "mem_mb", label: "mem_mb" },
  { id: "power_w", label: "power_w" },
  { id: "lifecycle", label: "traj" },
];

export function isCarpetMetric(s: string | null | undefined): s is CarpetMetric {
  return CARPET_METRICS.some((m) => m.id === s);
}

export interface CarpetModel {
  header: HeatmapHeader;
  matrix: Uint8Array;
  rows: number;
  xBuckets: number;
  rowHeight: number;
  height: number;
  /** RGBA pixels, xBuckets wide, rows tall */
  rgba: Uint8ClampedArray;
  separators: { row: number; kind: "node" | "role" }[];
  labelEvery: number;
  kind: "magnitude" | "phase" | "lifecycle";
}

export function rowHeightFor(rows: number): number {
  if (rows <= 16) return 14;
  if (rows <= 64) return 8;
  if (rows <= 256) return 4;
  return 2;
}

/** The carpet's canvas height for this many rows (CSS px). */
export function carpetHeight(rows: number): number {
  return Math.max(rows * rowHeightFor(rows), 24);
}

function hexRgb(hex: string): [number, number, number] {
  const h = hex.replace("#", "");
  return [parseInt(h.slice(0, 2), 16), parseInt(h.slice(2, 4), 16), parseInt(h.slice(4, 6), 16)];
}

/** byte → RGBA lookup table (256 × 4). */
export function carpetLut(header: Pick<HeatmapHeader, "metric" | "palette">, theme: ThemeName): Uint8ClampedArray {
  const lut = new Uint8ClampedArray(256 * 4);
  const ramp = magnitudeRamp(theme);
  const put = (i: number, [r, g, b]: [number, number, number], a = 255) => {
    lut[i * 4] = r;
    lut[i * 4 + 1] = g;
    lut[i * 4 + 2] = b;
    lut[i * 4 + 3] = a;
  };
  put(0, ramp.empty, 0); // transparent: the panel shows through as "no data"
  if (header.metric === "phase" || header.metric === "lifecycle") {
    const pal = header.palette ?? [];
    for (let i = 1; i < 256; i++) {
      const name = pal[i];
      if (name === undefined) {
        put(i, ramp.empty, 0);
        continue;
      }
      put(i, hexRgb(header.metric === "phase" ? phaseColor(name, theme, true) : lifecycleColor(name, theme)));
    }
    return lut;
  }
  for (let i = 1; i < 256; i++) {
    const t = i / 255;
    put(i, [
      ramp.lo[0] + (ramp.hi[0] - ramp.lo[0]) * t,
      ramp.lo[1] + (ramp.hi[1] - ramp.lo[1]) * t,
      ramp.lo[2] + (ramp.hi[2] - ramp.lo[2]) * t,
    ]);
  }
  return lut;
}

function isLane(r: HeatmapRowHeader): r is Extract<HeatmapRowHeader, { node: string }> {
  return "node" in r;
}

export function prepareCarpet(header: HeatmapHeader, matrix: Uint8Array, theme: ThemeName): CarpetModel {
  const rows = header.rows.length;
  const X = header.x_buckets;
  const lut = carpetLut(header, theme);
  const rgba = new Uint8ClampedArray(Math.max(0, rows * X * 4));
  const n = Math.min(matrix.length, rows * X);
  for (let i = 0; i < n; i++) {
    const b = matrix[i]! * 4;
    const o = i * 4;
    rgba[o] = lut[b]!;
    rgba[o + 1] = lut[b + 1]!;
    rgba[o + 2] = lut[b + 2]!;
    rgba[o + 3] = lut[b + 3]!;
  }
  const separators: CarpetModel["separators"] = [];
  for (let r = 1; r < rows; r++) {
    const a = header.rows[r - 1]!;
    const b = header.rows[r]!;
    if (!isLane(a) || !isLane(b)) continue;
    if (a.node !== b.node) separators.push({ row: r, kind: "node" });
    else if ((a.roles ?? []).join("+") !== (b.roles ?? []).join("+")) separators.push({ row: r, kind: "role" });
  }
  const rh = rowHeightFor(rows);
  return {
    header,
    matrix,
    rows,
    xBuckets: X,
    rowHeight: rh,
    height: carpetHeight(rows),
    rgba,
    separators,
    // every ceil(rows/48)-th row, and never closer than 11 px so labels do not overlap
    labelEvery: Math.max(1, Math.ceil(rows / 48), Math.ceil(11 / rh)),
    kind: header.metric === "phase" ? "phase" : header.metric === "lifecycle" ? "lifecycle" : "magnitude",
  };
}

export function rowLabel(r: HeatmapRowHeader): string {
  return isLane(r) ? `g${r.index}` : `s${r.sample_index}`;
}

export function rowIdentity(r: HeatmapRowHeader): string {
  if (isLane(r)) return `g${r.index} ${r.node}:${r.gpu} (${(r.roles ?? []).join("+") || "?"})`;
  return `s${r.sample_index} (group ${r.group_index ?? "?"})`;
}

export function rowLaneIndex(r: HeatmapRowHeader | undefined): number | null {
  return r && isLane(r) ? r.index : null;
}

/** Bucket under time t, or -1 outside. */
export function bucketAt(m: Pick<CarpetModel, "header" | "xBuckets">, t: number): number {
  const { t0, t1 } = m.header;
  if (!(t1 > t0) || t < t0 || t > t1) return -1;
  return Math.min(m.xBuckets - 1, Math.max(0, Math.floor(((t - t0) / (t1 - t0)) * m.xBuckets)));
}

/** Human text for one cell: `phase: rollout`, `util: 87`, or null for an empty cell. */
export function cellText(m: CarpetModel, row: number, bucket: number): string {
  const b = m.matrix[row * m.xBuckets + bucket] ?? 0;
  const metric = m.header.metric;
  if (m.kind !== "magnitude") {
    const name = b === 0 ? "—" : (m.header.palette?.[b] ?? "?");
    return `${metric === "lifecycle" ? "state" : "phase"}: ${name}`;
  }
  if (b === 0) return `${metric}: no data (or 0)`;
  const max = m.header.scale?.max ?? 255;
  const v = (b * max) / 255;
  return `${metric}: ${v >= 100 ? Math.round(v) : Math.round(v * 10) / 10}`;
}

export function carpetScaleText(m: CarpetModel): string {
  if (m.kind === "magnitude") {
    const max = m.header.scale?.max;
    return max !== undefined && max !== null ? `0–${Math.round(max)}${m.header.metric === "util" ? "%" : m.header.metric === "mem_mb" ? " MB" : " W"}` : "";
  }
  if (m.kind === "lifecycle" && m.header.rows_total !== undefined && m.header.rows_total > m.rows) {
    return `showing ${m.rows}/${m.header.rows_total} trajectories`;
  }
  return "";
}
