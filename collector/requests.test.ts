/**
 * The per-request timing stream end to end (docs/formats.md §4.14): records posted over
 * real HTTP to a running collector land in `dashboard/requests/{rolloutId}.jsonl`, and the read
 * side turns them into the same `perf/*` metrics and trace timeline as slime's traces.
 */
import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { getSampleTrace, getStepTraces } from "@/lib/rollout/traces";
import { openDumpReader } from "@/lib/store/dumps";
import { parseRequestText, RequestRecord } from "@/lib/store/format";
import { openMetricStore } from "@/lib/store/telemetry";
import { RequestsAppender } from "@/lib/store/writer";
import { derivedMetricKeys, derivedMetricSeries } from "@/lib/timeline/step-metrics";
import { startCollector, type CollectorHandle } from "./server";
import { captureLog } from "./testing/capture-log";
import { postJson } from "./testing/http";

let dump: string;
let c: CollectorHandle | undefined;
beforeEach(() => {
  dump = mkdtempSync(join(tmpdir(), "rlb-req-"));
});
afterEach(async () => {
  await c?.stop();
  c = undefined;
  rmSync(dump, { recursive: true, force: true });
});

const T = 1755000100;
const call = (sample: number, group: number, e2e: number, queue: number, extra: Record<string, unknown> = {}) => ({
  ts: T + sample,
  rollout_id: 3,
  sample_index: sample,
  group_index: group,
  engine: "http://10.0.0.2:30000",
  start_ts: T + sample - e2e,
  meta_info: { prompt_tokens: 100, completion_tokens: 50, cached_tokens: 20 + sample, e2e_latency: e2e, queue_time: queue, finish_reason: { type: "stop" }, ...extra },
});

describe("POST /v1/requests → dashboard/requests/", () => {
  it("round-trips over HTTP into perf/* and the trace timeline", async () => {
    c = await startCollector({ runDir: dump, gpuSource: "none", flushIntervalS: 60, log: captureLog(), now: () => T });
    const records = [
      call(0, 0, 2, 0.5, { pd_prefill_forward_duration: 0.25, pd_decode_forward_duration: 1.25 }),
      call(1, 0, 4, 0.1),
      call(1, 0, 1, "n/a" as unknown as number),
      { ...call(2, 1, 9, 0.2), evaluation: true },
    ];
    expect(await postJson(`${c.url}/v1/requests`, { records })).toEqual({ status: 200, json: { accepted: 4 } });
    const bad = await postJson(`${c.url}/v1/requests`, { records: [{ ...call(0, 0, 1, 1), rollout_id: "x" }] });
    expect(bad.status).toBe(400);
    expect((bad.json.error as { message: string }).message).toMatch(/^records\[0\]\.rollout_id/);

    const text = readFileSync(join(dump, "dashboard/requests/3.jsonl"), "utf8");
    expect(parseRequestText(text).records.map((r) => r.sample_index)).toEqual([0, 1, 1]);
    expect(JSON.parse(text.split("\n")[0]!)).toEqual(RequestRecord.parse(records[0]));
    expect(parseRequestText(readFileSync(join(dump, "dashboard/requests/eval_3.jsonl"), "utf8")).records).toHaveLength(1);

    const store = openMetricStore(dump, { follow: false });
    const dumps = openDumpReader(dump);
    const keys = await derivedMetricKeys({ store, dumps });
    expect(keys).toContain("perf/request/e2e_latency/mean");
    expect(keys).toContain("perf/prefill/forward_duration/max");
    const s = await derivedMetricSeries({ store, dumps }, ["perf/request/e2e_latency/median", "perf/request/queue_time/mean", "perf/request/count", "perf/request/profiled_count"]);
    expect(s["perf/request/e2e_latency/median"]).toEqual({ x: [3], y: [2], ts: [T + 1] });
    expect(s["perf/request/queue_time/mean"]!.y).toEqual([0.3]); // "n/a" skipped
    expect(s["perf/request/count"]!.y).toEqual([3]);
    expect(s["perf/request/profiled_count"]!.y).toEqual([3]);

    const run = { store, dumps };
    const rows = await getStepTraces(run, 3, false);
    expect(rows.rows.map((r) => [r.sample_index, r.requests, r.e2e_latency, r.cached_tokens])).toEqual([
      [0, 1, 2, 20],
      [1, 2, 5, 42],
    ]);
    const one = await getSampleTrace(run, 3, 0, false);
    expect(one.spans.map((x) => x.name)).toEqual(["generate_and_rm", "sglang_generate"]);
    expect(one.requests[0]).toMatchObject({ engine: "http://10.0.0.2:30000", finish_reason: "stop", cached_tokens: 20, e2e_latency: 2 });
    expect(one.requests[0]!.segments.map((x) => [x.phase, x.seconds])).toEqual([
      ["queue", 0.5],
      ["prefill", 0.25],
      ["decode", 1.25],
    ]);
    expect((await getStepTraces(run, 3, true)).rows).toHaveLength(1);
  });

  it("a torn last line never glues onto the next record", async () => {
    const a = new RequestsAppender(join(dump, "dashboard"));
    const rec = RequestRecord.parse(call(0, 0, 1, 0.1));
    await a.append([rec]);
    appendFileSync(join(dump, "dashboard/requests/3.jsonl"), '{"ts": 1, "rollo');
    await a.append([rec, { ...rec, sample_index: 5 }]);
    const { records, bad } = parseRequestText(readFileSync(join(dump, "dashboard/requests/3.jsonl"), "utf8"));
    expect(records.map((r) => r.sample_index)).toEqual([0, 0, 5]);
    expect(bad).toBe(1);
  });

  it("the Python client's record_request posts SGLang's meta_info as returned (lists and non-finite values left out)", async () => {
    c = await startCollector({ runDir: dump, gpuSource: "none", flushIntervalS: 60, log: captureLog(), now: () => T });
    const py = `
import sys; sys.path.insert(0, "collector/clients/python")
from rlboard_client import RlboardClient
c = RlboardClient("${c.url}", node="10.0.0.9", role="rollout_manager")
c.record_request(7, {"e2e_latency": 1.5, "queue_time": 0.25, "prompt_tokens": 12, "cached_tokens": 4, "finish_reason": {"type": "length", "length": 8},
                     "pd_prefill_forward_duration": 0.125, "output_token_logprobs": [[-0.1, 5]], "spec_verify_ct": float("nan")},
                 sample_index=40, group_index=10, engine="http://10.0.0.3:30000", start_ts=${T}.0, ts=${T + 1.5})
c.close()
print("stats", c.stats["sent"], c.stats["failed"], c.stats["rejected"])
`;
    // Asynchronous: the collector answers from this process's event loop.
    const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
      const p = spawn("python3", ["-c", py], { env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" } });
      let stdout = "";
      let stderr = "";
      p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      p.on("close", (status) => done({ status, stdout, stderr }));
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("stats 1 0 0");
    expect(readFileSync(join(dump, "dashboard/requests/7.jsonl"), "utf8")).toBe(
      `{"ts":${T + 1.5},"rollout_id":7,"evaluation":false,"sample_index":40,"group_index":10,"engine":"http://10.0.0.3:30000","start_ts":${T},` +
        '"meta_info":{"e2e_latency":1.5,"queue_time":0.25,"prompt_tokens":12,"cached_tokens":4,"finish_reason":{"type":"length","length":8},"pd_prefill_forward_duration":0.125}}\n',
    );
  });
});
