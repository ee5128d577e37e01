import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openMetricStore } from "@/lib/store/telemetry";
import { RunBuilder, type EngineRow } from "@/lib/store/telemetry/testing";
import { engineMetricNames, engineSeries } from "@/lib/timeline/engine";
import { SGLANG_FIXTURES } from "@/lib/testing/fixtures";

const SGLANG = SGLANG_FIXTURES;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function storeWith(rows: EngineRow[]) {
  const b = new RunBuilder().engine(...rows);
  dirs.push(b.runDir);
  return openMetricStore(b.runDir, { follow: false, statIntervalMs: 0 });
}
const A = "http://10.0.0.1:15000";
const row = (ts: number, metric: string, value: number, labels: Record<string, string> = {}, addr = A): EngineRow => ({
  ts,
  addr,
  metric,
  labels,
  value,
});

describe("engine series: shared timestamps", () => {
  it("gives series scraped on the same ticks one timestamps array, and others their own", async () => {
    const B = "http://10.0.0.2:15000";
    const C = "http://10.0.0.3:15000";
    const rows: EngineRow[] = [];
    for (let t = 0; t < 50; t++) {
      rows.push(row(100 + 2 * t, "sglang_num_running_reqs", t, {}, A), row(100 + 2 * t, "sglang_num_running_reqs", 2 * t, {}, B));
      // C is scraped half a second later from tick 20 on
      rows.push(row(100 + 2 * t + (t >= 20 ? 0.5 : 0), "sglang_num_running_reqs", 3 * t, {}, C));
    }
    const store = storeWith(rows);
    for (const maxPoints of [2000, 10]) {
      const s = await engineSeries(store, "sglang_num_running_reqs", null, null, maxPoints, false);
      expect(s.map((x) => x.addr)).toEqual([A, B, C]);
      expect(s[1]!.ts).toBe(s[0]!.ts);
      expect(s[2]!.ts).not.toBe(s[0]!.ts);
      expect(s[2]!.ts).not.toEqual(s[0]!.ts);
      expect(s[0]!.ts).toHaveLength(maxPoints === 10 ? 10 : 50);
      expect(s[1]!.value).toEqual(s[0]!.value.map((v) => 2 * v));
      expect(JSON.parse(JSON.stringify(s))).toEqual(s.map((x) => ({ ...x, ts: [...x.ts] })));
    }
  });
});

