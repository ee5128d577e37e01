/**
 * Engine series through a real Prometheus (Debian's `prometheus`, started here) equal the
 * same series read from the collector's files (docs/api.md 8.6 "Source: Prometheus").
 *
 * Two fake SGLang endpoints on 127.0.0.1 serve the fixture exposition: one engine's
 * `/metrics` (fixtures/sglang/engine_direct_dp4.txt) and a PD router's `/engine_metrics`
 * (router_engine_metrics_pd.txt). Each scraper — Prometheus (by its User-Agent) and the
 * collector — sees its own sequence of scrapes k = 0, 1, 2, …: cumulative values (counters,
 * histogram sums, counts and buckets) are the fixture's × (1 + k·F), gauges the fixture's ×
 * (1 + (k mod 2)·G). The same k therefore means the same exposition in both, whatever the
 * scrape times; points are matched by k (read back from a counter of the same scrape), and
 * values must agree to 1e-9 relative, rates up to the scrape-time difference of the
 * intervals. Interval quantiles come only from Prometheus (the collector keeps no
 * buckets): each interval's Δbuckets are F × the fixture's, so every point must equal the
 * fixture's own quantile. A dead Prometheus is a 502 naming it, a hanging one a 504 within
 * the timeout, and a malformed selector file a 500 naming the file.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPrometheus, type RunningPrometheus } from "@/cli/debian-tools";
import { parsePromText } from "@/collector/prometheus-text";
import { startCollector, type CollectorHandle } from "@/collector/server";
import { captureLog } from "@/collector/testing/capture-log";
import { ApiError } from "@/lib/contracts/errors";
import { setServerEnvForTests } from "@/lib/env";
import { bucketQuantile } from "@/lib/prometheus/fold";
import { openMetricStore, type MetricStore } from "@/lib/store/telemetry";
import { SGLANG_FIXTURES } from "@/lib/testing/fixtures";
import { engineMetricNames, engineSeries, type EngineSeries } from "@/lib/timeline/engine";
import { freePort } from "@/lib/testing/net";

const F = 0.01;
const G = 0.5;

/** The fixture body of scrape k (see the header). */
function bodyOf(text: string, k: number): string {
  let type = "";
  return text
    .split("\n")
    .map((line) => {
      if (line.startsWith("# TYPE ")) type = line.split(" ")[3] ?? "";
      if (line === "" || line.startsWith("#")) return line;
      const i = line.lastIndexOf(" ");
      const v = Number(line.slice(i + 1));
      if (!Number.isFinite(v)) return line;
      const scaled = type === "counter" || type === "histogram" ? v * (1 + k * F) : v * (1 + (k % 2) * G);
      return `${line.slice(0, i)} ${String(scaled)}`;
    })
    .join("\n");
}

interface FakeEndpoint {
  url: string;
  hostPort: string;
  scrapes: Record<"prometheus" | "collector", number>;
  close(): Promise<void>;
}

