/**
 * The collector behind a real Prometheus (Debian's `prometheus` package, as
 * installed by .ci/run): a collector fed by two fake SGLang engines, a fake
 * nvidia-smi and pushed phases / metrics is scraped every second; every query
 * of collector/grafana/rlboard.json must return the expected series (labels
 * and values) through Prometheus' HTTP API, and `promtool check metrics` must
 * parse the exposition (docs/collector.md, "Prometheus and Grafana").
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPrometheus, type RunningPrometheus } from "@/cli/debian-tools";
import { STREAMS } from "@/lib/store/format";
import { startCollector } from "./server";
import type { CollectorHandle } from "./server";
import { captureLog } from "./testing/capture-log";
import { sglangFixture, startFakeEngine } from "./testing/fake-sglang";
import type { FakeEngine } from "./testing/fake-sglang";
import { writeFakeNvidiaSmi } from "./testing/fake-smi";
import { getText, postJson } from "./testing/http";
import { freePort } from "@/lib/testing/net";

const RUN = "qwen-grpo";

interface Series {
  metric: Record<string, string>;
  value: number;
}

let root: string;
let engines: FakeEngine[];
let collector: CollectorHandle;
let prom: RunningPrometheus | undefined;
let promUrl: string;

async function query(expr: string): Promise<Series[]> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await res.json()) as { status: string; error?: string; data: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] } };
  if (body.status !== "success") throw new Error(`query ${expr} failed: ${body.error ?? res.status}`);
  expect(body.data.resultType).toBe("vector");
  return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
}

async function until<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await get().catch(() => undefined);
    if (v !== undefined && ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(v)}\nprometheus log:\n${prom?.log().slice(-2000) ?? ""}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rlb-prom-"));
  const smi = writeFakeNvidiaSmi(root);
  engines = [await startFakeEngine(sglangFixture("engine_direct_dp4.txt")), await startFakeEngine(sglangFixture("engine_metrics_direct.txt"))];
  collector = await startCollector({
    runDir: join(root, "run"),
    runName: RUN,
    engines: engines.map((e) => e.url),
    scrapeIntervalS: 0.5,
    gpuSource: "nvidia-smi",
    nvidiaSmi: smi,
    gpuIntervalS: 0.2,
    node: "10.0.0.1",
    flushIntervalS: 0.5,
    log: captureLog(),
  });
  // Recent timestamps (the collector may refuse far-off clocks); .25/.75 keep the duration exact.
  const t = Math.floor(Date.now() / 1000) - 600;
  const phase = (t0: number, t1: number, node: string, rank: number) => ({ name: "actor_train", t0, t1, node, gpus: [0], rank, role: "train" });
  // Two lanes: the interval that ended last wins (39.5 s), whatever the arrival order; OPEN markers are ignored.
  expect((await postJson(`${collector.url}/v1/phases`, { records: [phase(t + 81.25, t + 120.75, "10.0.0.1", 0), phase(t + 200, -1.0, "10.0.0.1", 0)] })).status).toBe(200);
  expect((await postJson(`${collector.url}/v1/phases`, { records: [phase(t + 90, t + 100, "10.0.0.2", 1)] })).status).toBe(200);
  const metrics = `{"records":[{"ts":${t + 125}.0,"step_key":"rollout/step","step":3,"metrics":{"rollout/rewards_mean":0.5,"perf/step_time":95.0,"rollout/step":3}}]}`;
  expect((await postJson(`${collector.url}/v1/metrics`, metrics)).status).toBe(200);

  prom = await startPrometheus({ dir: root, port: await freePort(), jobs: [{ name: "rlboard", targets: [`127.0.0.1:${collector.port}`] }] });
  promUrl = prom.url;
  // Every source has landed in one scrape: GPUs, both engines, phases and metrics.
  await until(
    "a scrape with GPU and engine series",
    () => query(`count(rlboard_gpu_util_percent) + count(rlboard_engine_running_reqs) + count(miles_metric_rollout_rewards_mean)`),
    (r) => r[0]?.value === 2 + 2 + 1,
  );
}, 60_000);

afterAll(async () => {
  await prom?.stop();
  await collector?.stop();
  await Promise.all((engines ?? []).map((e) => e.close()));
  if (root) rmSync(root, { recursive: true, force: true });
});

interface Expected {
  labels: Record<string, string>;
  /** Exact value, or an inclusive range. */
  value: number | [number, number];
}