describe("engine series: dp fold and derivations", () => {
  it("sums dp ranks per scrape tick before differencing a counter (80/s)", async () => {
    const store = storeWith([
      row(100, "sglang_generation_tokens_total", 1000, { dp_rank: "0" }),
      row(100, "sglang_generation_tokens_total", 2000, { dp_rank: "1" }),
      row(102, "sglang_generation_tokens_total", 1100, { dp_rank: "0" }),
      row(102, "sglang_generation_tokens_total", 2060, { dp_rank: "1" }),
    ]);
    const s = await engineSeries(store, "sglang_generation_tokens_per_s", null, null, 2000, false);
    expect(s).toEqual([{ addr: A, labels: {}, ts: [102], value: [80] }]);
    const perRank = await engineSeries(store, "sglang_generation_tokens_per_s", null, null, 2000, true);
    expect(perRank.map((p) => [p.labels, p.value])).toEqual([
      [{ dp_rank: "0" }, [50]],
      [{ dp_rank: "1" }, [30]],
    ]);
  });

  it("derives histogram interval means as Δsum/Δcount over folded ranks (11/5)", async () => {
    const store = storeWith([
      row(10, "sglang_time_to_first_token_seconds_sum", 1, { dp_rank: "0" }),
      row(10, "sglang_time_to_first_token_seconds_sum", 2, { dp_rank: "1" }),
      row(10, "sglang_time_to_first_token_seconds_count", 1, { dp_rank: "0" }),
      row(10, "sglang_time_to_first_token_seconds_count", 1, { dp_rank: "1" }),
      row(12, "sglang_time_to_first_token_seconds_sum", 9, { dp_rank: "0" }),
      row(12, "sglang_time_to_first_token_seconds_sum", 5, { dp_rank: "1" }),
      row(12, "sglang_time_to_first_token_seconds_count", 5, { dp_rank: "0" }),
      row(12, "sglang_time_to_first_token_seconds_count", 2, { dp_rank: "1" }),
      // idle interval: no completions → a gap, not a point
      row(14, "sglang_time_to_first_token_seconds_sum", 9, { dp_rank: "0" }),
      row(14, "sglang_time_to_first_token_seconds_sum", 5, { dp_rank: "1" }),
      row(14, "sglang_time_to_first_token_seconds_count", 5, { dp_rank: "0" }),
      row(14, "sglang_time_to_first_token_seconds_count", 2, { dp_rank: "1" }),
    ]);
    const s = await engineSeries(store, "sglang_ttft_mean_s", null, null, 2000, false);
    expect(s).toEqual([{ addr: A, labels: {}, ts: [12], value: [11 / 5] }]);
  });

  it("averages the intensive gauges and sums the others", async () => {
    const store = storeWith([
      row(1, "sglang_token_usage", 0.2, { dp_rank: "0" }),
      row(1, "sglang_token_usage", 0.4, { dp_rank: "1" }),
      row(1, "sglang_num_running_reqs", 3, { dp_rank: "0" }),
      row(1, "sglang_num_running_reqs", 4, { dp_rank: "1" }),
    ]);
    expect((await engineSeries(store, "sglang_token_usage", null, null, 2000, false))[0]!.value[0]).toBeCloseTo(0.3, 12);
    expect((await engineSeries(store, "sglang_num_running_reqs", null, null, 2000, false))[0]!.value).toEqual([7]);
  });

  it("leaves a gap on a counter reset (engine restart) and on duplicate ts", async () => {
    const store = storeWith([
      row(0, "sglang_num_requests_total", 10),
      row(2, "sglang_num_requests_total", 20),
      row(4, "sglang_num_requests_total", 5),
      row(6, "sglang_num_requests_total", 9),
    ]);
    const [s] = await engineSeries(store, "sglang_requests_per_s", null, null, 2000, false);
    expect(s!.ts).toEqual([2, 6]);
    expect(s!.value).toEqual([5, 2]);
  });

  it("omits parts with fewer than two points and returns [] for an unknown metric", async () => {
    const store = storeWith([row(0, "sglang_num_requests_total", 10), row(0, "sglang_gen_throughput", 1)]);
    expect(await engineSeries(store, "sglang_requests_per_s", null, null, 2000, false)).toEqual([]);
    expect(await engineSeries(store, "no_such_metric", null, null, 2000, false)).toEqual([]);
  });

  it("splits parts by (addr, labels) sorted by addr then canonical labels", async () => {
    const store = storeWith([
      row(1, "sglang_num_queue_reqs", 1, { engine_type: "prefill" }, "http://b:1"),
      row(1, "sglang_num_queue_reqs", 2, { engine_type: "decode" }, "http://b:1"),
      row(1, "sglang_num_queue_reqs", 3, {}, "http://a:1"),
    ]);
    const s = await engineSeries(store, "sglang_num_queue_reqs", null, null, 2000, false);
    expect(s.map((p) => [p.addr, p.labels, p.value[0]])).toEqual([
      ["http://a:1", {}, 3],
      ["http://b:1", { engine_type: "decode" }, 2],
      ["http://b:1", { engine_type: "prefill" }, 1],
    ]);
  });

  it("stride-downsamples to max_points keeping both ends", async () => {
    const store = storeWith(Array.from({ length: 11 }, (_, i) => row(i, "sglang_gen_throughput", i)));
    const [s] = await engineSeries(store, "sglang_gen_throughput", null, null, 4, false);
    expect(s!.ts).toEqual([0, 3, 6, 10]);
  });

  it("windows the raw rows before deriving", async () => {
    const store = storeWith([0, 2, 4, 6].map((t) => row(t, "sglang_num_requests_total", t * 10)));
    const [s] = await engineSeries(store, "sglang_requests_per_s", 2, 6, 2000, false);
    expect(s!.ts).toEqual([4, 6]);
  });
});

// ---------------------------------------------------------------------------------------
// current SGLang /metrics bodies (fixtures/sglang), scraped like the collector does

const WHITELIST = [
  "sglang_num_running_reqs", "sglang_num_queue_reqs", "sglang_gen_throughput", "sglang_token_usage",
  "sglang_cache_hit_rate", "sglang_num_prefill_prealloc_queue_reqs", "sglang_num_prefill_inflight_queue_reqs",
  "sglang_num_decode_prealloc_queue_reqs", "sglang_num_decode_transfer_queue_reqs", "sglang_kv_transfer_speed_gb_s",
  "sglang_kv_transfer_latency_ms", "sglang_prompt_tokens_total", "sglang_generation_tokens_total",
  "sglang_num_requests_total", "sglang_num_aborted_requests_total", "sglang_time_to_first_token_seconds_sum",
  "sglang_time_to_first_token_seconds_count", "sglang_inter_token_latency_seconds_sum",
  "sglang_inter_token_latency_seconds_count", "sglang_time_per_output_token_seconds_sum",
  "sglang_time_per_output_token_seconds_count", "sglang_e2e_request_latency_seconds_sum",
  "sglang_e2e_request_latency_seconds_count",
];

function scrape(text: string, ts: number, addr: string): EngineRow[] {
  const rows: EngineRow[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const name = m[1]!.replace(/:/g, "_");
    if (!WHITELIST.includes(name)) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      if (l[1] === "engine_type" || l[1] === "dp_rank") labels[l[1]] = l[2]!;
    const v = m[3]!;
    const value = v === "+Inf" ? Infinity : v === "-Inf" ? -Infinity : Number(v);
    rows.push({ ts, addr, metric: name, labels, value });
  }
  return rows;
}