async function startEndpoint(fixture: string, path: string): Promise<FakeEndpoint> {
  const text = readFileSync(resolve(SGLANG_FIXTURES, fixture), "utf8");
  const scrapes = { prometheus: 0, collector: 0 };
  const server: Server = createHttpServer((req, res) => {
    if (req.url !== path) return void res.writeHead(404).end("not found");
    const who = /prometheus/i.test(req.headers["user-agent"] ?? "") ? "prometheus" : "collector";
    const k = scrapes[who]++;
    res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(bodyOf(text, k));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hostPort: `127.0.0.1:${port}`,
    scrapes,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}


async function until(what: string, ok: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await Promise.resolve(ok()).catch(() => false)) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\nprometheus log:\n${prom?.log().slice(-2000) ?? ""}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

let root: string;
let engine: FakeEndpoint;
let router: FakeEndpoint;
let collectors: CollectorHandle[] = [];
let prom: RunningPrometheus | undefined;
let promUrl: string;
let t0: number;
let t1: number;
/** Collector-written runs (files) and selector-only runs (Prometheus). */
let files: { direct: MetricStore; pd: MetricStore };
let viaProm: { direct: MetricStore; pd: MetricStore };

function selectorRun(name: string, selector: unknown): MetricStore {
  const dir = join(root, name);
  mkdirSync(join(dir, "dashboard"), { recursive: true });
  writeFileSync(join(dir, "dashboard", "prometheus.json"), JSON.stringify(selector));
  return openMetricStore(dir, { follow: false });
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rlb-promsrc-"));
  engine = await startEndpoint("engine_direct_dp4.txt", "/metrics");
  router = await startEndpoint("router_engine_metrics_pd.txt", "/engine_metrics");
  t0 = Date.now() / 1000 - 1;

  prom = await startPrometheus({
    dir: root,
    port: await freePort(),
    jobs: [
      { name: "engines", targets: [engine.hostPort], labels: { run_name: "qwen-direct" } },
      { name: "router", targets: [router.hostPort], metricsPath: "/engine_metrics" },
    ],
  });
  promUrl = prom.url;

  const common = { scrapeIntervalS: 1, gpuSource: "none" as const, flushIntervalS: 0.5, log: captureLog() };
  collectors = [
    await startCollector({ ...common, runDir: join(root, "files-direct"), runName: "qwen-direct", engines: [engine.url] }),
    await startCollector({ ...common, runDir: join(root, "files-pd"), runName: "qwen-pd", router: router.url }),
  ];
  // Enough scrapes on both sides for a few intervals in common.
  await until("7 scrapes by each scraper of each endpoint", () => Math.min(engine.scrapes.prometheus, engine.scrapes.collector, router.scrapes.prometheus, router.scrapes.collector) >= 7);
  for (const c of collectors) await c.stop();
  // Let Prometheus commit its last scrapes to the head block (a query sees them at once).
  await new Promise((r) => setTimeout(r, 1200));
  t1 = Date.now() / 1000 + 1;

  files = { direct: openMetricStore(join(root, "files-direct"), { follow: false }), pd: openMetricStore(join(root, "files-pd"), { follow: false }) };
  viaProm = { direct: selectorRun("prom-direct", { run_name: "qwen-direct" }), pd: selectorRun("prom-pd", { job: "router" }) };
  setServerEnvForTests({ prometheus: { url: promUrl, runs: {}, timeoutMs: 5000 } });
}, 90_000);

afterAll(async () => {
  setServerEnvForTests({});
  await prom?.stop();
  for (const c of collectors) await c.stop().catch(() => undefined);
  await Promise.all([engine?.close(), router?.close()]);
  if (root) rmSync(root, { recursive: true, force: true });
});

const series = (store: MetricStore, metric: string, perDpRank = false) => engineSeries(store, metric, t0, t1, 2000, perDpRank);

/** ts → scrape index k of one engine's series, read back from a raw counter of the same scrapes. */
async function scrapeIndex(store: MetricStore, counter: string, base: number, addr: string): Promise<Map<number, number>> {
  const [s] = (await series(store, counter)).filter((x) => x.addr === addr);
  expect(s, `${counter} for ${addr}`).toBeDefined();
  const out = new Map<number, number>();
  s!.ts.forEach((t, i) => {
    const k = (s!.value[i]! / base - 1) / F;
    expect(Math.abs(k - Math.round(k))).toBeLessThan(1e-6);
    out.set(t, Math.round(k));
  });
  return out;
}

/** One series per (addr, labels) keyed by k. */
function byK(list: EngineSeries[], ks: Map<number, number>): Map<string, Map<number, { ts: number; value: number }>> {
  const out = new Map<string, Map<number, { ts: number; value: number }>>();
  for (const s of list) {
    const m = new Map<number, { ts: number; value: number }>();
    s.ts.forEach((t, i) => {
      const k = ks.get(t);
      if (k !== undefined) m.set(k, { ts: t, value: s.value[i]! });
    });
    out.set(`${s.addr} ${JSON.stringify(s.labels)}`, m);
  }
  return out;
}

const rel = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b), 1e-300);

