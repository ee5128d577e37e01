/**
 * View state in the query string: readable encoding, the range codec (`x=10~40`) and a
 * patch helper. Pure; the one hook that reads and writes the address bar is
 * components/charts/use-url-state.ts.
 */
import type { Range } from "@/lib/charts/core/range";

/**
 * Query string from params, with `:` `,` `/` `~` left readable (all legal in a query):
 * `lanes=g:0-31,rank:2`, `x=10~40`, `y:perf/step_time=…`. A literal "%" is encoded as
 * %25 first, so a user's text can never turn into one of these by accident.
 */
export function readableQuery(sp: URLSearchParams): string {
  return sp.toString().replace(/%3A/gi, ":").replace(/%2C/gi, ",").replace(/%2F/gi, "/").replace(/%7E/gi, "~");
}

/** Compact, URL-safe number: 12 significant digits keep unix seconds to 0.01 s. */
export function urlNum(v: number): string {
  return String(Number(v.toPrecision(12)));
}

export function encodeRange(r: Range | null): string | null {
  return r ? `${urlNum(r[0])}~${urlNum(r[1])}` : null;
}

export function decodeRange(s: string | null | undefined): Range | null {
  if (!s) return null;
  const m = /^(-?[\d.eE+-]+)~(-?[\d.eE+-]+)$/.exec(s.trim());
  if (!m) return null;
  const a = Number(m[1]);
  const b = Number(m[2]);
  if (!Number.isFinite(a) || !Number.isFinite(b) || a === b) return null;
  return a < b ? [a, b] : [b, a];
}

/** A copy of `search` with each key set (string), replaced (array) or removed (null). */
export function patchSearch(search: string | URLSearchParams, patch: Record<string, string | readonly string[] | null>): URLSearchParams {
  const q = new URLSearchParams(search);
  for (const [k, v] of Object.entries(patch)) {
    q.delete(k);
    if (v === null) continue;
    if (typeof v === "string") q.set(k, v);
    else for (const item of v) q.append(k, item);
  }
  return q;
}