describe("engine series over current SGLang output (fixtures/sglang)", () => {
  const t0 = fs.readFileSync(path.join(SGLANG, "engine_direct_dp4.txt"), "utf8");
  const t1 = fs.readFileSync(path.join(SGLANG, "engine_direct_dp4_later.txt"), "utf8");
  const rows = [...scrape(t0, 1000.0, A), ...scrape(t1, 1002.0, A)];

  it("scrapes 49 records per tick", () => {
    expect(rows.length).toBe(98);
  });

  it("lists the README's catalog", async () => {
    expect(await engineMetricNames(storeWith(rows))).toEqual([
      "sglang_aborted_requests_per_s", "sglang_cache_hit_rate", "sglang_e2e_latency_mean_s", "sglang_gen_throughput",
      "sglang_generation_tokens_per_s", "sglang_inter_token_latency_mean_s", "sglang_num_decode_prealloc_queue_reqs",
      "sglang_num_decode_transfer_queue_reqs", "sglang_num_prefill_inflight_queue_reqs", "sglang_num_queue_reqs",
      "sglang_num_running_reqs", "sglang_prompt_tokens_per_s", "sglang_requests_per_s", "sglang_token_usage",
      "sglang_ttft_mean_s",
    ]);
  });

  const close = (got: number | undefined, want: number) =>
    expect(Math.abs(got! - want)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(want)));

  it.each([
    ["sglang_num_running_reqs", [239.0, 238.0]],
    ["sglang_num_queue_reqs", [2.0, 1.0]],
    ["sglang_gen_throughput", [11823.940923597962, 11827.933443144848]],
    ["sglang_token_usage", [0.2946987824498255, 0.29704048729275745]],
    ["sglang_cache_hit_rate", [0.21428571428571427, 0.3924731182795699]],
  ])("folds gauge %s per tick (sum; mean for intensive)", async (metric, want) => {
    const [s, ...rest] = await engineSeries(storeWith(rows), metric, null, null, 2000, false);
    expect(rest).toEqual([]);
    expect(s!.labels).toEqual({ engine_type: "unified" });
    expect(s!.ts).toEqual([1000, 1002]);
    close(s!.value[0], want[0]!);
    close(s!.value[1], want[1]!);
  });

  it.each([
    ["sglang_prompt_tokens_per_s", 3812.0],
    ["sglang_generation_tokens_per_s", 11798.5],
    ["sglang_requests_per_s", 5.0],
    ["sglang_aborted_requests_per_s", 0.0],
    ["sglang_ttft_mean_s", 1.3775487237532313],
    ["sglang_inter_token_latency_mean_s", 0.020799600760913618],
    ["sglang_e2e_latency_mean_s", 163.77192365514347],
  ])("derives %s from the summed is_streaming rows", async (metric, want) => {
    const series = await engineSeries(storeWith(rows), metric, null, null, 2000, false);
    expect(series.length).toBe(1);
    expect(series[0]!.ts).toEqual([1002]);
    close(series[0]!.value[0], want);
  });

  it("has no time_per_output_token series (inputs absent in current SGLang)", async () => {
    expect(await engineSeries(storeWith(rows), "sglang_time_per_output_token_mean_s", null, null, 2000, false)).toEqual([]);
  });

  it("splits gauges per dp rank with per_dp_rank", async () => {
    const s = await engineSeries(storeWith(rows), "sglang_num_running_reqs", null, null, 2000, true);
    expect(s.map((p) => [p.labels.dp_rank, p.value])).toEqual([
      ["0", [58, 57]],
      ["1", [61, 60]],
      ["2", [57, 59]],
      ["3", [63, 62]],
    ]);
  });

  it("reproduces the reference's per_dp_rank rate over unsplittable tokenizer series", async () => {
    const s = await engineSeries(storeWith(rows), "sglang_generation_tokens_per_s", null, null, 2000, true);
    expect(s.map((p) => p.value)).toEqual([[12623968.5]]);
  });

  it("derives KV-transfer interval means from histogram _sum/_count", async () => {
    const store = storeWith([
      row(0, "sglang_kv_transfer_latency_ms_sum", 100, { dp_rank: "0" }),
      row(0, "sglang_kv_transfer_latency_ms_count", 10, { dp_rank: "0" }),
      row(0, "sglang_kv_transfer_latency_ms_sum", 50, { dp_rank: "1" }),
      row(0, "sglang_kv_transfer_latency_ms_count", 5, { dp_rank: "1" }),
      row(2, "sglang_kv_transfer_latency_ms_sum", 130, { dp_rank: "0" }),
      row(2, "sglang_kv_transfer_latency_ms_count", 12, { dp_rank: "0" }),
      row(2, "sglang_kv_transfer_latency_ms_sum", 60, { dp_rank: "1" }),
      row(2, "sglang_kv_transfer_latency_ms_count", 6, { dp_rank: "1" }),
    ]);
    expect(await engineMetricNames(store)).toEqual(["sglang_kv_transfer_latency_mean_ms"]);
    const [s] = await engineSeries(store, "sglang_kv_transfer_latency_mean_ms", null, null, 2000, false);
    expect(s!.value).toEqual([40 / 3]);
  });
});
