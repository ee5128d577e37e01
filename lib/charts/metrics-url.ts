/**
 * Metrics view state ⇄ URL search params, so a view is shareable and restorable:
 *   cat=perf  q=reward  x=10~40 (shared x zoom)  y:<key>=0.1~0.5 (per-chart y zoom)
 *   dp=1 (split by dp rank)  hide=<engine>,<engine>  step=12 (step cursor)
 * Unknown params are kept untouched.
 */
import type { Range } from "@/lib/charts/core/range";
import { decodeRange, encodeRange, readableQuery } from "@/lib/charts/core/url";

export interface MetricsUrlState {
  category: string | null;
  filter: string;
  x: Range | null;
  y: Readonly<Record<string, Range>>;
  perDpRank: boolean;
  hidden: readonly string[];
  step: number | null;
}

const Y_PREFIX = "y:";

export function parseMetricsState(sp: URLSearchParams): MetricsUrlState {
  const y: Record<string, Range> = {};
  for (const [k, v] of sp) {
    if (!k.startsWith(Y_PREFIX)) continue;
    const r = decodeRange(v);
    if (r) y[k.slice(Y_PREFIX.length)] = r;
  }
  const stepRaw = sp.get("step");
  const step = stepRaw !== null && /^-?\d+$/.test(stepRaw) ? Number(stepRaw) : null;
  return {
    category: sp.get("cat") || null,
    filter: sp.get("q") ?? "",
    x: decodeRange(sp.get("x")),
    y,
    perDpRank: sp.get("dp") === "1",
    hidden: (sp.get("hide") ?? "").split(",").filter(Boolean),
    step,
  };
}

/** Apply a partial state onto existing params (other params survive); returns `?…` or "". */
export function writeMetricsState(base: URLSearchParams, patch: Partial<MetricsUrlState>): string {
  const sp = new URLSearchParams(base);
  const set = (k: string, v: string | null) => {
    if (v === null || v === "") sp.delete(k);
    else sp.set(k, v);
  };
  if ("category" in patch) set("cat", patch.category ?? null);
  if ("filter" in patch) set("q", patch.filter ?? null);
  if ("x" in patch) set("x", encodeRange(patch.x ?? null));
  if ("y" in patch) {
    for (const k of [...sp.keys()]) if (k.startsWith(Y_PREFIX)) sp.delete(k);
    for (const [k, r] of Object.entries(patch.y ?? {})) set(`${Y_PREFIX}${k}`, encodeRange(r));
  }
  if ("perDpRank" in patch) set("dp", patch.perDpRank ? "1" : null);
  if ("hidden" in patch) set("hide", (patch.hidden ?? []).join(","));
  if ("step" in patch) set("step", patch.step === null || patch.step === undefined ? null : String(patch.step));
  const s = readableQuery(sp);
  return s ? `?${s}` : "";
}

/** The step after (dir 1) or before (-1) `cur` in ascending ids; from no cursor: the first or the last. */
export function neighbourId(ids: readonly number[], cur: number | null, dir: 1 | -1): number | undefined {
  if (cur === null) return dir === 1 ? ids[0] : ids[ids.length - 1];
  if (dir === 1) return ids.find((v) => v > cur) ?? ids[ids.length - 1];
  return [...ids].reverse().find((v) => v < cur) ?? ids[0];
}
