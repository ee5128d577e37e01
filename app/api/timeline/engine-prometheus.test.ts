/**
 * Engine series from the run's Prometheus through the real route handlers (docs/api.md 8.6
 * "Source: Prometheus"): a Prometheus that does not answer is a 502 on the engine panel's
 * call, with a message naming it, while /api/meta still answers (every Prometheus-read
 * name listed, so each panel shows that error); the selector comes from the run's
 * dashboard/prometheus.json or from `--prometheus-run RUN_ID=SELECTOR` (by run id).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { RunBuilder } from "@/lib/store/telemetry/testing";
import { callJson, setupTestServer } from "@/lib/testing/api";
import { GET as metaGET } from "../meta/route";
import { GET as runsGET } from "../runs/route";
import { GET as engineGET } from "./engine_series/route";
import { freePort } from "@/lib/testing/net";

type ErrorBody = { detail: string; error: { code: string; message: string } };

let root: string;
let deadUrl: string;


beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "rlb-engine-prom-"));
  new RunBuilder(path.join(root, "with-file")).meta({ run_name: "with-file", start_ts: 1000, args: {} }).raw("prometheus.json", '{"run_name": "qwen"}');
  new RunBuilder(path.join(root, "by-flag")).meta({ run_name: "by-flag", start_ts: 1000, args: {} });
  new RunBuilder(path.join(root, "files-only")).meta({ run_name: "files-only", start_ts: 1000, args: {} });
  deadUrl = `http://127.0.0.1:${await freePort()}`;
});

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe("engine series with a Prometheus that does not answer", () => {
  test("502 naming it on the series call; /api/meta still answers with the panels", async () => {
    const server = await setupTestServer({ runsRoots: [root], prometheus: { url: deadUrl, runs: { "by-flag": "job=sglang" }, timeoutMs: 2000 } });
    const runs = await callJson<{ runs: { id: string }[] }>(runsGET, "/api/runs", { token: server.token });
    expect(runs.body.runs.map((r) => r.id).sort()).toEqual(["by-flag", "files-only", "with-file"]);

    for (const run of ["with-file", "by-flag"]) {
      const r = await callJson<ErrorBody>(engineGET, `/api/timeline/engine_series?run=${run}&metric=sglang_num_running_reqs&t0=1000&t1=1100`, { token: server.token });
      expect(r.status, run).toBe(502);
      expect(r.body.error).toEqual({ code: "bad_gateway", message: `Prometheus at ${deadUrl} did not answer: ECONNREFUSED` });
      expect(r.body.detail).toBe(r.body.error.message);

      const meta = await callJson<{ engine_metric_keys: string[] }>(metaGET, `/api/meta?run=${run}`, { token: server.token });
      expect(meta.status, run).toBe(200);
      expect(meta.body.engine_metric_keys).toContain("sglang_num_running_reqs");
      expect(meta.body.engine_metric_keys).toContain("sglang_kv_transfer_speed_gb_s_p90");
    }

    // No selector: the collector's files (none here), never Prometheus.
    const plain = await callJson<{ series: unknown[] }>(engineGET, `/api/timeline/engine_series?run=files-only&metric=sglang_num_running_reqs`, { token: server.token });
    expect(plain).toEqual({ status: 200, body: { series: [] } });
    const meta = await callJson<{ engine_metric_keys: string[] }>(metaGET, `/api/meta?run=files-only`, { token: server.token });
    expect(meta.body.engine_metric_keys).toEqual([]);
  });
});
