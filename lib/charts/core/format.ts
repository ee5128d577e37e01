/**
 * Number and time formatting for charts, tiles and tooltips. One module so every view
 * prints the same value the same way (the original mixed three time formats).
 * Policy: null/undefined/NaN print as "—" (missing is never shown as 0).
 */

export const MISSING = "—";

/** Table/tile/tooltip value (spec §1.8): ints as is, else 3 decimals or exponential. */
export function formatValue(v: unknown): string {
  if (v === null || v === undefined) return MISSING;
  if (typeof v === "boolean") return v ? "✓" : "";
  if (typeof v === "string") return v;
  if (typeof v !== "number") return JSON.stringify(v) ?? "";
  if (!Number.isFinite(v)) return MISSING;
  if (Number.isInteger(v) && Math.abs(v) < 1e15) return String(v);
  const a = Math.abs(v);
  if (a >= 1e5 || (a > 0 && a < 1e-3)) return v.toExponential(2);
  return v.toFixed(3);
}

/** Axis tick label (spec §1.8). */
export function formatTick(v: number): string {
  if (!Number.isFinite(v)) return "";
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(1);
  if (a >= 100) return String(Math.round(v));
  if (a >= 1) return String(Math.round(v * 100) / 100);
  return String(Math.round(v * 1000) / 1000);
}

export type ValueUnit = "plain" | "fraction" | "seconds";

/**
 * Unit from the metric name. Fractions print as percentages, seconds get an "s".
 * Conservative on purpose: a wrong unit is worse than none.
 */
export function unitForKey(key: string): ValueUnit {
  const k = key.toLowerCase();
  if (/(_frac|_ratio|clipfrac|mfu$|_mfu|token_usage|cache_hit_rate)$/.test(k) && !k.includes("tflops")) return "fraction";
  if (/(step_time|_time_s|_mean_s|_seconds|latency_s)$/.test(k)) return "seconds";
  return "plain";
}

/** Decimals that tell neighbouring ticks `step` apart (0.005 → 3, 0.5 → 1, 2 → 0). */
export function tickDecimals(step: number): number {
  if (!(step > 0) || !Number.isFinite(step)) return 3;
  return Math.max(0, Math.min(10, -Math.floor(Math.log10(step) + 1e-9)));
}

/**
 * Tick label with its unit. With the tick `step`, labels get just enough decimals to be
 * distinct (0.195 / 0.200 / 0.205 never all print as "0.2").
 */
export function formatTickUnit(v: number, unit: ValueUnit, step?: number): string {
  if (step !== undefined && Number.isFinite(v)) {
    const a = Math.abs(v);
    if (v !== 0 && (a >= 1e5 || a < 1e-4) && unit !== "fraction") return `${v.toExponential(step / a < 0.01 ? 2 : 1)}${unit === "seconds" ? "s" : ""}`;
    if (unit === "fraction") return `${(v * 100).toFixed(tickDecimals(step * 100))}%`;
    const t = v.toFixed(tickDecimals(step));
    return unit === "seconds" ? `${t}s` : t;
  }
  if (unit === "fraction" && Number.isFinite(v)) {
    const p = v * 100;
    if (p === 0) return "0%";
    return `${Math.abs(p) >= 10 ? Math.round(p * 10) / 10 : Math.round(p * 100) / 100}%`;
  }
  const t = formatTick(v);
  return unit === "seconds" && t !== "" ? `${t}s` : t;
}

export function formatValueUnit(v: number | null | undefined, unit: ValueUnit): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return MISSING;
  if (unit === "fraction") return `${(v * 100).toFixed(Math.abs(v) < 0.001 && v !== 0 ? 4 : 1)}%`;
  const s = formatValue(v);
  return unit === "seconds" ? `${s} s` : s;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** Elapsed time since T0: `+m:ss`, `+h:mm:ss`, `+Dd hh:mm:ss` (spec §1.8). */
export function formatElapsed(seconds: number): string {
  if (!Number.isFinite(seconds)) return MISSING;
  const neg = seconds < 0;
  let s = Math.round(Math.abs(seconds));
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const sign = neg ? "-" : "+";
  if (d > 0) return `${sign}${d}d ${pad2(h)}:${pad2(m)}:${pad2(s)}`;
  if (h > 0) return `${sign}${h}:${pad2(m)}:${pad2(s)}`;
  return `${sign}${m}:${pad2(s)}`;
}

/** Wall clock `HH:MM:SS` in local time or UTC (with a trailing "Z" so it is never ambiguous). */
export function formatClock(ts: number, utc = false): string {
  if (!Number.isFinite(ts)) return MISSING;
  const d = new Date(ts * 1000);
  if (utc) return `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}Z`;
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}

/** Wall clock with date, for freshness and tooltips: `YYYY-MM-DD HH:MM:SS`. */
export function formatDateTime(ts: number, utc = false): string {
  if (!Number.isFinite(ts)) return MISSING;
  const d = new Date(ts * 1000);
  const ymd = utc
    ? `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`
    : `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())}`;
  return `${ymd} ${formatClock(ts, utc)}`;
}

/** A duration for humans: `850 ms`, `12.5 s`, `4m 05s`, `2h 03m`, `3d 04h`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return MISSING;
  const a = Math.abs(seconds);
  if (a < 1) return `${Math.round(seconds * 1000)} ms`;
  if (a < 60) return `${Math.round(seconds * 10) / 10} s`;
  const s = Math.round(a);
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad2(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${pad2(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d ${pad2(Math.floor((s % 86400) / 3600))}h`;
}

/** Percentage with one decimal from a 0–1 fraction. */
export function formatPercent(fraction: number | null | undefined, digits = 1): string {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) return MISSING;
  return `${(fraction * 100).toFixed(digits)}%`;
}

/** Compact number for scale labels: 16, 1.2k, 3.4M. */
export function formatCompact(v: number): string {
  if (!Number.isFinite(v)) return MISSING;
  const a = Math.abs(v);
  if (a >= 1e9) return `${Math.round(v / 1e8) / 10}G`;
  if (a >= 1e6) return `${Math.round(v / 1e5) / 10}M`;
  if (a >= 1e4) return `${Math.round(v / 100) / 10}k`;
  return formatTick(v);
}

/** A value as exactly as a person reads it: `1e-6`, `0.25`, `3.1416`, `12000` (captions, "constant v"). */
export function formatExact(v: number): string {
  if (!Number.isFinite(v)) return MISSING;
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a < 1e-3 || a >= 1e6) return v.toExponential(4).replace(/\.?0+e/, "e").replace("e+", "e");
  return String(Number(v.toPrecision(6)));
}
