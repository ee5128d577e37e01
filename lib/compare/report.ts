/**
 * The compare report (docs/api.md "GET /api/compare"): KPI table, config delta, verdict,
 * availability change and movers over 2–8 runs, the first being the baseline. Pure
 * functions over each run's MetricStore and DumpSource — the route, the page and the CLI
 * (`npm run compare`) all answer with `compareRuns`.
 */
import type { MetricStore } from "@/lib/store/telemetry";
import { configDelta, hasArgs, verdictOf, type ConfigDeltaRow, type Verdict } from "@/lib/compare/args";
import { median, peak, spread } from "@/lib/compare/stats";
import { wandbUrl } from "@/lib/timeline/meta";
import { DUMP_METRIC_PREFIX, STEP_AGGREGATE_METRICS, type DumpSource } from "@/lib/timeline/dump-source";

export const MIN_COMPARE_RUNS = 2;
export const MAX_COMPARE_RUNS = 8;

export interface CompareRun {
  id: string;
  name: string;
  store: MetricStore;
  dumps: DumpSource;
  /** From the run scan (trajectory sidecars or the telemetry trajectories stream). */
  hasTrajectories?: boolean;
}

/** A metric of one run reduced to the numbers the report needs. */
export interface MetricSummary {
  n: number;
  median: number | null;
  peak: number | null;
  spread: number | null;
}

export type Statistic = "median" | "peak";

export interface KpiRow {
  key: string;
  label: string;
  statistic: Statistic;
  /** True for the issue's headline KPIs (listed first, in a fixed order). */
  headline: boolean;
  values: (number | null)[];
  delta: (number | null)[];
  pct: (number | null)[];
  /** Steps (or samples, for GPU util) each value was computed over. */
  n: number[];
}

export interface Mover {
  key: string;
  label: string;
  /** The largest |shift| among the non-baseline runs, signed (null: not comparable). */
  shift: number | null;
  shifts: (number | null)[];
  /** The baseline's spread the shifts are measured in (scaled MAD, docs/api.md). */
  spread: number | null;
  medians: (number | null)[];
}

export interface AvailabilityItem {
  key: string;
  label: string;
  values: boolean[];
}

export interface CompareReport {
  baseline: string;
  runs: { id: string; name: string; start_ts: number | null; wandb_url: string | null; has_args: boolean }[];
  kpis: KpiRow[];
  config_delta: ConfigDeltaRow[];
  verdict: Verdict;
  availability: { items: AvailabilityItem[]; changed: string[] };
  movers: Mover[];
  warnings: string[];
}

/** Derived keys (not in any metrics.jsonl). */
export const GPU_UTIL_KEY = "gpu/util";
export const ROLLOUT_SHARE_KEY = "perf/rollout_share";

/** Headline KPIs in order; each takes the first source key the runs have (docs/api.md). */
export const HEADLINE_KPIS: readonly { label: string; sources: readonly string[] }[] = [
  { label: "Reward mean", sources: ["rollout/raw_reward", "dump/reward_mean"] },
  { label: "Response length", sources: ["rollout/response_lengths", "dump/response_length_mean"] },
  { label: "Truncated fraction", sources: ["rollout/truncated", "dump/truncated_frac"] },
  { label: "Zero-std group fraction", sources: ["dump/zero_std_group_frac"] },
  { label: "Step time (s)", sources: ["perf/step_time"] },
  { label: "Tokens/s per GPU", sources: ["perf/tokens_per_gpu_per_sec"] },
  { label: "GPU util (%)", sources: [GPU_UTIL_KEY] },
  { label: "Rollout share of rollout+train time", sources: [ROLLOUT_SHARE_KEY] },
  { label: "Staleness (mixed-version sample fraction)", sources: ["dump/mixed_version_frac"] },
  { label: "MFU", sources: ["perf/actor_train_mfu"] },
];

export function summarize(ys: ArrayLike<number>): MetricSummary {
  return { n: ys.length, median: median(ys), peak: peak(ys), spread: spread(ys) };
}

function pushTo(m: Map<string, number[]>, k: string, v: number) {
  let a = m.get(k);
  if (!a) m.set(k, (a = []));
  a.push(v);
}

const numeric = (v: unknown): number | null =>
  typeof v === "number" ? (Number.isFinite(v) ? v : null) : typeof v === "boolean" ? Number(v) : null;

