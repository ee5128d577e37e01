import { afterEach, describe, expect, it } from "vitest";
import type { EngineSample } from "@/lib/store/format";
import { PromParseError, parsePromText } from "../prometheus-text";
import { captureLog } from "../testing/capture-log";
import { sglangFixture, startFakeEngine } from "../testing/fake-sglang";
import type { FakeEngine } from "../testing/fake-sglang";
import { SGLANG_DEFAULT_WHITELIST, SGLANG_SPEC_WHITELIST } from "@/lib/store/format";
import { buildEngineRecords } from "./sglang-records";
import { SglangScraper } from "./sglang-scraper";

const WL = new Set(SGLANG_DEFAULT_WHITELIST);
const SPEC = new Set<string>(SGLANG_SPEC_WHITELIST);
const ADDR = "http://10.0.0.1:15000";

function pick(recs: EngineSample[], metric: string): EngineSample[] {
  return recs.filter((r) => r.metric === metric);
}

describe("parsePromText", () => {
  it("parses labels with escapes, NaN/Inf, exponents and ignores timestamps and comments", () => {
    const s = parsePromText(
      '# HELP x y\n# TYPE x gauge\nx{a="q\\"\\\\\\n",b="2",} 1.5e+06 1700000000\ny NaN\nz{} +Inf\nw -Inf\n\n',
    );
    expect(s).toEqual([
      { name: "x", labels: [["a", 'q"\\\n'], ["b", "2"]], value: 1.5e6 },
      { name: "y", labels: [], value: NaN },
      { name: "z", labels: [], value: Infinity },
      { name: "w", labels: [], value: -Infinity },
    ]);
  });

  it("throws on malformed sample lines", () => {
    expect(() => parsePromText('x{a="1" 2\n')).toThrow(PromParseError);
    expect(() => parsePromText("x abc\n")).toThrow(/line 1/);
    expect(() => parsePromText("ok 1\n{x} 2\n")).toThrow(/line 2/);
  });
});

