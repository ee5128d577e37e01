import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCollector } from "../../server";
import type { CollectorHandle } from "../../server";
import { waitFor } from "../../testing/child-collector";
import { captureLog } from "../../testing/capture-log";
import { sglangFixture, startFakeEngine } from "../../testing/fake-sglang";

const HERE = resolve(process.cwd(), "collector/clients/python");

let dump: string;
let c: CollectorHandle;
beforeAll(async () => {
  dump = mkdtempSync(join(tmpdir(), "rlb-py-"));
  // The collector clock is pinned (meta.json's start_ts is checked byte-exact) while
  // phase_ctx stamps real time: the clock-skew refusal is off for this test.
  c = await startCollector({ runDir: dump, gpuSource: "none", flushIntervalS: 0.2, maxClockSkewS: 0, log: captureLog(), now: () => 1755000000.5 });
});
afterAll(() => rmSync(dump, { recursive: true, force: true }));

function runPython(url: string): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const p = spawn("python3", ["-m", "unittest", "-v", "test_rlboard_client"], {
      cwd: HERE,
      env: { ...process.env, RLBOARD_TEST_URL: url, PYTHONDONTWRITEBYTECODE: "1" },
    });
    let output = "";
    p.stdout.on("data", (d: Buffer) => (output += d.toString()));
    p.stderr.on("data", (d: Buffer) => (output += d.toString()));
    p.on("close", (code) => done({ code, output }));
  });
}

const read = (f: string): string => readFileSync(join(c.dashDir, f), "utf8");