/** Every scalar metric of a run: metrics.jsonl keys (numbers and booleans), `dump/*`, and the derived rows. */
export async function runSummaries(run: CompareRun, warnings: string[]): Promise<Map<string, MetricSummary>> {
  const values = new Map<string, number[]>();
  for (const r of await run.store.metrics()) {
    const m = r.metrics;
    for (const k in m) {
      const v = numeric(m[k]);
      if (v !== null) pushTo(values, k, v);
    }
    const ro = numeric(m["perf/rollout_time"]);
    const tr = numeric(m["perf/train_time"]);
    if (ro !== null && tr !== null && ro + tr > 0) pushTo(values, ROLLOUT_SHARE_KEY, ro / (ro + tr));
  }
  try {
    for (const row of await run.dumps.stepAggregates())
      for (const col of STEP_AGGREGATE_METRICS) {
        const v = row[col];
        if (typeof v === "number" && Number.isFinite(v)) pushTo(values, DUMP_METRIC_PREFIX + col, v);
      }
  } catch (err) {
    warnings.push(`${run.name}: dump aggregates unavailable (${err instanceof Error ? err.message : String(err)})`);
  }
  const out = new Map<string, MetricSummary>();
  for (const [k, ys] of values) out.set(k, summarize(ys));
  const gpu = await gpuUtilSummary(run.store);
  if (gpu) out.set(GPU_UTIL_KEY, gpu);
  return out;
}

/**
 * GPU utilisation over every gpu_util sample of every GPU (a 0–100 histogram: exact
 * median, peak and MAD without sorting millions of samples).
 */
export async function gpuUtilSummary(store: MetricStore): Promise<MetricSummary | null> {
  const hist = new Float64Array(256);
  let n = 0;
  for (const b of await store.gpuUtil.window(null, null)) {
    const col = b.util;
    let left = col.length;
    for (const chunk of col.chunks) {
      const len = Math.min(left, chunk.length);
      for (let i = 0; i < len; i++) hist[chunk[i]!]!++;
      left -= len;
      n += len;
      if (left <= 0) break;
    }
  }
  if (n === 0) return null;
  const quantile = (h: Float64Array, total: number, offset = 0): number => {
    // the median of the values v + offset weighted by h[v] (same rule as stats.median)
    const at = (rank: number) => {
      let c = 0;
      for (let v = 0; v < h.length; v++) if ((c += h[v]!) > rank) return v + offset;
      return h.length - 1 + offset;
    };
    return total % 2 ? at((total - 1) / 2) : (at(total / 2 - 1) + at(total / 2)) / 2;
  };
  const med = quantile(hist, n);
  let top = 0;
  for (let v = 0; v < 256; v++) if (hist[v]) top = v;
  // deviations |v − med| in half-units (med may be x.5)
  const dev = new Float64Array(512);
  let sumDev = 0;
  for (let v = 0; v < 256; v++)
    if (hist[v]) {
      const d = Math.abs(v - med);
      dev[Math.round(d * 2)]! += hist[v]!;
      sumDev += d * hist[v]!;
    }
  const mad = quantile(dev, n) / 2;
  return { n, median: med, peak: top, spread: mad > 0 ? 1.4826 * mad : sumDev / n };
}

export interface CompareInput {
  run: CompareRun;
  args: Record<string, unknown> | null;
  startTs: number | null;
  summaries: Map<string, MetricSummary>;
  availability: Record<string, boolean>;
}

export const AVAILABILITY: readonly { key: string; label: string }[] = [
  { key: "metrics", label: "Scalar metrics (metrics.jsonl)" },
  { key: "timeline", label: "Timeline (phases / GPU util)" },
  { key: "dumps", label: "Rollout dumps" },
  { key: "trajectories", label: "Trajectories" },
  { key: "engine_metrics", label: "Engine metrics (SGLang)" },
];

/**
 * Per-store memo of the summaries, keyed on what they are computed from (metrics.jsonl
 * offset, the gpu_util partitions' sizes, the visible dump steps): a warm report only
 * re-stats files. Each store belongs to one run for the life of the process.
 */
const summaryMemo = new WeakMap<MetricStore, { sig: string; value: Map<string, MetricSummary>; warnings: string[] }>();

async function memoSummaries(run: CompareRun, warnings: string[]): Promise<Map<string, MetricSummary>> {
  const [flat, , rids] = await Promise.all([
    run.store.flatSignature(),
    run.store.gpuUtil.files(),
    run.dumps.listRolloutIds().catch(() => null),
  ]);
  const sig = `${flat}|${run.store.gpuUtil.signature}|${rids ? `${rids.train.join(",")};${rids.eval.join(",")}` : "-"}|${run.dumps.skippedDumps?.().length ?? 0}`;
  const hit = summaryMemo.get(run.store);
  if (hit && hit.sig === sig) {
    warnings.push(...hit.warnings);
    return hit.value;
  }
  const own: string[] = [];
  const value = await runSummaries(run, own);
  summaryMemo.set(run.store, { sig, value, warnings: own });
  warnings.push(...own);
  return value;
}

