/** Number and value text of the compare views: numbers as `npm run compare` prints them (one rule). */
import { fmtNum } from "@/lib/compare/text";

export { fmtNum };

export function fmtSigned(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "—";
  return `${v > 0 ? "+" : ""}${fmtNum(v)}`;
}

export function fmtPct(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "—";
  return `${v > 0 ? "+" : ""}${v.toFixed(1)}%`;
}

export function fmtArg(v: unknown, absent: boolean): string {
  if (absent) return "(absent)";
  return typeof v === "string" ? v : JSON.stringify(v);
}
