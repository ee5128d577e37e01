/**
 * Advisory rules (docs/api.md 10): computed on request, nothing persisted.
 *
 * Tiering: alarms (stall watchdog, engine alarms, rollout rules — in that order) win; only
 * when there is none do the tuning rules speak (tuning advice on an unhealthy run would
 * point the wrong way).
 */
import { ApiError } from "@/lib/contracts/errors";
import type { MetricStore } from "@/lib/store/telemetry";
import { filesStamp, OPEN_T1 } from "@/lib/store/telemetry";
import { prometheusSourceFor } from "@/lib/prometheus/server";
import { fmt, G, P0, P1, pyFixed, truthy } from "@/lib/advisory/format";
import { getHost } from "@/lib/health/host";
import type { DumpSource } from "@/lib/timeline/dump-source";
import { engineSeries, type EngineSeries } from "@/lib/timeline/engine";
import { metricSeries } from "@/lib/timeline/metrics";
import { phaseSource, type PhaseSource } from "@/lib/timeline/phases";
import { checkWindow } from "@/lib/timeline/window";

export type AdvisoryLevel = "critical" | "warning" | "info";
export interface Advisory {
  level: AdvisoryLevel;
  message: string;
}
export interface MfuSummary {
  latest: number;
  mean: number;
  steps: number;
  peak: number | null;
}

export const STALL_FACTOR = 6.0;
export const STALL_MIN_AGE_S = 1800.0;
export const STALL_MIN_CLOSED = 3;
export const ABORT_RATIO_WARN = 0.05;
export const ABORT_WINDOW_S = 1800.0;
export const ABORT_MIN_REQUESTS = 100.0;
export const KV_BOUND_TOKEN_USAGE = 0.9;
export const KV_BOUND_RUNNING_RATIO = 0.5;
export const HIGH_TOKEN_USAGE = 0.95;
export const ZERO_STD_FRAC_WARN = 0.5;
export const TRUNCATED_FRAC_WARN = 0.25;
export const MFU_KEY = "perf/actor_train_mfu";
export const MFU_PEAK_KEY = "perf/mfu_peak_tflops";
export const MFU_STEP_KEY = "rollout/step";
export const MFU_MIN_STEPS = 3;
export const DEFAULT_LOW_MFU = 0.15;
export const LOW_CONCURRENCY_RATIO = 0.3;
export const LOW_CACHE_HIT_RATE = 0.1;
export const DP_IMBALANCE_MIN_RUNNING = 1.0;
export const DP_IMBALANCE_RATIO = 0.25;
const ENGINE_MAX_POINTS = 2000;

export interface AdvisoryInput {
  store: MetricStore;
  dumps: DumpSource;
  t0: number | null;
  t1: number | null;
  mfu: MfuSummary | null;
  lowMfu: number;
}

const num = (v: unknown): number => (typeof v === "number" ? v : typeof v === "boolean" ? Number(v) : NaN);

export async function mfuSummary(store: MetricStore): Promise<MfuSummary | null> {
  const s = await metricSeries(store, [MFU_KEY, MFU_PEAK_KEY], MFU_STEP_KEY, null, null);
  const steady = s[MFU_KEY]!.y.slice(1).map(num);
  if (steady.length === 0) return null;
  const peakY = s[MFU_PEAK_KEY]!.y;
  return {
    latest: steady[steady.length - 1]!,
    mean: steady.reduce((a, b) => a + b, 0) / steady.length,
    steps: steady.length,
    peak: peakY.length ? num(peakY[peakY.length - 1]) : null,
  };
}

// ---------------------------------------------------------------------------------------
// 10.1 stall watchdog

