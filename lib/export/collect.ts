/**
 * The offline report's data (docs/export.md): every part is the answer of the lib
 * function its API route calls (docs/api.md 9.2) — meta, metrics, phases, GPU lanes or
 * the fleet overview, advisory, rollout summary/groups, sample messages/tokens — so the
 * report never holds a second computation of any number. What fails to load (a torn
 * line, a half-written dump) is left out and named in `incomplete`.
 */
import { axisForKey } from "@/lib/charts/metric-catalog";
import { LIMITS } from "@/lib/contracts/limits";
import {
  EXPORT_LIMITS,
  REPORT_SCHEMA,
  type Report,
  type ReportIncomplete,
  type ReportOptions,
  type ReportSample,
  type ReportUtilization,
  type SamplePick,
} from "@/lib/contracts/report";
import type { GetMetricsResponse } from "@/lib/contracts/telemetry";
import { getRolloutGroups, getRolloutSummary, getSampleMessages, getSampleTokens } from "@/lib/rollout";
import type { DumpReader, SummaryTable } from "@/lib/store/dumps";
import { getAdvisory, getFleet, getGpu, getMeta, getMetrics, getPhases, getTopology, type TelemetryRun } from "@/lib/timeline/api";
import { tornFiles } from "@/lib/export/torn";
import { RLBOARD_VERSION } from "@/lib/export/version";