/** Fixture fold of one counter/histogram sample family over the rows `keep` accepts (k = 0). */
function fixtureSum(fixture: string, name: string, keep: (labels: Record<string, string>) => boolean = () => true): number {
  const text = readFileSync(resolve(SGLANG_FIXTURES, fixture), "utf8");
  let sum = 0;
  for (const s of parsePromText(text, (n) => n === name)) if (keep(Object.fromEntries(s.labels))) sum += s.value;
  return sum;
}

/**
 * Same metric, both sources: same series (addr, labels), and on every common k the same
 * value. `exact`: values equal to 1e-9; otherwise a rate — value × Δt is the same Δcounter
 * and the intervals' lengths agree within the scrape-time tolerance.
 */
async function expectSame(pair: "direct" | "pd", metric: string, ks: { files: Map<number, number>; prom: Map<number, number> }, opts: { rate?: boolean; perDpRank?: boolean } = {}) {
  const [a, b] = await Promise.all([series(files[pair], metric, opts.perDpRank), series(viaProm[pair], metric, opts.perDpRank)]);
  expect(a.length, `${metric}: file series`).toBeGreaterThan(0);
  const fa = byK(a, ks.files);
  const fb = byK(b, ks.prom);
  expect([...fb.keys()].sort(), metric).toEqual([...fa.keys()].sort());
  const tsOf = (m: Map<number, number>) => new Map([...m].map(([t, k]) => [k, t]));
  const [ta, tb] = [tsOf(ks.files), tsOf(ks.prom)];
  let compared = 0;
  for (const [key, ma] of fa) {
    const mb = fb.get(key)!;
    for (const [k, pa] of ma) {
      const pb = mb.get(k);
      // A rate needs the previous scrape on both sides (a scrape lost to a timeout skips a k).
      if (!pb || (opts.rate && (!ta.has(k - 1) || !tb.has(k - 1)))) continue;
      compared++;
      if (!opts.rate) {
        expect(rel(pa.value, pb.value), `${metric} ${key} k=${k}: ${pa.value} vs ${pb.value}`).toBeLessThan(1e-9);
        continue;
      }
      const dtA = pa.ts - ta.get(k - 1)!;
      const dtB = pb.ts - tb.get(k - 1)!;
      expect(rel(pa.value * dtA, pb.value * dtB), `${metric} ${key} k=${k}: Δ`).toBeLessThan(1e-9);
      // Both scrape every 1 s; on a loaded host one scrape may start late by up to ~1 s.
      expect(Math.abs(dtA - dtB), `${metric} ${key} k=${k}: intervals ${dtA} vs ${dtB}`).toBeLessThan(1.0);
    }
  }
  expect(compared, `${metric}: points in common`).toBeGreaterThanOrEqual(4);
}