describe("buildEngineRecords on current SGLang output", () => {
  const t0 = buildEngineRecords(sglangFixture("engine_direct_dp4.txt"), { ts: 1000, addr: ADDR, whitelist: WL }).records;
  const t1 = buildEngineRecords(sglangFixture("engine_direct_dp4_later.txt"), { ts: 1002, addr: ADDR, whitelist: WL }).records;

  it("keeps only engine_type/dp_rank in text order, one ts, the engine addr", () => {
    const running = pick(t0, "sglang_num_running_reqs");
    expect(running.map((r) => [r.labels, r.value])).toEqual([
      [{ dp_rank: "2", engine_type: "unified" }, 57],
      [{ dp_rank: "1", engine_type: "unified" }, 61],
      [{ dp_rank: "0", engine_type: "unified" }, 58],
      [{ dp_rank: "3", engine_type: "unified" }, 63],
    ]);
    expect(Object.keys(running[0]?.labels ?? {})).toEqual(["dp_rank", "engine_type"]);
    expect(new Set(t0.map((r) => r.ts))).toEqual(new Set([1000]));
    expect(new Set(t0.map((r) => r.addr))).toEqual(new Set([ADDR]));
  });

  it("sums is_streaming splits of cumulative series into one record", () => {
    const gen = pick(t1, "sglang_generation_tokens_total");
    expect(gen).toHaveLength(1);
    expect(gen[0]?.labels).toEqual({ engine_type: "unified" });
    expect(gen[0]?.value).toBe(25297526 + 50229);
    const g0 = pick(t0, "sglang_generation_tokens_total")[0]?.value ?? 0;
    expect(((gen[0]?.value ?? 0) - g0) / 2).toBe(11798.5); // README: sglang_generation_tokens_per_s
    const ttftSum = (r: EngineSample[]) => pick(r, "sglang_time_to_first_token_seconds_sum")[0]?.value ?? 0;
    const ttftCount = (r: EngineSample[]) => pick(r, "sglang_time_to_first_token_seconds_count")[0]?.value ?? 0;
    expect((ttftSum(t1) - ttftSum(t0)) / (ttftCount(t1) - ttftCount(t0))).toBeCloseTo(1.3775487237532313, 9);
  });

  it("matches the README record counts: 49 raw under the spec whitelist, 42 after merging, +4 bootstrap-queue gauges by default", () => {
    const spec = buildEngineRecords(sglangFixture("engine_direct_dp4.txt"), { ts: 1, addr: ADDR, whitelist: SPEC }).records;
    expect(spec).toHaveLength(42);
    expect(t0).toHaveLength(46);
    expect(pick(t0, "sglang_num_prefill_bootstrap_queue_reqs")).toHaveLength(4);
    expect(pick(t0, "sglang_num_prefill_prealloc_queue_reqs")).toHaveLength(0);
  });

  it("router mode takes the engine from worker_addr and keeps KV-transfer histogram sums", () => {
    const { records, missingAddr } = buildEngineRecords(sglangFixture("router_engine_metrics_pd.txt"), {
      ts: 5,
      addr: undefined,
      whitelist: WL,
    });
    expect(missingAddr).toBe(0);
    expect(new Set(records.map((r) => r.addr))).toEqual(new Set(["http://10.0.0.11:30000", "http://10.0.0.12:30000"]));
    const sum = (addr: string, metric: string): number =>
      records.filter((r) => r.addr === addr && r.metric === metric).reduce((a, r) => a + r.value, 0);
    expect(sum("http://10.0.0.12:30000", "sglang_num_running_reqs")).toBe(178);
    expect(sum("http://10.0.0.11:30000", "sglang_prompt_tokens_total")).toBe(4749498);
    expect(sum("http://10.0.0.12:30000", "sglang_generation_tokens_total")).toBe(9450145);
    expect(sum("http://10.0.0.11:30000", "sglang_num_prefill_bootstrap_queue_reqs")).toBe(10);
    expect(pick(records, "sglang_kv_transfer_latency_ms_sum").length).toBeGreaterThan(0);
    expect(records.every((r) => !("worker_addr" in r.labels))).toBe(true);
  });

  it("handles the small legacy fixtures and samples without worker_addr", () => {
    const d = buildEngineRecords(sglangFixture("engine_metrics_direct.txt"), { ts: 1, addr: ADDR, whitelist: WL }).records;
    expect(d.map((r) => [r.metric, r.labels, r.value])).toEqual([
      ["sglang_num_running_reqs", {}, 13],
      ["sglang_cache_hit_rate", {}, 0.71],
    ]);
    const r = buildEngineRecords(sglangFixture("engine_metrics_router.txt"), { ts: 1, addr: undefined, whitelist: WL });
    expect(r.records).toHaveLength(5);
    expect(r.records[4]).toMatchObject({ addr: "http://10.0.0.1:15000", metric: "sglang_token_usage", labels: { engine_type: "prefill" } });
    expect(buildEngineRecords("sglang_num_running_reqs 3\n", { ts: 1, addr: undefined, whitelist: WL }).missingAddr).toBe(1);
  });
});