export interface ExportRun extends TelemetryRun {
  id: string;
  name: string;
  dir: string;
  dumps: DumpReader;
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/**
 * The samples of one step the report carries (docs/export.md "Samples"): best, worst and
 * median reward, and the most drifting (largest mean |lp_diff|); more than four are filled
 * with evenly spaced reward quantiles. A sample picked twice is listed once with both picks.
 */
export function pickSamples(summary: SummaryTable, n: number): { sample_index: number; picks: SamplePick[] }[] {
  if (n <= 0) return [];
  const rows = summary.rows.filter((r) => r.sample_index !== null);
  const rewardCol = summary.evaluation ? "reward" : "raw_reward";
  const rewarded = rows.filter((r) => finite(r[rewardCol]));
  const byReward = [...rewarded].sort((a, b) => (a[rewardCol] as number) - (b[rewardCol] as number) || a.sample_index! - b.sample_index!);
  const out = new Map<number, SamplePick[]>();
  const add = (idx: number | null | undefined, pick: SamplePick) => {
    if (idx === null || idx === undefined) return;
    const picks = out.get(idx);
    if (picks) picks.push(pick);
    else if (out.size < n) out.set(idx, [pick]);
  };
  if (byReward.length) {
    add(byReward[byReward.length - 1]!.sample_index, "best");
    add(byReward[0]!.sample_index, "worst");
    add(byReward[Math.floor((byReward.length - 1) / 2)]!.sample_index, "median");
  }
  let drift: (typeof rows)[number] | null = null;
  for (const r of rows) if (finite(r.mean_abs_lp_diff) && (!drift || r.mean_abs_lp_diff > (drift.mean_abs_lp_diff as number))) drift = r;
  if (drift) add(drift.sample_index, "most_drifting");
  const pool = byReward.length ? byReward : rows;
  for (let k = 1; out.size < Math.min(n, pool.length) && k <= pool.length; k++) {
    // evenly spaced quantiles: 1/2, 1/4, 3/4, 1/8, … of the reward order
    const level = 2 ** Math.ceil(Math.log2(k + 1));
    const j = 2 * (k - level / 2) + 1;
    const at = Math.min(pool.length - 1, Math.floor((j / level) * pool.length));
    const idx = pool[at]!.sample_index!;
    if (!out.has(idx)) out.set(idx, ["quantile"]);
  }
  for (const r of pool) {
    if (out.size >= n) break;
    if (!out.has(r.sample_index!)) out.set(r.sample_index!, ["quantile"]);
  }
  return [...out].map(([sample_index, picks]) => ({ sample_index, picks }));
}

/** Train steps to export: the `--steps` range, else the latest EXPORT_LIMITS.steps. */
export function selectSteps(train: readonly number[], range: ReportOptions["steps"], incomplete: ReportIncomplete[]): number[] {
  if (range) return train.filter((s) => s >= range[0] && s <= range[1]);
  if (train.length <= EXPORT_LIMITS.steps) return [...train];
  incomplete.push({
    what: "rollout steps",
    reason: `${train.length} train steps; exported the latest ${EXPORT_LIMITS.steps} (choose others with --steps A-B)`,
  });
  return train.slice(-EXPORT_LIMITS.steps);
}

/** `/api/metrics` for every scalar key, each key on the step axis the Metrics view reads it on (docs/views.md 2.2). */
async function allMetrics(run: ExportRun, keys: readonly string[]): Promise<{ metrics: GetMetricsResponse; axes: Record<string, string> }> {
  const byAxis = new Map<string, string[]>();
  const axes: Record<string, string> = {};
  for (const k of keys) {
    const axis = axisForKey(k);
    axes[k] = axis;
    const list = byAxis.get(axis);
    if (list) list.push(k);
    else byAxis.set(axis, [k]);
  }
  const metrics: GetMetricsResponse = {};
  for (const [axis, list] of byAxis)
    for (let i = 0; i < list.length; i += LIMITS.metric_keys)
      Object.assign(metrics, await getMetrics(run.store, run.dumps, { keys: list.slice(i, i + LIMITS.metric_keys).join(","), x: axis }));
  return { metrics, axes };
}

export async function buildReport(run: ExportRun, options: ReportOptions, now: Date = new Date()): Promise<Report> {
  const incomplete: ReportIncomplete[] = [];
  const absent: Record<string, string> = {};
  const meta = await getMeta(run);

  let metrics: GetMetricsResponse = {};
  let axes: Record<string, string> = {};
  if (meta.metric_keys.length === 0) absent.metrics = "no scalar metrics: the run has no dashboard/metrics.jsonl rows and no rollout dumps";
  else {
    try {
      ({ metrics, axes } = await allMetrics(run, meta.metric_keys));
    } catch (err) {
      incomplete.push({ what: "metrics", reason: message(err) });
    }
  }

  let phases: Report["phases"] = null;
  let utilization: ReportUtilization | null = null;
  if (!meta.capabilities.has_timeline) absent.utilization = "no compute timeline: the run has no phases or gpu_util streams";
  else {
    try {
      const topology = await getTopology(run.store);
      if (topology.lanes.length <= options.max_lanes) {
        const gpu = await getGpu(run.store, { max_points: EXPORT_LIMITS.lane_points });
        phases = await getPhases(run.store, {});
        utilization = { kind: "lanes", topology, gpu };
      } else {
        const fleet = await getFleet(run.store, { x_buckets: EXPORT_LIMITS.fleet_buckets });
        utilization = { kind: "fleet", lanes: topology.lanes.length, fleet };
        absent.lanes = `${topology.lanes.length} GPU lanes is more than --max-lanes ${options.max_lanes}: the fleet overview is shown instead`;
      }
    } catch (err) {
      incomplete.push({ what: "compute utilization", reason: message(err) });
    }
  }

  let advisory: Report["advisory"] = null;
  try {
    advisory = await getAdvisory(run, {});
  } catch (err) {
    incomplete.push({ what: "advisory", reason: message(err) });
  }

  const rollout: Report["rollout"] = {};
  const samples: Report["samples"] = {};
  const train = meta.rollout_ids.train;
  if (train.length === 0) absent.rollout = "no rollout dumps: the run has no rollout_data/*.pt";
  else {
    const steps = selectSteps(train, options.steps, incomplete);
    if (steps.length === 0) absent.rollout = `no train step in --steps ${options.steps!.join("-")} (the run has ${train[0]}–${train[train.length - 1]})`;
    for (const step of steps) {
      let summary: SummaryTable;
      try {
        summary = await getRolloutSummary(run.dumps, step, false);
        rollout[String(step)] = { summary, groups: await getRolloutGroups(run.dumps, step, false) };
      } catch (err) {
        incomplete.push({ what: `rollout step ${step}`, reason: message(err) });
        continue;
      }
      const list: ReportSample[] = [];
      for (const { sample_index, picks } of pickSamples(summary, options.samples_per_step)) {
        const s: ReportSample = { sample_index, picks, messages: null, tokens: null, errors: [] };
        try {
          s.messages = (await getSampleMessages(run.dumps, step, sample_index, false)) as ReportSample["messages"];
        } catch (err) {
          s.errors.push(`conversation: ${message(err)}`);
        }
        try {
          s.tokens = await getSampleTokens(run.dumps, step, sample_index, { start: 0, eval: false });
        } catch (err) {
          s.errors.push(`tokens: ${message(err)}`);
          incomplete.push({ what: `step ${step} sample ${sample_index} tokens`, reason: message(err) });
        }
        list.push(s);
      }
      samples[String(step)] = list;
    }
  }

  // What the readers skipped (after the reads above, which is when they find it).
  for (const d of run.dumps.skippedDumps()) if (!incomplete.some((i) => i.reason.startsWith(d.file))) incomplete.push({ what: d.file, reason: d.reason });
  for (const [stream, n] of Object.entries(run.store.corruptLines()))
    if (n > 0) incomplete.push({ what: `${stream} stream`, reason: `${n} corrupt line${n === 1 ? "" : "s"} skipped` });
  for (const f of tornFiles(run.dir)) incomplete.push({ what: f, reason: "torn last line (no trailing newline): the incomplete record is left out" });

  return {
    schema: REPORT_SCHEMA,
    rlboard_version: RLBOARD_VERSION,
    generated_at: now.toISOString(),
    run: { id: run.id, name: meta.run_name ?? run.name, args: run.store.meta()?.args ?? null },
    options,
    meta,
    metrics,
    metric_axes: axes,
    phases,
    utilization,
    advisory,
    rollout,
    samples,
    absent,
    incomplete,
  };
}
