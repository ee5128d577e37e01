/**
 * Column filter expressions for the sample and group tables. One grammar for every
 * column, typed in a small input under the header and kept in the URL (`f=col:expr`):
 *
 *   numbers   `>0.5`  `<=3`  `=1`  `!=0`  `2..10` (inclusive)  `3` (equals)
 *   booleans  `true` / `false` (also yes/no/1/0/✓)
 *   text      `abc` (substring, any case)  `=abc` (exact)  `!abc` (does not contain)
 *   any       `null` / `!null` (absent / present)
 *
 * Several space-separated terms must all hold. An expression that does not parse is
 * reported (shown under the input) and filters nothing, so typing never blanks the table.
 */
import type { Cell } from "./types";

export type FilterTest = (v: Cell | undefined) => boolean;
export type ParsedFilter = { ok: true; test: FilterTest } | { ok: false; error: string };

const TRUE = new Set(["true", "yes", "y", "1", "✓", "t"]);
const FALSE = new Set(["false", "no", "n", "0", "f"]);
const NUM = "[-+]?(?:\\d+\\.?\\d*|\\.\\d+)(?:e[-+]?\\d+)?";
const CMP_RE = new RegExp(`^(>=|<=|!=|>|<|=)?(${NUM})$`, "i");
const RANGE_RE = new RegExp(`^(${NUM})\\.\\.(${NUM})$`, "i");

const isNum = (v: Cell | undefined): v is number => typeof v === "number" && Number.isFinite(v);

function parseTerm(term: string): FilterTest | string {
  const t = term.trim();
  const low = t.toLowerCase();
  if (low === "null" || low === "—") return (v) => v === null || v === undefined;
  if (low === "!null") return (v) => v !== null && v !== undefined;
  if (TRUE.has(low) || FALSE.has(low)) {
    const want = TRUE.has(low);
    const n = Number(low);
    return (v) => (typeof v === "boolean" ? v === want : isNum(v) && Number.isFinite(n) ? v === n : typeof v === "string" && v.toLowerCase() === low);
  }
  const range = RANGE_RE.exec(t);
  if (range) {
    const a = Number(range[1]);
    const b = Number(range[2]);
    const lo = Math.min(a, b);
    const hi = Math.max(a, b);
    return (v) => isNum(v) && v >= lo && v <= hi;
  }
  const cmp = CMP_RE.exec(t);
  if (cmp) {
    const x = Number(cmp[2]);
    switch (cmp[1]) {
      case ">":
        return (v) => isNum(v) && v > x;
      case ">=":
        return (v) => isNum(v) && v >= x;
      case "<":
        return (v) => isNum(v) && v < x;
      case "<=":
        return (v) => isNum(v) && v <= x;
      case "!=":
        return (v) => !(isNum(v) && v === x);
      default:
        // Plain or `=` number: numeric equality, or the same text in a string column (versions "v3").
        return (v) => (isNum(v) ? v === x : typeof v === "string" && v === cmp[2]);
    }
  }
  if (/^(>=|<=|>|<)/.test(t)) return `'${t}' needs a number after the comparison`;
  if (t.startsWith("=")) {
    const want = t.slice(1).toLowerCase();
    return (v) => v !== null && v !== undefined && String(v).toLowerCase() === want;
  }
  if (t.startsWith("!")) {
    const needle = t.slice(1).toLowerCase();
    if (!needle) return "'!' needs text after it";
    return (v) => !(typeof v === "string" && v.toLowerCase().includes(needle));
  }
  return (v) => typeof v === "string" && v.toLowerCase().includes(low);
}

export function parseFilter(expr: string): ParsedFilter {
  const terms = expr.trim().split(/\s+/).filter(Boolean);
  if (!terms.length) return { ok: true, test: () => true };
  const tests: FilterTest[] = [];
  for (const term of terms) {
    const r = parseTerm(term);
    if (typeof r === "string") return { ok: false, error: r };
    tests.push(r);
  }
  return { ok: true, test: (v) => tests.every((f) => f(v)) };
}

const cache = new Map<string, ParsedFilter>();

/** parseFilter with a small memo, since the table calls it once per row. Invalid → passes. */
export function matchesFilter(value: Cell | undefined, expr: string): boolean {
  let p = cache.get(expr);
  if (!p) {
    if (cache.size > 200) cache.clear();
    p = parseFilter(expr);
    cache.set(expr, p);
  }
  return p.ok ? p.test(value) : true;
}
