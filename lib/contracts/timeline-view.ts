/**
 * What the timeline view opens with (docs/views.md 3): its overlay choices, the first being
 * the default when a run has engine series. Zod-free: the view's client code reads it, and
 * so does the server's warm-up (lib/timeline/warm.ts), which loads what the first screen
 * asks for before anyone asks.
 */
export const TIMELINE_OVERLAYS = [
  { id: "num_running_reqs", metric: "sglang_num_running_reqs" },
  { id: "gen_throughput", metric: "sglang_gen_throughput" },
  { id: "token_usage", metric: "sglang_token_usage" },
  { id: "cache_hit_rate", metric: "sglang_cache_hit_rate" },
] as const;