async function collect(run: CompareRun, warnings: string[]): Promise<CompareInput> {
  const meta = run.store.meta();
  const [summaries, metrics, phases, gpu, engine, traj, rids] = await Promise.all([
    memoSummaries(run, warnings),
    run.store.metrics(),
    run.store.phases.hasData(),
    run.store.gpuUtil.hasData(),
    run.store.engine.hasData(),
    run.store.trajectories.hasData(),
    run.dumps.listRolloutIds().catch(() => ({ train: [], eval: [] })),
  ]);
  return {
    run,
    args: meta && hasArgs(meta.args) ? meta.args : null,
    startTs: meta?.start_ts ?? null,
    summaries,
    availability: {
      metrics: metrics.length > 0,
      timeline: phases || gpu,
      dumps: rids.train.length + rids.eval.length > 0,
      trajectories: traj || !!run.hasTrajectories,
      engine_metrics: engine,
    },
  };
}

const finite = (v: number | null | undefined): v is number => typeof v === "number" && Number.isFinite(v);

function kpiRow(key: string, label: string, headline: boolean, sums: (MetricSummary | undefined)[]): KpiRow {
  const medians = sums.map((s) => s?.median ?? null);
  const present = medians.filter(finite);
  const allZero = present.length > 0 && present.every((m) => m === 0);
  const statistic: Statistic = allZero && sums.some((s) => finite(s?.peak) && s.peak !== 0) ? "peak" : "median";
  const values = statistic === "peak" ? sums.map((s) => s?.peak ?? null) : medians;
  const base = values[0] ?? null;
  const delta = values.map((v, i) => (i === 0 || !finite(v) || !finite(base) ? null : v - base));
  const pct = delta.map((d) => (d === null || !finite(base) || base === 0 ? null : (100 * d) / Math.abs(base)));
  return { key, label, statistic, headline, values, delta, pct, n: sums.map((s) => s?.n ?? 0) };
}

export function buildReport(inputs: readonly CompareInput[], warnings: string[] = []): CompareReport {
  const sums = inputs.map((i) => i.summaries);
  const used = new Set<string>();
  const kpis: KpiRow[] = [];
  for (const h of HEADLINE_KPIS) {
    const key = h.sources.find((k) => sums.every((s) => s.has(k))) ?? h.sources.find((k) => sums.some((s) => s.has(k))) ?? h.sources[0]!;
    used.add(key);
    kpis.push(kpiRow(key, h.label, true, sums.map((s) => s.get(key))));
  }
  // every other scalar metric at least two runs have (for two runs: both)
  const counts = new Map<string, number>();
  for (const s of sums) for (const k of s.keys()) counts.set(k, (counts.get(k) ?? 0) + 1);
  const rest = [...counts].filter(([k, c]) => c >= 2 && !used.has(k)).map(([k]) => k).sort();
  for (const key of rest) kpis.push(kpiRow(key, key, false, sums.map((s) => s.get(key))));

  const movers: Mover[] = [];
  for (const row of kpis) {
    const per = sums.map((s) => s.get(row.key));
    const base = per[0];
    if (!base || per.filter(Boolean).length < 2) continue;
    const sp = base.spread;
    const medians = per.map((s) => s?.median ?? null);
    const shifts = medians.map((m, i) => {
      if (i === 0 || !finite(m) || !finite(base.median) || !finite(sp)) return null;
      const d = m - base.median;
      if (sp === 0) return d === 0 ? 0 : null;
      return d / sp;
    });
    let shift: number | null = null;
    for (const s of shifts) if (s !== null && (shift === null || Math.abs(s) > Math.abs(shift))) shift = s;
    movers.push({ key: row.key, label: row.label, shift, shifts, spread: sp, medians });
  }
  movers.sort((a, b) => {
    if (a.shift === null || b.shift === null) return a.shift === null ? (b.shift === null ? cmp(a.key, b.key) : 1) : -1;
    return Math.abs(b.shift) - Math.abs(a.shift) || cmp(a.key, b.key);
  });

  const args = inputs.map((i) => i.args);
  const delta = configDelta(args);
  const items = AVAILABILITY.map((a) => ({ ...a, values: inputs.map((i) => !!i.availability[a.key]) }));
  return {
    baseline: inputs[0]!.run.id,
    runs: inputs.map((i) => ({
      id: i.run.id,
      name: i.run.name,
      start_ts: i.startTs,
      wandb_url: i.args ? wandbUrl(i.args) : null,
      has_args: i.args !== null,
    })),
    kpis,
    config_delta: delta,
    verdict: verdictOf(args, delta),
    availability: { items, changed: items.filter((a) => a.values.some((v) => v !== a.values[0])).map((a) => a.key) },
    movers,
    warnings,
  };
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The report for 2–8 runs, the first being the baseline. */
export async function compareRuns(runs: readonly CompareRun[]): Promise<CompareReport> {
  const warnings: string[] = [];
  const inputs = await Promise.all(runs.map((r) => collect(r, warnings)));
  return buildReport(inputs, warnings);
}
