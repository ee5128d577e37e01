/**
 * Which SGLang metrics a run's `engine_series` stream carries (docs/formats.md §4.7, §6.5):
 * the one list the collector's scraper filters by and the Prometheus history source reads.
 * Names are normalised (`sglang:x` → `sglang_x`).
 */

/** docs/formats.md §6.5, in order. */
export const SGLANG_SPEC_WHITELIST = [
  "sglang_num_running_reqs",
  "sglang_num_queue_reqs",
  "sglang_gen_throughput",
  "sglang_token_usage",
  "sglang_cache_hit_rate",
  "sglang_num_prefill_prealloc_queue_reqs",
  "sglang_num_prefill_inflight_queue_reqs",
  "sglang_num_decode_prealloc_queue_reqs",
  "sglang_num_decode_transfer_queue_reqs",
  "sglang_kv_transfer_speed_gb_s",
  "sglang_kv_transfer_latency_ms",
  "sglang_prompt_tokens_total",
  "sglang_generation_tokens_total",
  "sglang_num_requests_total",
  "sglang_num_aborted_requests_total",
  "sglang_time_to_first_token_seconds_sum",
  "sglang_time_to_first_token_seconds_count",
  "sglang_inter_token_latency_seconds_sum",
  "sglang_inter_token_latency_seconds_count",
  "sglang_time_per_output_token_seconds_sum",
  "sglang_time_per_output_token_seconds_count",
  "sglang_e2e_request_latency_seconds_sum",
  "sglang_e2e_request_latency_seconds_count",
] as const;

/**
 * What current SGLang emits instead of names the spec list still carries: the prefill
 * prealloc queue was renamed to the bootstrap queue, and the KV-transfer gauges became
 * histograms (only their `_sum`/`_count` are useful as series).
 */
export const SGLANG_CURRENT_ADDITIONS = [
  "sglang_num_prefill_bootstrap_queue_reqs",
  "sglang_kv_transfer_speed_gb_s_sum",
  "sglang_kv_transfer_speed_gb_s_count",
  "sglang_kv_transfer_latency_ms_sum",
  "sglang_kv_transfer_latency_ms_count",
] as const;

/** The collector's default `--sglang-metrics`. */
export const SGLANG_DEFAULT_WHITELIST: readonly string[] = [...SGLANG_SPEC_WHITELIST, ...SGLANG_CURRENT_ADDITIONS];

/** The labels an engine record keeps; every other label is dropped. */
export const SGLANG_KEPT_LABELS: ReadonlySet<string> = new Set(["engine_type", "dp_rank"]);

/**
 * The histogram families: the whitelist keeps their `_sum`/`_count`; a history source that
 * holds the buckets too (Prometheus) computes quantiles from `_bucket`. The KV-transfer size
 * histogram is only read there.
 */
export const SGLANG_HISTOGRAMS = [
  "sglang_time_to_first_token_seconds",
  "sglang_inter_token_latency_seconds",
  "sglang_time_per_output_token_seconds",
  "sglang_e2e_request_latency_seconds",
  "sglang_kv_transfer_speed_gb_s",
  "sglang_kv_transfer_latency_ms",
  "sglang_kv_transfer_total_mb",
] as const;

const HISTOGRAM_PART = /_(?:sum|count)$/;

/** The raw names read from a Prometheus history: the whitelist's gauges and counters and each histogram's sum, count and buckets. */
export const SGLANG_HISTORY_METRICS: readonly string[] = [
  ...SGLANG_DEFAULT_WHITELIST.filter((n) => !HISTOGRAM_PART.test(n)),
  ...SGLANG_HISTOGRAMS.flatMap((h) => [`${h}_sum`, `${h}_count`, `${h}_bucket`]),
];
