/**
 * Message formatting of the advisory rules (docs/api.md 10): durations, percentages and
 * Python `%g`, with Python's round-half-even on the exact binary value.
 */
import { pyFixed, pyG } from "@/lib/timeline/pyformat";

/** 1800 → "30min", 5400 → "1.5h", 42 → "42s". */
export function fmt(s: number): string {
  if (s >= 3600) return `${pyFixed(s / 3600, 1)}h`;
  if (s >= 60) return `${pyFixed(s / 60, 0)}min`;
  return `${pyFixed(s, 0)}s`;
}

/** 0.4 → "40%" */
export function P0(x: number): string {
  return `${pyFixed(x * 100, 0)}%`;
}

/** 0.1 → "10.0%" */
export function P1(x: number): string {
  return `${pyFixed(x * 100, 1)}%`;
}

/** Python `%g` of an arg value; non-numbers print as Python `str()` would. */
export function G(x: unknown): string {
  if (typeof x === "number") return pyG(x);
  if (typeof x === "boolean") return x ? "1" : "0";
  if (x === null || x === undefined) return "None";
  return typeof x === "string" ? x : JSON.stringify(x);
}

export { pyFixed };

/** Python truthiness of a JSON value. */
export function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === "") return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === "object") return Object.keys(v).length > 0;
  return !Number.isNaN(v);
}
