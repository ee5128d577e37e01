/**
 * The collector's forwarding surface over real HTTP: pushed phases and
 * metrics reach the miles-named gauges on /metrics with the run's name
 * (which follows POST /v1/meta), and POST /v1/router re-points a live
 * scraper at a restarted router.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startCollector } from "./server";
import type { CollectorHandle, CollectorOptions } from "./server";
import { captureLog } from "./testing/capture-log";
import type { CapturedLog } from "./testing/capture-log";
import { sglangFixture, startFakeEngine } from "./testing/fake-sglang";
import type { FakeEngine } from "./testing/fake-sglang";
import { getText, postJson } from "./testing/http";
import { waitFor } from "./testing/child-collector";

let dump: string;
let c: CollectorHandle | undefined;
let log: CapturedLog;
const fakes: FakeEngine[] = [];
beforeEach(() => {
  dump = mkdtempSync(join(tmpdir(), "rlb-fwd-"));
  log = captureLog();
});
afterEach(async () => {
  await c?.stop();
  c = undefined;
  await Promise.all(fakes.splice(0).map((f) => f.close()));
  rmSync(dump, { recursive: true, force: true });
});

async function start(over: Partial<CollectorOptions> = {}): Promise<CollectorHandle> {
  c = await startCollector({ runDir: dump, gpuSource: "none", flushIntervalS: 60, log, ...over });
  return c;
}

const metricsText = async (h: CollectorHandle): Promise<string> => (await getText(`${h.url}/metrics`)).text;

describe("forwarding on /metrics", () => {
  it("forwards pushed phases and metrics under miles' names, labelled with the run name from meta", async () => {
    const h = await start({ runName: "qwen-grpo" });
    // Recent timestamps (the collector may refuse far-off clocks); .25/.75 keep the duration exact.
    const t = Math.floor(Date.now() / 1000) - 600;
    const phase = { name: "actor_train", t0: t + 81.25, t1: t + 120.75, node: "10.0.0.2", gpus: [3], rank: 3, role: "train" };
    expect((await postJson(`${h.url}/v1/phases`, { records: [phase, { ...phase, t0: t + 200, t1: -1.0 }] })).status).toBe(200);
    const body = `{"records":[{"ts":${t + 100}.0,"step_key":"rollout/step","step":3,"metrics":{"rollout/rewards_mean":0.5,"perf/step_time":95.0,"note":"x"}}]}`;
    expect((await postJson(`${h.url}/v1/metrics`, body)).status).toBe(200);
    let m = await metricsText(h);
    expect(m).toContain('miles_metric_rollout_rewards_mean{run_name="qwen-grpo"} 0.5\n');
    expect(m).toContain('miles_metric_perf_step_time{run_name="qwen-grpo"} 95\n');
    expect(m).not.toContain("miles_metric_note");
    expect(m).toContain('\nmiles_metric_dashboard_phase_actor_train_seconds{run_name="qwen-grpo"} 39.5\n');
    expect(m).toContain('rlboard_run_metric{metric="rollout/rewards_mean",run_name="qwen-grpo"} 0.5\n');

    expect((await postJson(`${h.url}/v1/meta`, { args: {}, run_name: "renamed" })).status).toBe(200);
    m = await metricsText(h);
    expect(m).toContain('miles_metric_rollout_rewards_mean{run_name="renamed"} 0.5\n');
    expect(m).not.toContain('run_name="qwen-grpo"');
  });
});

describe("POST /v1/router", () => {
  it("re-points a router-mode scraper at the restarted router", async () => {
    const old = await startFakeEngine(sglangFixture("engine_metrics_router.txt"), "/engine_metrics");
    const moved = await startFakeEngine(sglangFixture("router_engine_metrics_pd.txt"), "/engine_metrics");
    fakes.push(old, moved);
    const h = await start({ router: old.url, scrapeIntervalS: 0.5 });
    await waitFor(() => old.hits.length > 0, 5000, "first router scrape");

    expect(await postJson(`${h.url}/v1/router`, { url: moved.url })).toEqual({
      status: 200,
      json: { ok: true, mode: "router", router: moved.url, changed: true },
    });
    const oldHits = old.hits.length;
    await waitFor(() => moved.hits.length >= 2, 5000, "scrapes of the new router");
    expect(old.hits.length).toBeLessThanOrEqual(oldHits + 1); // at most a tick already started
    expect(moved.hits.every((p) => p === "/engine_metrics")).toBe(true);
    // 44 + 41 + 46 + 47 decode running requests of the new router's engine.
    expect(await metricsText(h)).toContain('miles_metric_dashboard_engine_10_0_0_12_30000_running_reqs{run_name="miles-run"} 178\n');

    expect((await postJson(`${h.url}/v1/router`, { url: `${moved.url}/` })).json).toMatchObject({ changed: false });
    const health = await getText(`${h.url}/health`);
    expect(JSON.parse(health.text)).toMatchObject({ scraper: "router", router: moved.url });
    expect(log.messages("info").some((l) => l.includes(`router ${moved.url} registered (router mode)`))).toBe(true);
  });

  it("rejects malformed bodies with 400 and other methods with 405", async () => {
    const h = await start();
    for (const [body, msg] of [
      [{}, "url: expected an http(s) URL"],
      [{ url: "10.0.0.1:30000" }, "url: expected an http(s) URL"],
      [{ url: "http://r:1", mode: "auto" }, 'mode: expected "router" or "direct"'],
      [{ url: "http://r:1", extra: 1 }, 'unknown key "extra"'],
      [[1], 'body must be {"url"'],
    ] as const) {
      const r = await postJson(`${h.url}/v1/router`, body);
      expect(r.status).toBe(400);
      expect((r.json.error as { message: string }).message).toContain(msg);
    }
    expect((await getText(`${h.url}/v1/router`)).status).toBe(405);
    expect(JSON.parse((await getText(`${h.url}/health`)).text)).toMatchObject({ scraper: "direct", router: null });
  });
});
