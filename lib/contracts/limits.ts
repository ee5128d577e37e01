/**
 * Maxima of every size parameter (docs/api.md "Limits"). A value beyond its maximum is a
 * 400 naming the parameter and the maximum — the request parsed, its size is refused.
 * Each is generous: at least 10× what the dashboard itself asks for (in brackets).
 *
 * Safe everywhere (zod-free constants): the client reads them to stay inside.
 */
export const LIMITS = {
  /** /api/timeline/gpu, /api/timeline/engine_series `max_points` [4000]. */
  max_points: 40_000,
  /** /api/timeline/heatmap, /api/timeline/fleet `x_buckets` (the reference's own range) [≤ 1200]. */
  x_buckets: 4000,
  /** /api/timeline/outliers `top_k` (the reference's own range) [8]. */
  top_k: 256,
  /** /api/rollout/…/tokens: `end − max(start, 0)` when `end` is given [32 768]. */
  token_window: 327_680,
  /** `lanes` grammar, characters [≤ 100]. */
  lanes_chars: 4096,
  /** /api/metrics: keys in one request [≤ 12]. */
  metric_keys: 256,
  /** /api/runs `q`, characters. */
  runs_q_chars: 200,
} as const;

/** Bounds of the export options (CLI flags and `GET /api/runs/{id}/export` query). */
export const EXPORT_LIMITS = {
  samples_per_step: 16,
  max_lanes: 512,
  /** Steps exported at most (a range wider than this is refused, not truncated). */
  steps: 64,
  /** GPU samples per lane kept for the utilization lanes (min/max downsampled, docs/api.md 8.4). */
  lane_points: 1500,
  /** Fleet overview columns when the run has more lanes than `max_lanes`. */
  fleet_buckets: 800,
} as const;

export const DEFAULT_SAMPLES_PER_STEP = 4;
export const DEFAULT_MAX_LANES = 64;