describe("SglangScraper", () => {
  const engines: FakeEngine[] = [];
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((e) => e.close()));
  });

  it("direct mode: scrapes engines concurrently; a dead or hanging engine leaves a gap and a warning without stalling the others", async () => {
    const a = await startFakeEngine(sglangFixture("engine_direct_dp4.txt"));
    const b = await startFakeEngine(sglangFixture("engine_metrics_direct.txt"));
    const hang = await startFakeEngine("");
    hang.setMode("hang");
    const broken = await startFakeEngine("");
    broken.setMode(500);
    engines.push(a, b, hang, broken);
    const got: EngineSample[] = [];
    const log = captureLog();
    const s = new SglangScraper({
      targets: () => [a.url, b.url, hang.url, broken.url, "http://127.0.0.1:1"],
      intervalS: 2,
      timeoutS: 0.4,
      whitelist: SGLANG_DEFAULT_WHITELIST,
      sink: (r) => got.push(...r),
      log,
      now: () => 1234.5,
    });
    const t = Date.now();
    await s.tick();
    expect(Date.now() - t).toBeLessThan(2000);
    expect(got.filter((r) => r.addr === a.url)).toHaveLength(46);
    expect(got.filter((r) => r.addr === b.url)).toHaveLength(2);
    expect(new Set(got.map((r) => r.ts))).toEqual(new Set([1234.5]));
    const warns = log.messages("warn");
    expect(warns.some((w) => w.includes(hang.url) && w.includes("timed out"))).toBe(true);
    expect(warns.some((w) => w.includes(broken.url) && w.includes("HTTP 500"))).toBe(true);
    expect(warns.some((w) => w.includes("127.0.0.1:1/metrics"))).toBe(true);
    // Rate limited: a second failing tick adds no new warnings for the same engines.
    await s.tick();
    expect(log.messages("warn")).toHaveLength(warns.length);
  });

  it("skips an engine whose previous request is still in flight instead of queueing behind it", async () => {
    const hang = await startFakeEngine("");
    hang.setMode("hang");
    const ok = await startFakeEngine(sglangFixture("engine_metrics_direct.txt"));
    engines.push(hang, ok);
    const got: EngineSample[] = [];
    const s = new SglangScraper({
      targets: () => [hang.url, ok.url],
      intervalS: 0.5,
      timeoutS: 0.8,
      whitelist: SGLANG_DEFAULT_WHITELIST,
      sink: (r) => got.push(...r),
      log: captureLog(),
    });
    const first = s.tick();
    await new Promise((r) => setTimeout(r, 100));
    await s.tick(); // must not wait for the hanging request of the first tick
    expect(got.filter((r) => r.addr === ok.url)).toHaveLength(4);
    expect(hang.hits).toHaveLength(1);
    await first;
  });

  it("router mode: one request per tick to /engine_metrics", async () => {
    const router = await startFakeEngine(sglangFixture("router_engine_metrics_pd.txt"), "/engine_metrics");
    engines.push(router);
    const got: EngineSample[] = [];
    const s = new SglangScraper({
      router: router.url + "/",
      targets: () => ["http://ignored:1"],
      intervalS: 0.5,
      timeoutS: 2,
      whitelist: SGLANG_DEFAULT_WHITELIST,
      sink: (r) => got.push(...r),
      log: captureLog(),
    });
    s.start();
    await new Promise((r) => setTimeout(r, 700));
    await s.stop();
    expect(router.hits.every((h) => h === "/engine_metrics")).toBe(true);
    expect(router.hits.length).toBe(2);
    expect(new Set(got.map((r) => r.addr)).size).toBe(2);
  });
  it("setRouter re-points router mode to a restarted router at the next tick; the same address again is a no-op", async () => {
    const old = await startFakeEngine(sglangFixture("engine_metrics_router.txt"), "/engine_metrics");
    const moved = await startFakeEngine(sglangFixture("router_engine_metrics_pd.txt"), "/engine_metrics");
    engines.push(old, moved);
    const got: EngineSample[] = [];
    const s = new SglangScraper({
      router: old.url,
      targets: () => [],
      intervalS: 1,
      timeoutS: 2,
      whitelist: SGLANG_DEFAULT_WHITELIST,
      sink: (r) => got.push(...r),
      log: captureLog(),
    });
    await s.tick();
    expect(new Set(got.map((r) => r.addr))).toEqual(new Set(["http://10.0.0.1:15000", "http://10.0.0.1:15004"]));
    expect(s.setRouter(`${moved.url}/`)).toBe(true);
    expect(s.setRouter(moved.url)).toBe(false);
    expect(s.mode).toBe("router");
    expect(s.router).toBe(moved.url);
    got.length = 0;
    await s.tick();
    expect(new Set(got.map((r) => r.addr))).toEqual(new Set(["http://10.0.0.11:30000", "http://10.0.0.12:30000"]));
    expect(old.hits).toHaveLength(1);
    expect(moved.hits).toEqual(["/engine_metrics"]);
  });

  it("setRouter in direct mode only records the address unless router mode is asked for; direct mode can be restored", async () => {
    const engine = await startFakeEngine(sglangFixture("engine_metrics_direct.txt"));
    const router = await startFakeEngine(sglangFixture("engine_metrics_router.txt"), "/engine_metrics");
    engines.push(engine, router);
    const got: EngineSample[] = [];
    const s = new SglangScraper({
      targets: () => [engine.url],
      intervalS: 1,
      timeoutS: 2,
      whitelist: SGLANG_DEFAULT_WHITELIST,
      sink: (r) => got.push(...r),
      log: captureLog(),
    });
    expect(s.setRouter(router.url)).toBe(true);
    expect(s.mode).toBe("direct");
    await s.tick();
    expect(router.hits).toHaveLength(0);
    expect(engine.hits).toEqual(["/metrics"]);
    expect(s.setRouter(router.url, "router")).toBe(true);
    await s.tick();
    expect(router.hits).toEqual(["/engine_metrics"]);
    expect(s.setRouter(router.url, "direct")).toBe(true);
    await s.tick();
    expect(engine.hits).toEqual(["/metrics", "/metrics"]);
    expect(router.hits).toHaveLength(1);
  });
});