describe("collector behind a real Prometheus", () => {
  const dashboard = JSON.parse(readFileSync(resolve(process.cwd(), "collector/grafana/rlboard.json"), "utf8")) as {
    __inputs: { name: string; pluginId: string }[];
    templating: { list: { name: string; definition: string; datasource: { uid: string } }[] };
    panels: { type: string; title: string; datasource?: { uid: string }; targets?: { expr: string; datasource: { uid: string } }[] }[];
  };

  it("answers every query of the Grafana dashboard with the expected series", async () => {
    const [a, b] = engines.map((e) => e.url) as [string, string];
    const milesAddr = (u: string) => u.replace("http://", "").replaceAll(".", "_").replaceAll(":", "_");
    const gpu = (g: string, value: Expected["value"]): Expected => ({ labels: { node: "10.0.0.1", gpu: g }, value });
    const named = (name: string, value: number | [number, number]): Expected => ({ labels: { __name__: name }, value });
    // Fake nvidia-smi: GPU 0 util 80..89, 61234 MiB; GPU 1 reads [N/A] (skipped); GPU 2 util 5, 1024 MiB.
    // Running requests: dp ranks 57 + 61 + 58 + 63 on engine a, 13 on engine b; queue 0 + 0 + 0 + 2 on a.
    const expected: Record<string, Expected[]> = {
      [`rlboard_gpu_util_percent{run_name="${RUN}"}`]: [gpu("0", [80, 89]), gpu("2", 5)],
      [`rlboard_gpu_mem_used_mib{run_name="${RUN}"}`]: [gpu("0", 61234), gpu("2", 1024)],
      [`rlboard_engine_running_reqs{run_name="${RUN}"}`]: [
        { labels: { engine: a }, value: 239 },
        { labels: { engine: b }, value: 13 },
      ],
      [`sum by (engine, run_name) (rlboard_engine_metric{metric="sglang_num_queue_reqs",run_name="${RUN}"})`]: [{ labels: { engine: a }, value: 2 }],
      [`rlboard_phase_last_duration_seconds{run_name="${RUN}"}`]: [{ labels: { phase: "actor_train" }, value: 39.5 }],
      [`miles_metric_rollout_rewards_mean{run_name="${RUN}"}`]: [named("miles_metric_rollout_rewards_mean", 0.5)],
      [`rlboard_collector_write_healthy * on (instance) group_left (run_name) rlboard_run_info{run_name="${RUN}"}`]: [
        { labels: { instance: `127.0.0.1:${collector.port}` }, value: 1 },
      ],
      [`rlboard_collector_buffered_records * on (instance) group_left (run_name) rlboard_run_info{run_name="${RUN}"}`]: STREAMS.map((s) => ({
        labels: { stream: s },
        value: [0, 1e6],
      })),
      [`{__name__=~"miles_metric_dashboard_gpu_.+_util",run_name="${RUN}"}`]: [
        named("miles_metric_dashboard_gpu_10_0_0_1_0_util", [80, 89]),
        named("miles_metric_dashboard_gpu_10_0_0_1_2_util", 5),
      ],
      [`{__name__=~"miles_metric_dashboard_gpu_.+_mem_mb",run_name="${RUN}"}`]: [
        named("miles_metric_dashboard_gpu_10_0_0_1_0_mem_mb", 61234),
        named("miles_metric_dashboard_gpu_10_0_0_1_2_mem_mb", 1024),
      ],
      [`{__name__=~"miles_metric_dashboard_engine_.+_running_reqs",run_name="${RUN}"}`]: [
        named(`miles_metric_dashboard_engine_${milesAddr(a)}_running_reqs`, 239),
        named(`miles_metric_dashboard_engine_${milesAddr(b)}_running_reqs`, 13),
      ],
      [`{__name__=~"miles_metric_dashboard_phase_.+_seconds",run_name="${RUN}"}`]: [named("miles_metric_dashboard_phase_actor_train_seconds", 39.5)],
    };

    const targets = dashboard.panels.flatMap((p) => p.targets ?? []);
    const exprs = targets.map((t) => t.expr.replaceAll("$run_name", RUN));
    expect(new Set(exprs)).toEqual(new Set(Object.keys(expected))); // a new panel needs an expectation here
    for (const expr of exprs) {
      const got = await query(expr);
      const want = expected[expr] ?? [];
      expect(got.length, `${expr}: ${JSON.stringify(got)}`).toBe(want.length);
      for (const w of want) {
        const match = got.find((s) => Object.entries(w.labels).every(([k, v]) => s.metric[k] === v));
        expect(match, `${expr}: no series with ${JSON.stringify(w.labels)} in ${JSON.stringify(got)}`).toBeDefined();
        if (!match) continue;
        expect(match.metric.run_name, expr).toBe(RUN);
        if (!expr.startsWith("sum")) expect(match.metric.job, expr).toBe("rlboard"); // sum by () keeps only its labels
        if (typeof w.value === "number") expect(match.value, `${expr} ${JSON.stringify(w.labels)}`).toBe(w.value);
        else {
          expect(match.value, expr).toBeGreaterThanOrEqual(w.value[0]);
          expect(match.value, expr).toBeLessThanOrEqual(w.value[1]);
        }
      }
    }

    // Datasource input and the templated run_name variable.
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: "DS_PROMETHEUS", pluginId: "prometheus" })]);
    for (const t of targets) expect(t.datasource.uid).toBe("${DS_PROMETHEUS}");
    const variable = dashboard.templating.list.find((v) => v.name === "run_name");
    expect(variable?.datasource.uid).toBe("${DS_PROMETHEUS}");
    const m = /^label_values\((\w+), (\w+)\)$/.exec(variable?.definition ?? "");
    expect(m, variable?.definition).not.toBeNull();
    const values = (await (await fetch(`${promUrl}/api/v1/label/${m?.[2]}/values?match[]=${m?.[1]}`)).json()) as { data: string[] };
    expect(values.data).toEqual([RUN]);
  });

  it("serves the miles names exactly, and promtool parses the exposition", async () => {
    const miles = await query(`{__name__=~"miles_metric_.+"}`);
    expect(miles.map((s) => s.metric.__name__).sort()).toEqual(
      [
        "miles_metric_dashboard_gpu_10_0_0_1_0_util",
        "miles_metric_dashboard_gpu_10_0_0_1_0_mem_mb",
        "miles_metric_dashboard_gpu_10_0_0_1_2_util",
        "miles_metric_dashboard_gpu_10_0_0_1_2_mem_mb",
        ...engines.map((e) => `miles_metric_dashboard_engine_${e.url.replace("http://", "").replaceAll(".", "_").replaceAll(":", "_")}_running_reqs`),
        "miles_metric_dashboard_phase_actor_train_seconds",
        "miles_metric_rollout_rewards_mean",
        "miles_metric_perf_step_time",
        "miles_metric_rollout_step",
      ].sort(),
    );
    // One label besides what Prometheus attaches (job, instance): run_name.
    for (const s of miles) expect(Object.keys(s.metric).sort()).toEqual(["__name__", "instance", "job", "run_name"]);
    expect(miles.find((s) => s.metric.__name__ === "miles_metric_perf_step_time")?.value).toBe(95);

    const { status, text } = await getText(`${collector.url}/metrics`);
    expect(status).toBe(200);
    const check = (input: string) => spawnSync("promtool", ["check", "metrics"], { input, encoding: "utf8" });
    // Our own families pass promtool's lint as well as its parser.
    const own = text
      .split("\n")
      .filter((l) => !/^(# (HELP|TYPE) )?miles_metric_/.test(l))
      .join("\n");
    const ownCheck = check(own);
    expect(ownCheck.stderr + ownCheck.stdout).toBe("");
    expect(ownCheck.status).toBe(0);
    // The whole exposition parses (exit 1 = unparsable). promtool's lint reads
    // "miles" in miles' own names as a unit (and "mb" in *_mem_mb as an
    // abbreviated one): those names are fixed by miles, so those two lint
    // findings are the only ones allowed, and only on miles_metric_* names.
    const full = check(text);
    expect(full.stderr).not.toMatch(/error while linting/);
    expect(full.status).toBe(3);
    const problems = full.stderr.trim().split("\n");
    expect(problems.length).toBeGreaterThan(0);
    for (const p of problems) {
      expect(p).toMatch(/^miles_metric_[a-zA-Z0-9_:]+ (use base unit "meters" instead of "miles"|metric names should not contain abbreviated units)$/);
      if (p.endsWith("abbreviated units")) expect(p).toMatch(/_mem_mb /);
    }
  });
});