describe("python client against a live collector", () => {
  it("passes its unittest suite (no test skipped) and the records land on disk byte-exact", async () => {
    const { code, output } = await runPython(c.url);
    expect(output, output).toMatch(/Ran 7 tests/);
    expect(output).not.toMatch(/skipped/);
    expect(code, output).toBe(0);
    expect(await c.stop()).toEqual({ ok: true, lost: 0 });

    const h12 = read("phases/20250812_12.jsonl").split("\n");
    expect(h12).toEqual(
      expect.arrayContaining([
        '{"name":"train_wait","t0":1755000040.0,"t1":-1.0,"node":"10.0.0.2","gpus":[3],"rank":3,"role":"train"}',
        '{"name":"actor_train","t0":1755000081.2,"t1":1755000120.7,"node":"10.0.0.2","gpus":[3],"rank":3,"role":"train"}',
        '{"name":"update_weights","t0":1755000200.5,"t1":-1.0,"node":"10.0.0.2","gpus":[3],"rank":3,"role":"train"}',
        '{"name":"update_weights","t0":1755000200.5,"t1":1755000230.25,"node":"10.0.0.2","gpus":[3],"rank":3,"role":"train"}',
        '{"name":"save_model","t0":1755000300.0,"t1":-1.0,"node":"10.0.0.2","gpus":[3],"rank":3,"role":"train"}',
      ]),
    );
    // The rollout phase ends in the next hour, so it is filed there.
    expect(read("phases/20250812_13.jsonl")).toBe(
      '{"name":"rollout","t0":1755000040.0,"t1":1755003641.5,"node":"10.0.0.9","gpus":[],"rank":-1,"role":"rollout_manager"}\n',
    );
    // phase_ctx: an OPEN marker and a closed record with the bit-identical t0.
    const logProbs = readdirSync(join(c.dashDir, "phases"))
      .flatMap((f) => read(`phases/${f}`).trim().split("\n"))
      .filter((l) => l.includes('"log_probs"'))
      .map((l) => /"t0":([^,]+),"t1":([^,]+)/.exec(l)?.slice(1));
    expect(logProbs).toHaveLength(2);
    expect(logProbs[0]?.[0]).toBe(logProbs[1]?.[0]);
    expect(logProbs.map((x) => x?.[1] === "-1.0").sort()).toEqual([false, true]);

    expect(read("metrics.jsonl")).toBe(
      '{"ts":1755000100.0,"step_key":"rollout/step","step":3,"metrics":{"rollout/rewards_mean":0.5,"perf/step_time":95.0,"rollout/step":3,"ok":true,"name":"sglang \\u00e9","train/loss":NaN,"np":2.5}}\n' +
        '{"ts":1755000102.0,"step_key":"eval/step","step":2,"metrics":{"eval/step":2.0}}\n',
    );
    expect(read("topology.jsonl")).toBe(
      '{"ts":1755000030.5,"engines":[{"addr":"http://10.0.0.1:15000","worker_type":"regular","engine_rank":0,"gpus":[["10.0.0.1",0]],"gpu_uuids":[null]}]}\n',
    );
    expect(read("trajectories/20250812_12.jsonl")).toBe(
      '{"ts":1755000200.0,"kind":"attempt_start","sample_index":96,"group_index":12,"turn":-1,"weight_version":"","detail":""}\n' +
        '{"ts":1755000208.9,"kind":"gen_end","sample_index":96,"group_index":12,"turn":1,"weight_version":"","detail":"412"}\n',
    );
    expect(read("data_buffer.jsonl")).toBe('{"ts":1755000101.0,"length":12}\n');
    expect(read("meta.json")).toBe(
      '{\n "run_name": "py-run",\n "start_ts": 1755000000.5,\n "args": {\n  "wandb_group": "g",\n  "colocate": true,\n  "lr": 1.0\n },\n "schema_version": 1\n}',
    );
    // Lane order depends on which test's records reached a flush first.
    expect(JSON.parse(read("lane_catalog.json"))).toEqual({
      version: 1,
      lanes: {
        "10.0.0.2:3": { ranks: [3], engine_addrs: [], roles: ["train"] },
        "10.0.0.1:0": { ranks: [], engine_addrs: ["http://10.0.0.1:15000"], roles: ["rollout"] },
      },
    });
  });

  it("record_args writes miles' curated meta.args; set_router re-points the scraper", async () => {
    const oldRouter = await startFakeEngine(sglangFixture("engine_metrics_router.txt"), "/engine_metrics");
    const newRouter = await startFakeEngine(sglangFixture("router_engine_metrics_pd.txt"), "/engine_metrics");
    const dump2 = mkdtempSync(join(tmpdir(), "rlb-py-"));
    const c2 = await startCollector({ runDir: dump2, gpuSource: "none", router: oldRouter.url, scrapeIntervalS: 0.5, log: captureLog(), now: () => 1755000000.5 });
    try {
      const script = `
import argparse, sys
sys.path.insert(0, ${JSON.stringify(HERE)})
from rlboard_client import RlboardClient
ns = argparse.Namespace(wandb_group="qwen3-8b-grpo", wandb_team=None, colocate=True, rollout_batch_size=32,
                        hf_checkpoint="Qwen/Qwen3-8B", sglang_mem_fraction_static=0.7, lr=1e-6, seed=1)
c = RlboardClient(sys.argv[1], node="10.0.0.9", role="rollout_manager")
c.record_args(ns)
c.set_router(sys.argv[2].replace("http://", ""))
assert c.flush(10)
c.close()
assert c.stats["failed"] == 0 and c.stats["rejected"] == 0 and c.stats["sent"] == 2, c.stats
`;
      const code = await new Promise<number | null>((done) => {
        const p = spawn("python3", ["-c", script, c2.url, newRouter.url], { stdio: "inherit", env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" } });
        p.on("close", done);
      });
      expect(code).toBe(0);
      // The byte-exact example of docs/formats.md §2.5: the snapshot keys, in miles' order, and no others.
      expect(readFileSync(join(c2.dashDir, "meta.json"), "utf8")).toBe(
        '{\n "run_name": "qwen3-8b-grpo",\n "start_ts": 1755000000.5,\n "args": {\n  "wandb_group": "qwen3-8b-grpo",\n  "wandb_team": null,\n  "colocate": true,\n  "rollout_batch_size": 32,\n  "hf_checkpoint": "Qwen/Qwen3-8B",\n  "sglang_mem_fraction_static": 0.7\n },\n "schema_version": 1\n}',
      );
      await waitFor(() => newRouter.hits.length >= 1, 5000, "a scrape of the new router");
      const before = oldRouter.hits.length;
      await new Promise((r) => setTimeout(r, 1200));
      expect(oldRouter.hits.length).toBe(before);
      expect(newRouter.hits.length).toBeGreaterThanOrEqual(2);
    } finally {
      await c2.stop();
      await Promise.all([oldRouter.close(), newRouter.close()]);
      rmSync(dump2, { recursive: true, force: true });
    }
  });
});