describe("engine series through a real Prometheus", () => {
  let direct: { files: Map<number, number>; prom: Map<number, number> };
  let pd: { files: Map<number, number>; prom: Map<number, number> };
  const decode = "http://10.0.0.12:30000";

  beforeAll(async () => {
    const c0 = fixtureSum("engine_direct_dp4.txt", "sglang:prompt_tokens_total");
    direct = { files: await scrapeIndex(files.direct, "sglang_prompt_tokens_total", c0, engine.url), prom: await scrapeIndex(viaProm.direct, "sglang_prompt_tokens_total", c0, engine.url) };
    const r0 = fixtureSum("router_engine_metrics_pd.txt", "sglang_prompt_tokens_total", (l) => l.worker_addr === decode);
    pd = { files: await scrapeIndex(files.pd, "sglang_prompt_tokens_total", r0, decode), prom: await scrapeIndex(viaProm.pd, "sglang_prompt_tokens_total", r0, decode) };
    // Both scrapers saw scrapes k = 0…; the comparisons need several in common.
    expect(direct.prom.size).toBeGreaterThanOrEqual(5);
    expect(pd.files.size).toBeGreaterThanOrEqual(5);
  });

  it("gauges, folded over dp ranks (sum; mean for token_usage) and per dp rank", async () => {
    await expectSame("direct", "sglang_num_running_reqs", direct);
    await expectSame("direct", "sglang_token_usage", direct);
    await expectSame("direct", "sglang_token_usage", direct, { perDpRank: true });
    // Known values: 239 at k even (fixtures/sglang README), × 1.5 at k odd.
    const [s] = await series(viaProm.direct, "sglang_num_running_reqs");
    s!.ts.forEach((t, i) => expect(s!.value[i]).toBe(direct.prom.get(t)! % 2 ? 239 * 1.5 : 239));
  });

  it("counter rates (ranks and is_streaming rows summed before differencing) and histogram means", async () => {
    await expectSame("direct", "sglang_generation_tokens_per_s", direct, { rate: true });
    await expectSame("direct", "sglang_requests_per_s", direct, { rate: true });
    await expectSame("direct", "sglang_ttft_mean_s", direct);
    // Δsum/Δcount of scaled cumulatives = the fixture's sum/count (both is_streaming rows).
    const ttft = fixtureSum("engine_direct_dp4.txt", "sglang:time_to_first_token_seconds_sum") / fixtureSum("engine_direct_dp4.txt", "sglang:time_to_first_token_seconds_count");
    const [m] = await series(viaProm.direct, "sglang_ttft_mean_s");
    for (const v of m!.value) expect(rel(v, ttft)).toBeLessThan(1e-9);
  });

  it("PD families behind the router: queue gauges, the KV-transfer mean, per worker", async () => {
    await expectSame("pd", "sglang_num_decode_transfer_queue_reqs", pd);
    await expectSame("pd", "sglang_num_prefill_bootstrap_queue_reqs", pd);
    await expectSame("pd", "sglang_kv_transfer_latency_mean_ms", pd);
    const boot = await series(viaProm.pd, "sglang_num_prefill_bootstrap_queue_reqs");
    const prefill = boot.find((s) => s.addr === "http://10.0.0.11:30000");
    expect(prefill?.labels).toEqual({ engine_type: "prefill" });
    expect(prefill!.value.filter((v) => v === 6 + 4).length).toBeGreaterThan(0); // README: 6 and 4 on dp 0, 1
  });

  it("interval quantiles of summed buckets equal the fixture's own quantiles", async () => {
    const text = readFileSync(resolve(SGLANG_FIXTURES, "router_engine_metrics_pd.txt"), "utf8");
    for (const [family, q] of [
      ["sglang_kv_transfer_speed_gb_s", 0.9],
      ["sglang_kv_transfer_latency_ms", 0.5],
      ["sglang_kv_transfer_total_mb", 0.99],
    ] as const) {
      const byLe = new Map<number, number>();
      for (const s of parsePromText(text, (n) => n === `${family}_bucket`)) {
        const l = Object.fromEntries(s.labels);
        if (l.worker_addr !== "http://10.0.0.11:30000") continue;
        const le = l.le === "+Inf" ? Infinity : Number(l.le);
        byLe.set(le, (byLe.get(le) ?? 0) + s.value);
      }
      const want = bucketQuantile(q, [...byLe].map(([upper, count]) => ({ upper, count })));
      expect(Number.isFinite(want), family).toBe(true);
      const got = await series(viaProm.pd, `${family}_p${Math.round(q * 100)}`);
      const prefill = got.find((s) => s.addr === "http://10.0.0.11:30000");
      expect(prefill?.labels, family).toEqual({ engine_type: "prefill" });
      expect(prefill!.value.length, family).toBeGreaterThanOrEqual(4);
      for (const v of prefill!.value) expect(rel(v, want), `${family} p${q}: ${v} vs ${want}`).toBeLessThan(1e-9);
      // The files keep no buckets: no quantile there.
      expect(await series(files.pd, `${family}_p${Math.round(q * 100)}`)).toEqual([]);
    }
  });

  it("the catalog lists what Prometheus has for the run", async () => {
    const names = await engineMetricNames(viaProm.pd);
    for (const n of [
      "sglang_num_prefill_bootstrap_queue_reqs",
      "sglang_num_prefill_inflight_queue_reqs",
      "sglang_num_decode_prealloc_queue_reqs",
      "sglang_num_decode_transfer_queue_reqs",
      "sglang_kv_transfer_speed_gb_s_p50",
      "sglang_kv_transfer_latency_ms_p99",
      "sglang_kv_transfer_total_mb_p90",
      "sglang_ttft_mean_s",
      "sglang_generation_tokens_per_s",
    ])
      expect(names, n).toContain(n);
    expect(names.some((n) => /_(bucket|sum|count|total)$/.test(n))).toBe(false);
    // The file catalog of the same scrapes is the same, less what only buckets give.
    const fileNames = await engineMetricNames(files.pd);
    expect(names.filter((n) => !/_p(50|90|99)$/.test(n))).toEqual(fileNames);
    // The direct run's selector sees only its engine (run_name), with no PD histograms.
    const direct = await engineMetricNames(viaProm.direct);
    expect(direct).toContain("sglang_num_running_reqs");
    expect(direct).not.toContain("sglang_kv_transfer_speed_gb_s_p50");
  });
});

