/** The Rollouts step stat grid (docs/views.md 4.3): eight tiles, `—` when a column is absent. */
import { formatValue, MISSING } from "@/lib/charts/core/format";
import { EVAL_STALENESS, isSingleSampleGroup, NOT_APPLICABLE } from "./columns";
import type { Cell, GroupsResponse, SummaryResponse } from "./types";

export interface StatTile {
  key: string;
  label: string;
  value: string;
  /** Longer explanation for the tile's title attribute. */
  hint: string;
  /** Tile drawn as a warning (e.g. every group has zero reward spread). */
  alert?: boolean;
}

function meanOf(values: Iterable<Cell | undefined>, asBool = false): number | null {
  let sum = 0;
  let n = 0;
  for (const v of values) {
    if (asBool) {
      if (v === null || v === undefined) continue;
      sum += v === true || v === 1 ? 1 : 0;
      n++;
    } else if (typeof v === "number" && Number.isFinite(v)) {
      sum += v;
      n++;
    }
  }
  return n ? sum / n : null;
}

const fmt = (v: number | null) => (v === null ? MISSING : formatValue(v));

/** The reward column the original used: `reward` on eval steps, `raw_reward` on train steps. */
export function rewardColumn(evaluation: boolean): "reward" | "raw_reward" {
  return evaluation ? "reward" : "raw_reward";
}

export function prepareStatGrid(summary: SummaryResponse, groups: GroupsResponse | null, evaluation: boolean): StatTile[] {
  const rows = summary.rows;
  const has = (c: string) => summary.columns.includes(c);
  const col = (c: string) => (has(c) ? rows.map((r) => r[c]) : null);
  const rc = rewardColumn(evaluation);
  const mean = (c: string) => {
    const v = col(c);
    return v ? meanOf(v) : null;
  };
  // truncated: mean over ALL rows as 1/0 (null counts as 0), as the original.
  const truncated = has("truncated") && rows.length ? rows.filter((r) => r.truncated === true).length / rows.length : null;
  const mixed = col("mixed_version");
  let zeroStd = MISSING;
  let zeroAlert = false;
  let zeroHint = "GRPO groups whose samples all got the same reward (no gradient signal) / all groups";
  if (groups && groups.columns.includes("zero_std")) {
    // a group of one sample has no reward spread to measure (eval steps): not counted
    const measured = groups.rows.filter((g) => !isSingleSampleGroup(g));
    const k = measured.filter((g) => g.zero_std === true).length;
    if (groups.rows.length > 0 && measured.length === 0) {
      zeroStd = NOT_APPLICABLE;
      zeroHint = "every group has one sample (n = 1, as on eval steps): a reward std needs two or more, so there is no GRPO signal to judge";
    } else {
      zeroStd = `${k}/${measured.length}`;
      zeroAlert = measured.length > 0 && k === measured.length;
      if (measured.length < groups.rows.length) zeroHint += ` (${groups.rows.length - measured.length} group(s) of one sample not counted)`;
    }
  }
  return [
    { key: "samples", label: "samples", value: String(rows.length), hint: "rows in this step's rollout dump" },
    { key: "reward", label: "reward mean", value: fmt(mean(rc)), hint: `mean of ${rc} over samples that have one` },
    { key: "truncated", label: "truncated frac", value: fmt(truncated), hint: "share of samples cut at the length limit" },
    {
      key: "zero_std",
      label: "zero-std groups",
      value: zeroStd,
      hint: zeroHint,
      alert: zeroAlert,
    },
    { key: "mixed", label: "mixed-version frac", value: fmt(mixed ? meanOf(mixed, true) : null), hint: "share of samples generated across more than one weight version" },
    {
      key: "staleness",
      label: "avg staleness",
      value: evaluation ? NOT_APPLICABLE : fmt(mean("staleness")),
      hint: evaluation ? EVAL_STALENESS : "mean of (step − oldest weight version used), in steps",
    },
    { key: "lp_diff", label: "mean |lp diff|", value: fmt(mean("mean_abs_lp_diff")), hint: "mean over samples of mean |train − rollout log-prob|" },
    { key: "entropy", label: "mean entropy", value: fmt(mean("mean_entropy")), hint: "mean over samples of the mean token entropy" },
  ];
}
