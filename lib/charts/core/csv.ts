/**
 * CSV text for downloads (docs/charts.md §6): a chart's series and the rollouts table.
 * RFC 4180 quoting (fields with a comma, quote or line break are quoted, quotes doubled),
 * `\n` line ends, missing values (null, undefined, NaN) as empty fields — never as 0.
 */
import type { ChartModel } from "@/lib/charts/core/model";

export type CsvCell = string | number | boolean | null | undefined;

export function csvField(v: CsvCell): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "";
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvText(header: readonly string[], rows: Iterable<readonly CsvCell[]>): string {
  const lines = [header.map(csvField).join(",")];
  for (const r of rows) lines.push(r.map(csvField).join(","));
  return `${lines.join("\n")}\n`;
}

export interface SeriesCsvOptions {
  /** name of the x column (`step`, `wall_time`, `seconds_since_start`) */
  xName: string;
  /** per series, its smoothed y (same length as its y), when smoothing is on */
  smoothed?: readonly (Float64Array | null)[];
  /** per series, an extra x column (the step of each point when x is time) */
  extra?: { name: string; columns: readonly (ArrayLike<number> | null)[] };
}

/** Long format: one row per point, `series,<x>,value[,smoothed]`; gaps are left out. */
export function seriesCsv(m: Pick<ChartModel, "series">, o: SeriesCsvOptions): string {
  const smoothOn = (o.smoothed ?? []).some((s) => s !== null);
  const header = ["series", o.xName, ...(o.extra ? [o.extra.name] : []), "value", ...(smoothOn ? ["smoothed"] : [])];
  const rows: CsvCell[][] = [];
  m.series.forEach((s, k) => {
    const sm = o.smoothed?.[k] ?? null;
    const ex = o.extra?.columns[k] ?? null;
    for (let i = 0; i < s.x.length; i++) {
      if (!Number.isFinite(s.y[i]!)) continue;
      const row: CsvCell[] = [s.label, s.x[i]!];
      if (o.extra) row.push(ex ? ex[i] : null);
      row.push(s.y[i]);
      if (smoothOn) row.push(sm ? sm[i] : null);
      rows.push(row);
    }
  });
  return csvText(header, rows);
}

/** A file name from a chart title: `train/lr-pg` → `train_lr-pg`. */
export function fileStem(name: string): string {
  return name.replace(/[^\w.-]+/g, "_").replace(/^_+|_+$/g, "") || "chart";
}

/** A table cell for CSV: primitives as they are, arrays and objects as JSON. */
export function csvCell(v: unknown): CsvCell {
  if (v === null || v === undefined || typeof v === "string" || typeof v === "number" || typeof v === "boolean") return v;
  return JSON.stringify(v) ?? "";
}
