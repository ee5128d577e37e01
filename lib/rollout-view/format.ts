/**
 * Number formatting shared by the rollout tables, tiles, tooltips and chart axes
 * (docs/views.md 1.8). `—` always means "absent", never zero.
 */
import type { Cell } from "./types";

export const DASH = "—";

/** Table / tile / tooltip cell: null → —, true → ✓, integers as is, else 3 decimals or exponent. */
export function formatCell(v: Cell | undefined): string {
  if (v === null || v === undefined) return DASH;
  if (typeof v === "boolean") return v ? "✓" : "";
  if (typeof v === "string") return v;
  if (!Number.isFinite(v)) return DASH;
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  if (a >= 1e5 || (a > 0 && a < 1e-3)) return v.toExponential(2);
  return v.toFixed(3);
}

/** Chart axis tick label. */
export function formatTick(v: number): string {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(1);
  if (a >= 100) return String(Math.round(v));
  if (a >= 1) return String(Math.round(v * 100) / 100);
  return String(Math.round(v * 1000) / 1000);
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/** Elapsed seconds from T0: `+m:ss`, `+h:mm:ss`, or `+Dd hh:mm:ss`. */
export function formatElapsed(seconds: number): string {
  const sign = seconds < 0 ? "-" : "+";
  let s = Math.round(Math.abs(seconds));
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (d > 0) return `${sign}${d}d ${pad2(h)}:${pad2(m)}:${pad2(s)}`;
  if (h > 0) return `${sign}${h}:${pad2(m)}:${pad2(s)}`;
  return `${sign}${m}:${pad2(s)}`;
}

/** Seconds with a unit that stays readable from milliseconds to hours. */
export function formatDuration(seconds: number): string {
  const a = Math.abs(seconds);
  if (a < 1) return `${Math.round(seconds * 1000)} ms`;
  if (a < 60) return `${seconds.toFixed(a < 10 ? 2 : 1)} s`;
  return formatElapsed(seconds).slice(1);
}

/** Client-computed weight-version span: `v<lo>–v<hi>` when mixed, `v<hi>`, or null. */
export function formatVersions(row: { readonly [column: string]: Cell | undefined }): string | null {
  const hi = row.weight_version;
  if (hi === null || hi === undefined || hi === "") return null;
  const lo = row.weight_version_min;
  if (row.mixed_version === true && lo !== null && lo !== undefined && String(lo) !== String(hi)) return `v${String(lo)}–v${String(hi)}`;
  return `v${String(hi)}`;
}
