/**
 * Turning scraped SGLang exposition text into `engine_series` records
 * (docs/formats.md §4.7, §6.5), as a pure function the scraper and tests share.
 *
 * Rules:
 *   - sample names are normalised `:` → `_` (engines export `sglang:x`, the
 *     router `sglang_x`) and filtered by the whitelist;
 *   - labels are reduced to `engine_type` and `dp_rank`, in text order;
 *     `model_name`, `tp_rank`, `pid`, `is_streaming`, `worker_addr`, … go;
 *   - cumulative series (`_total`, `_sum`, `_count`) that collapse onto the
 *     same (addr, metric, labels) after the reduction — current SGLang splits
 *     token/request counters and TTFT/E2E histograms by `is_streaming` — are
 *     SUMMED into one record: that is what the reader's fold would compute
 *     anyway, and it keeps the per-dp-rank view free of duplicate rows whose
 *     deltas would otherwise pair up wrongly. Gauges are never merged (the
 *     reader sums or averages them per metric);
 *   - every record of one tick carries the same `ts`; values become floats
 *     (NaN/±Inf kept).
 */
import { SGLANG_KEPT_LABELS, type EngineSample } from "@/lib/store/format";
import { parsePromText } from "../prometheus-text";

const CUMULATIVE = /_(?:total|sum|count)$/;

export interface BuildResult {
  records: EngineSample[];
  /** Router mode: whitelisted samples without a `worker_addr` label. */
  missingAddr: number;
}

export function normaliseMetricName(name: string): string {
  return name.includes(":") ? name.replaceAll(":", "_") : name;
}

/**
 * Parse one exposition body. `addr` is the engine address in direct mode;
 * `undefined` means router mode (address from each sample's `worker_addr`).
 * Throws `PromParseError` on a malformed body.
 */
export function buildEngineRecords(
  text: string,
  opts: { ts: number; addr: string | undefined; whitelist: ReadonlySet<string> },
): BuildResult {
  const samples = parsePromText(text, (n) => opts.whitelist.has(normaliseMetricName(n)));
  const records: EngineSample[] = [];
  const cumulativeIndex = new Map<string, EngineSample>();
  let missingAddr = 0;
  for (const s of samples) {
    let addr = opts.addr;
    const labels: Record<string, string> = {};
    for (const [k, v] of s.labels) {
      if (SGLANG_KEPT_LABELS.has(k)) labels[k] = v;
      else if (opts.addr === undefined && k === "worker_addr") addr = v;
    }
    if (addr === undefined) {
      missingAddr++;
      continue;
    }
    const metric = normaliseMetricName(s.name);
    if (CUMULATIVE.test(metric)) {
      const key = `${addr}\u0000${metric}\u0000${labels.engine_type ?? "\u0001"}\u0000${labels.dp_rank ?? "\u0001"}`;
      const prev = cumulativeIndex.get(key);
      if (prev) {
        prev.value += s.value;
        continue;
      }
      const rec: EngineSample = { ts: opts.ts, addr, metric, labels, value: s.value };
      cumulativeIndex.set(key, rec);
      records.push(rec);
      continue;
    }
    records.push({ ts: opts.ts, addr, metric, labels, value: s.value });
  }
  return { records, missingAddr };
}