describe("when Prometheus cannot answer", () => {
  it("a dead Prometheus is a 502 naming it; the catalog still lists every panel", async () => {
    const port = await freePort();
    setServerEnvForTests({ prometheus: { url: `http://127.0.0.1:${port}`, runs: {}, timeoutMs: 2000 } });
    try {
      const store = selectorRun("dead", { run_name: "qwen-direct" });
      const err = await engineSeries(store, "sglang_num_running_reqs", t0, t1, 100, false).catch((e: unknown) => e);
      expect(ApiError.is(err)).toBe(true);
      expect((err as ApiError).status).toBe(502);
      expect((err as ApiError).message).toBe(`Prometheus at http://127.0.0.1:${port} did not answer: ECONNREFUSED`);
      const names = await engineMetricNames(store);
      expect(names).toContain("sglang_num_running_reqs");
      expect(names).toContain("sglang_kv_transfer_speed_gb_s_p90");
    } finally {
      setServerEnvForTests({ prometheus: { url: promUrl, runs: {}, timeoutMs: 5000 } });
    }
  });

  it("a hanging Prometheus is a 504 within the timeout", async () => {
    const hang: Server = createHttpServer(() => undefined);
    await new Promise<void>((r) => hang.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(hang.address() as AddressInfo).port}`;
    setServerEnvForTests({ prometheus: { url, runs: {}, timeoutMs: 400 } });
    try {
      const started = performance.now();
      const err = await engineSeries(selectorRun("hang", { job: "router" }), "sglang_requests_per_s", t0, t1, 100, false).catch((e: unknown) => e);
      expect((err as ApiError).status).toBe(504);
      expect((err as ApiError).message).toBe(`Prometheus at ${url} did not answer within 0.4 s`);
      expect(performance.now() - started).toBeLessThan(3000);
    } finally {
      hang.closeAllConnections();
      await new Promise((r) => hang.close(r));
      setServerEnvForTests({ prometheus: { url: promUrl, runs: {}, timeoutMs: 5000 } });
    }
  });

  it("a malformed selector file is a 500 naming the file and the problem", async () => {
    const dir = join(root, "bad-selector");
    mkdirSync(join(dir, "dashboard"), { recursive: true });
    writeFileSync(join(dir, "dashboard", "prometheus.json"), '{"pod": "x"}');
    const err = await engineSeries(openMetricStore(dir, { follow: false }), "sglang_num_running_reqs", t0, t1, 100, false).catch((e: unknown) => e);
    expect((err as ApiError).status).toBe(500);
    expect((err as ApiError).code).toBe("corrupt_file");
    expect((err as ApiError).message).toMatch(/^dashboard\/prometheus\.json: .*pod/);
  });
});
