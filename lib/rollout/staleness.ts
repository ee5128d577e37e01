/**
 * Token-weighted staleness of one step (docs/api.md 9.2 `GET /api/rollout/{id}/drift`,
 * `staleness` part; docs/views.md 4.6). A sample's staleness is the trainer version that
 * consumed it (the rollout id) minus its oldest weight version — the summary's
 * `staleness` column (docs/api.md 3.1). Weighted by response length, a histogram shows
 * how many *tokens* were trained stale, which is what the loss sees; staleness vs
 * response length exposes the short-rollout bias of discard-and-requeue.
 *
 * Eval steps and steps whose samples record no numeric weight version answer
 * `available: false` with the reason, never −1.
 */
import type { SummaryRow } from "@/lib/store/dumps";

export interface StalenessAnswer {
  available: boolean;
  reason: string | null;
  samples: number;
  tokens: number;
  mean: number | null;
  token_weighted_mean: number | null;
  max: number | null;
  /** `by_sample[s]` / `by_token[s]`: samples / response tokens with staleness s (0 … max). */
  by_sample: number[];
  by_token: number[];
  /** Stalest samples first (up to 20). */
  worst: { sample_index: number; staleness: number; response_length: number }[];
  /** Scatter, column-wise: one entry per sample with a staleness. */
  scatter: { response_length: number[]; staleness: number[]; sample_index: number[] };
  /** Mean staleness per response-length bin [lo, hi). */
  by_length: { lo: number; hi: number; samples: number; mean: number | null }[];
}

const LENGTH_BINS = 10;

export function emptyStaleness(reason: string): StalenessAnswer {
  return {
    available: false,
    reason,
    samples: 0,
    tokens: 0,
    mean: null,
    token_weighted_mean: null,
    max: null,
    by_sample: [],
    by_token: [],
    worst: [],
    scatter: { response_length: [], staleness: [], sample_index: [] },
    by_length: [],
  };
}

type Row = Pick<SummaryRow, "sample_index" | "staleness" | "response_length">;

export function computeStaleness(rows: readonly Row[], evaluation: boolean): StalenessAnswer {
  if (evaluation) return emptyStaleness("eval step: evaluation samples are not consumed by the trainer, so they have no staleness");
  const used = rows.filter((r) => r.staleness !== null && Number.isFinite(r.staleness)) as (Row & { staleness: number })[];
  if (used.length === 0) return emptyStaleness(rows.length ? "no numeric weight versions recorded in this step's samples" : "no samples");
  let max = 0;
  let sum = 0;
  let tsum = 0;
  let tokens = 0;
  for (const r of used) {
    const s = Math.max(0, r.staleness);
    if (s > max) max = s;
    sum += s;
    tsum += s * r.response_length;
    tokens += r.response_length;
  }
  const bySample = new Array<number>(max + 1).fill(0);
  const byToken = new Array<number>(max + 1).fill(0);
  for (const r of used) {
    const s = Math.max(0, r.staleness);
    bySample[s] = (bySample[s] as number) + 1;
    byToken[s] = (byToken[s] as number) + r.response_length;
  }
  const maxLen = used.reduce((m, r) => Math.max(m, r.response_length), 0);
  const width = Math.max(1, Math.ceil((maxLen + 1) / LENGTH_BINS));
  const bins = Array.from({ length: Math.ceil((maxLen + 1) / width) }, (_, i) => ({ lo: i * width, hi: (i + 1) * width, n: 0, s: 0 }));
  for (const r of used) {
    const b = bins[Math.floor(r.response_length / width)];
    if (b) {
      b.n++;
      b.s += Math.max(0, r.staleness);
    }
  }
  const worst = [...used]
    .sort((a, b) => b.staleness - a.staleness || b.response_length - a.response_length || (a.sample_index ?? 0) - (b.sample_index ?? 0))
    .slice(0, 20)
    .map((r) => ({ sample_index: r.sample_index ?? -1, staleness: Math.max(0, r.staleness), response_length: r.response_length }));
  return {
    available: true,
    reason: null,
    samples: used.length,
    tokens,
    mean: sum / used.length,
    token_weighted_mean: tokens > 0 ? tsum / tokens : null,
    max,
    by_sample: bySample,
    by_token: byToken,
    worst,
    scatter: {
      response_length: used.map((r) => r.response_length),
      staleness: used.map((r) => Math.max(0, r.staleness)),
      sample_index: used.map((r) => r.sample_index ?? -1),
    },
    by_length: bins.map((b) => ({ lo: b.lo, hi: b.hi, samples: b.n, mean: b.n ? b.s / b.n : null })),
  };
}