function median(xs: number[]): number {
  // a native numeric sort orders finite values exactly like the comparator sort
  const s = xs.some(Number.isNaN) ? [...xs].sort((a, b) => a - b) : Float64Array.from(xs).sort();
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Judged over the whole run at `edge`, only for events of the current attempt
 * (t0 ≥ attemptStart). `source` carries the OPEN markers without a closed twin.
 */
export function stallAdvisories(source: PhaseSource, edge: number, attemptStart: number): Advisory[] {
  // open ages first (usually none: then nothing else is needed)
  const ages = new Map<number, number[]>();
  source.blocks.forEach((b, k) => {
    for (const i of source.unmatched[k]!) {
      const t0 = b.t0[i]!;
      if (t0 < attemptStart || b.t1[i] !== OPEN_T1) continue;
      const id = b.name[i]!;
      let l = ages.get(id);
      if (!l) ages.set(id, (l = []));
      l.push(edge - t0);
    }
  });
  if (ages.size === 0) return [];
  const closed = new Map<number, number[]>();
  for (const id of ages.keys()) closed.set(id, []);
  for (const b of source.blocks) {
    const { t0, t1, name } = b;
    for (let i = 0; i < b.n; i++) {
      const a = t0[i]!;
      const z = t1[i]!;
      if (a < attemptStart || z === OPEN_T1) continue;
      const l = closed.get(name[i]!);
      if (l) l.push(z - a);
    }
  }
  const strings = source.blocks[0]!.strings.values;
  const names = [...ages.keys()].map((id) => [strings[id]!, id] as const).sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const out: Advisory[] = [];
  for (const [name, id] of names) {
    const durations = closed.get(id)!;
    if (durations.length < STALL_MIN_CLOSED) continue;
    const typical = median(durations);
    const open = ages.get(id)!;
    let age = -Infinity;
    for (const a of open) age = Math.max(age, a);
    if (!(age > Math.max(STALL_FACTOR * typical, STALL_MIN_AGE_S))) continue;
    const ratio = typical > 0 ? `${pyFixed(age / typical, 0)}x its median duration (${fmt(typical)})` : `while its median duration is ${fmt(typical)}`;
    let message =
      `Phase '${name}' has been open for ${fmt(age)} on ${open.length} rank(s), ${ratio}: ` +
      `the pipeline is stalled, not slow.`;
    if (name === "train_wait")
      message += " Training is starved of rollout data: check the data buffer and engine health.";
    out.push({ level: "critical", message });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// 10.2 engine alarms

function lastTs(series: readonly EngineSeries[]): number {
  let edge = 0;
  for (const s of series) if (s.ts.length) edge = Math.max(edge, s.ts[s.ts.length - 1]!);
  return edge;
}

/** Σ over series, Σ over consecutive pairs whose later ts ≥ since, of max(after − before, 0). */
export function counterDelta(series: readonly EngineSeries[], since: number): number {
  let total = 0;
  for (const s of series)
    for (let i = 1; i < s.ts.length; i++) {
      if (s.ts[i]! < since) continue;
      const d = s.value[i]! - s.value[i - 1]!;
      total += Number.isNaN(d) ? d : Math.max(d, 0);
    }
  return total;
}

/** Max over all values of all series (null when there are none). */
function peakOf(series: readonly EngineSeries[]): number | null {
  let peak: number | null = null;
  for (const s of series) for (const v of s.value) if (peak === null || v > peak) peak = v;
  return peak;
}

/** Plain mean over all values of all series (null when there are none). */
function meanOf(series: readonly EngineSeries[]): number | null {
  let sum = 0;
  let n = 0;
  for (const s of series) {
    for (const v of s.value) sum += v;
    n += s.value.length;
  }
  return n ? sum / n : null;
}

interface EngineFacts {
  peakRunning: number | null;
  tokenUsage: number | null;
}

interface AbortCounts {
  total: number;
  aborted: number;
  runTotal: number;
  runAborted: number;
}

/**
 * Requests and client aborts over the last ABORT_WINDOW_S and over the run, from the
 * whole-run counter series. That reads every engine partition of the run (seconds on a
 * 1024-GPU day), so for collector files the counts are kept across restarts, versioned by
 * the engine files (MetricStore.keptMemo); a Prometheus-backed run asks Prometheus each time.
 */
async function abortCounts(store: MetricStore): Promise<AbortCounts> {
  const compute = async (): Promise<AbortCounts> => {
    const [requests, aborts] = await Promise.all([
      engineSeries(store, "sglang_num_requests_total", null, null, ENGINE_MAX_POINTS, false),
      engineSeries(store, "sglang_num_aborted_requests_total", null, null, ENGINE_MAX_POINTS, false),
    ]);
    const edge = Math.max(lastTs(requests), lastTs(aborts));
    return {
      total: counterDelta(requests, edge - ABORT_WINDOW_S),
      aborted: counterDelta(aborts, edge - ABORT_WINDOW_S),
      runTotal: counterDelta(requests, -Infinity),
      runAborted: counterDelta(aborts, -Infinity),
    };
  };
  return wholeRunFact(store, "aborts", null, null, compute);
}

/**
 * A fact the advisory derives from the whole run's engine series (every engine partition:
 * seconds on a 1024-GPU day). For a run read from the collector's files and asked without
 * a window (the run list's judgment, the abort rule) it is kept across restarts, versioned
 * by the engine files (MetricStore.keptMemo); windowed asks and Prometheus-backed runs
 * compute it each time.
 */
async function wholeRunFact<T>(store: MetricStore, name: string, t0: number | null, t1: number | null, compute: () => Promise<T>): Promise<T> {
  if (t0 !== null || t1 !== null || (await prometheusSourceFor(store))) return compute();
  return store.keptMemo(`advisory.${name}`, filesStamp(await store.engine.files()), compute);
}

async function engineAlarms(input: AdvisoryInput, args: Record<string, unknown>, facts: EngineFacts): Promise<Advisory[]> {
  const { store } = input;
  const out: Advisory[] = [];
  const { total, aborted, runTotal, runAborted } = await abortCounts(store);
  if (total >= ABORT_MIN_REQUESTS && aborted / total > ABORT_RATIO_WARN) {
    let message =
      `${P0(aborted / total)} of engine requests were aborted client-side in the last ${fmt(ABORT_WINDOW_S)} ` +
      `(${pyFixed(aborted, 0)}/${pyFixed(total, 0)}; ${P0(runAborted / runTotal)} over the run): ` +
      `request timeouts are poisoning samples.`;
    const n = args.n_samples_per_prompt;
    if (truthy(n))
      message += ` One aborted sample discards its whole ${G(n)}-sample group, and backfill resubmission amplifies engine load.`;
    out.push({ level: "warning", message });
  }

  const { peakRunning, tokenUsage } = facts;
  const maxRunning = args.sglang_max_running_requests;
  if (tokenUsage !== null && tokenUsage > KV_BOUND_TOKEN_USAGE) {
    if (truthy(maxRunning) && peakRunning !== null && peakRunning < KV_BOUND_RUNNING_RATIO * num(maxRunning)) {
      const mf = args.sglang_mem_fraction_static;
      out.push({
        level: "warning",
        message:
          `KV cache usage is pegged at ${P0(tokenUsage)} while peak concurrency (${pyFixed(peakRunning, 0)}) stays far below ` +
          `--sglang-max-running-requests (${G(maxRunning)}): concurrency is KV-pool-bound, not cap-bound. ` +
          `Raise --sglang-mem-fraction-static${mf !== null && mf !== undefined ? ` (currently ${G(mf)})` : ""}; do NOT lower the request cap.`,
      });
    } else if (tokenUsage > HIGH_TOKEN_USAGE) {
      out.push({
        level: "warning",
        message:
          `KV cache usage is consistently high (${P1(tokenUsage)}): likely a throughput bottleneck; ` +
          `consider more GPUs or a smaller rollout batch.`,
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// 10.3 rollout rules

async function rolloutRules(dumps: DumpSource, args: Record<string, unknown>): Promise<Advisory[]> {
  const { train } = await dumps.listRolloutIds();
  if (train.length === 0) return [];
  const rolloutId = Math.max(...train);
  let groups: Awaited<ReturnType<DumpSource["groups"]>>;
  let summary: Awaited<ReturnType<DumpSource["summary"]>>;
  try {
    [groups, summary] = await Promise.all([dumps.groups(rolloutId, false), dumps.summary(rolloutId, false)]);
  } catch (err) {
    // One bad dump must not take the advisory down: say what is wrong instead of the
    // rollout rules (the message names the file, never its bytes).
    if (ApiError.is(err) && err.code === "corrupt_file") {
      return [{ level: "warning", message: `rollout ${rolloutId} could not be read (${err.message}); its checks are skipped.` }];
    }
    throw err;
  }
  const out: Advisory[] = [];

  const groupRows = groups.rows as readonly Record<string, unknown>[];
  const scored = groupRows.filter((g) => g.reward_mean !== null && g.reward_mean !== undefined);
  const z = scored.filter((g) => g.zero_std === true).length;
  if (scored.length >= 1 && z / scored.length >= ZERO_STD_FRAC_WARN) {
    let message = `${z}/${scored.length} groups in rollout ${rolloutId} have zero reward std: they contribute zero policy gradient.`;
    if (scored.every((g) => Math.abs(num(g.reward_mean)) < 1e-12))
      message += " Every reward is 0, which points at a systematic failure (timeouts, truncation), not task difficulty.";
    out.push({ level: "warning", message });
  }

  const rows = summary.rows as readonly Record<string, unknown>[];
  if (rows.length) {
    const f = rows.reduce((a, r) => a + (r.truncated ? 1 : 0), 0) / rows.length;
    if (f >= TRUNCATED_FRAC_WARN) {
      let message = `${P0(f)} of samples in rollout ${rolloutId} are truncated.`;
      const cap = args.rollout_max_response_len;
      if (truthy(cap))
        message += ` Check --rollout-max-response-len (${G(cap)}): in multi-turn agentic runs the per-turn cap is usually the binding limit, not the context length.`;
      out.push({ level: "warning", message });
    }
  }

  if (summary.columns.includes("alignment_failed")) {
    const n = rows.filter((r) => r.alignment_failed === true).length;
    if (n > 0)
      out.push({
        level: "info",
        message:
          `Per-token columns are blank for ${n} samples in rollout ${rolloutId} because their context-parallel slices ` +
          `could not be placed (the dump predates the cp_rank/cp_size fields); blank means unreadable, not undumped.`,
      });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// 10.4 tuning rules

function routingKnob(args: Record<string, unknown>): string {
  if (truthy(args.use_miles_router))
    return "The miles router routes per engine and --sglang-load-balance-method decides the rank.";
  if (!truthy(args.router_dp_aware))
    return "The router sees one worker per engine; --router-dp-aware makes it route per rank.";
  const policy = truthy(args.sglang_router_policy) ? args.sglang_router_policy : args.router_policy;
  if (policy === "manual")
    return `Manual routing pins each key to a rank via --router-assignment-mode (${G(args.router_assignment_mode)}); min_load spreads by load.`;
  return `--router-policy (${G(policy)}) picks the rank.`;
}

/** Mean running requests per (engine, dp rank): `[addr, rank, mean]`, later parts of a pair win. */
function dpMeans(series: readonly EngineSeries[]): [string, string, number][] {
  const out: [string, string, number][] = [];
  for (const s of series) {
    const rank = s.labels.dp_rank;
    if (rank === undefined || s.value.length === 0) continue;
    out.push([s.addr, rank, s.value.reduce((a, b) => a + b, 0) / s.value.length]);
  }
  return out;
}

function dpImbalance(means: readonly [string, string, number][], args: Record<string, unknown>): Advisory[] {
  const byAddr = new Map<string, Map<string, number>>();
  for (const [addr, rank, mean] of means) {
    let m = byAddr.get(addr);
    if (!m) byAddr.set(addr, (m = new Map<string, number>()));
    m.set(rank, mean);
  }
  const out: Advisory[] = [];
  for (const addr of [...byAddr.keys()].sort()) {
    const m = byAddr.get(addr)!;
    if (m.size < 2) continue;
    const means = [...m.values()];
    const busiest = Math.max(...means);
    const idlest = Math.min(...means);
    if (!(busiest >= DP_IMBALANCE_MIN_RUNNING && idlest < DP_IMBALANCE_RATIO * busiest)) continue;
    const ranks = [...m.entries()].sort((a, b) => Number(a[0]) - Number(b[0]) || (a[0] < b[0] ? -1 : 1));
    const list = ranks.map(([r, v]) => `dp${r}=${pyFixed(v, 1)}`).join(", ");
    out.push({
      level: "warning",
      message:
        `${addr}: dp ranks imbalanced (mean running reqs ${list}): requests pile onto few ranks while others idle. ` +
        routingKnob(args),
    });
  }
  return out;
}

async function tuningRules(input: AdvisoryInput, args: Record<string, unknown>, facts: EngineFacts | null): Promise<Advisory[]> {
  const out: Advisory[] = [];
  const { mfu, lowMfu } = input;
  if (lowMfu > 0 && mfu && mfu.steps >= MFU_MIN_STEPS && mfu.mean < lowMfu) {
    out.push({
      level: "warning",
      message:
        `Model FLOPs utilization averaged ${P1(mfu.mean)} of the device's ${mfu.peak === null ? "unknown" : G(mfu.peak)} TFLOP/s ` +
        `over ${mfu.steps} train steps: the training step is computing slowly, not waiting. The ratio counts actor train ` +
        `time only, so rollout stalls cannot depress it. Usual causes: activation recompute, a parallel split that idles ` +
        `ranks, small or ragged micro-batches.`,
    });
  }
  if (!facts) return out;
  const { store, t0, t1 } = input;
  const maxRunning = args.sglang_max_running_requests;
  const { peakRunning } = facts;
  if (truthy(maxRunning) && peakRunning !== null && peakRunning < LOW_CONCURRENCY_RATIO * num(maxRunning)) {
    out.push({
      level: "info",
      message:
        `Peak engine concurrency (${pyFixed(peakRunning, 0)}) stayed under 30% of --sglang-max-running-requests ` +
        `(${G(maxRunning)}); consider lowering it${truthy(args.colocate) ? " to free memory for training (colocate)" : ""}.`,
    });
  }
  if (!truthy(args.colocate)) {
    const hit = await wholeRunFact(store, "cache-hit", t0, t1, async () => meanOf(await engineSeries(store, "sglang_cache_hit_rate", t0, t1, ENGINE_MAX_POINTS, false)));
    if (hit !== null && hit < LOW_CACHE_HIT_RATE) {
      const mf = args.sglang_mem_fraction_static;
      out.push({
        level: "info",
        message:
          `Prefix cache hit rate is low (${P1(hit)})` +
          (mf !== null && mf !== undefined
            ? `; consider raising --sglang-mem-fraction-static (currently ${G(mf)}) for a bigger KV cache.`
            : "."),
      });
    }
  }
  const means = await wholeRunFact(store, "dp-means", t0, t1, async () => dpMeans(await engineSeries(store, "sglang_num_running_reqs", t0, t1, ENGINE_MAX_POINTS, true)));
  out.push(...dpImbalance(means, args));
  return out;
}

// ---------------------------------------------------------------------------------------

export async function computeAdvisories(input: AdvisoryInput): Promise<Advisory[]> {
  const { store, dumps, t0, t1 } = input;
  const meta = store.meta();
  const args = meta?.args ?? {};
  const range = await store.timeRange();
  const alarms: Advisory[] = [];
  if (range) {
    const start = meta?.start_ts ?? -Infinity;
    // A whole-run scan of every phase partition: kept across restarts for a closed run.
    const version = `${filesStamp(await store.phases.files())}|${range[1]}|${start}`;
    alarms.push(...(await store.keptMemo("advisory.stall", version, async () => stallAdvisories(await phaseSource(store, null), range[1], start))));
  }
  let facts: EngineFacts | null = null;
  if (await store.engine.hasData()) {
    facts = await wholeRunFact(store, "facts", t0, t1, async () => {
      const [running, usage] = await Promise.all([
        engineSeries(store, "sglang_num_running_reqs", t0, t1, ENGINE_MAX_POINTS, false),
        engineSeries(store, "sglang_token_usage", t0, t1, ENGINE_MAX_POINTS, false),
      ]);
      return { peakRunning: peakOf(running), tokenUsage: meanOf(usage) };
    });
    alarms.push(...(await engineAlarms(input, args, facts)));
  }
  alarms.push(...(await rolloutRules(dumps, args)));
  // 10.5 host rules (rlboard): only runs with collector --host-telemetry have dashboard/host/
  alarms.push(...(await getHost(store.fs, { max_points: 2 })).advisories);
  if (alarms.length) return alarms;
  return tuningRules(input, args, facts);
}

/** `GET /api/advisory` body. */
export async function getAdvisory(
  run: { store: MetricStore; dumps: DumpSource; settings: { lowMfuThreshold: number } },
  q: { t0?: number | null; t1?: number | null },
): Promise<{ advisories: Advisory[]; mfu: MfuSummary | null }> {
  checkWindow(q.t0, q.t1);
  const mfu = await mfuSummary(run.store);
  const advisories = await computeAdvisories({
    store: run.store,
    dumps: run.dumps,
    t0: q.t0 ?? null,
    t1: q.t1 ?? null,
    mfu,
    lowMfu: run.settings.lowMfuThreshold,
  });
  return { advisories, mfu };
}
