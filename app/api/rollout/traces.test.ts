/**
 * The trace timeline routes and the perf/* keys over a copy of the slime fixture run
 * (with-pd, old mtimes) served from a runs root: `/traces`, `/sample/{idx}/trace`,
 * `/api/meta.metric_keys` and `/api/metrics` through the real route handlers.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { GetSampleTraceResponse, GetStepTracesResponse } from "@/lib/contracts/traces";
import { ageFiles, makeRunDir, writeRollout } from "@/lib/store/dumps/test-fixtures";
import { callJson, setupTestServer, type TestServer } from "@/lib/testing/api";
import { SLIME_DEBUG_FIXTURES } from "@/lib/testing/fixtures";
import { GET as metaGET } from "@/app/api/meta/route";
import { GET as metricsGET } from "@/app/api/metrics/route";
import { GET as tracesGET } from "./[rolloutId]/traces/route";
import { GET as traceGET } from "./[rolloutId]/sample/[sampleIndex]/trace/route";

let root: string;
let server: TestServer;
type ErrBody = { error: { code: string; message: string } };

beforeAll(async () => {
  root = await makeRunDir("rlboard-traces-");
  await fs.cp(path.join(SLIME_DEBUG_FIXTURES, "with-pd"), path.join(root, "slime-pd"), { recursive: true });
  await writeRollout(path.join(root, "plain"), 0, [{ index: 0, response_length: 2 }]);
  await writeRollout(path.join(root, "plain"), 1, [{ index: 1, response_length: 2 }]);
  await ageFiles(root);
  server = await setupTestServer({ runsRoots: [root] });
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const call = <T>(handler: typeof tracesGET, url: string, params: Record<string, string> = {}) => callJson<T>(handler, url, { token: server.token, params });

describe("GET /api/rollout/{id}/traces", () => {
  test("one swimlane row per sample on one time axis, with request sums", async () => {
    const { status, body } = await call(tracesGET, "/api/rollout/0/traces?run=slime-pd", { rolloutId: "0" });
    expect(status).toBe(200);
    const r = GetStepTracesResponse.parse(body);
    expect(r.rows).toHaveLength(16);
    const s0 = r.rows.find((x) => x.sample_index === 0)!;
    expect(s0.requests).toBe(1);
    expect(s0.e2e_latency).toBeCloseTo(7.1986231519669674, 12);
    expect(s0.cached_tokens).toBe(2);
    expect(s0.spans.map((s) => s.name)).toEqual(["generate_and_rm_group", "generate_and_rm", "sglang_generate", "sglang_pd_prefill", "sglang_pd_decode", "reward_model"]);
    for (const row of r.rows) expect(row.start! >= r.t0! && row.end! <= r.t1!).toBe(true);
  });

  test("a dump without traces → 404; an unknown step → 404", async () => {
    const plain = await call<ErrBody>(tracesGET, "/api/rollout/0/traces?run=plain", { rolloutId: "0" });
    expect(plain.status).toBe(404);
    expect(plain.body.error.message).toContain("carries no request traces");
    expect((await call(tracesGET, "/api/rollout/7/traces?run=slime-pd", { rolloutId: "7" })).status).toBe(404);
    // a later step of a run whose first dump has no trace is not parsed for one
    const later = await call<ErrBody>(tracesGET, "/api/rollout/1/traces?run=plain", { rolloutId: "1" });
    expect(later.status).toBe(404);
    expect(later.body.error.message).toContain("the run's dumps have none");
    const slime2 = await call(tracesGET, "/api/rollout/2/traces?run=slime-pd", { rolloutId: "2" });
    expect(GetStepTracesResponse.parse(slime2.body).rows).toHaveLength(16);
  });
});

describe("GET /api/rollout/{id}/sample/{idx}/trace", () => {
  test("nested spans, [P]/[D] virtual lanes, the summary event and a request card summing to the e2e latency", async () => {
    const { status, body } = await call(traceGET, "/api/rollout/0/sample/0/trace?run=slime-pd", { rolloutId: "0", sampleIndex: "0" });
    expect(status).toBe(200);
    const t = GetSampleTraceResponse.parse(body);
    const byName = new Map(t.spans.map((s) => [s.name, s]));
    expect(byName.get("generate_and_rm_group")!.depth).toBe(0);
    expect(byName.get("sglang_generate")!.depth).toBe(2);
    const gen = byName.get("sglang_generate")!;
    expect(byName.get("sglang_pd_prefill_forward")).toMatchObject({ lane: "P", request_span_id: gen.span_id, depth: 4 });
    expect(byName.get("sglang_pd_decode")).toMatchObject({ lane: "D", kind: "pd_decode" });
    expect(t.spans.filter((s) => s.lane === "P")).toHaveLength(6);
    expect(t.spans.filter((s) => s.lane === "D")).toHaveLength(6);
    expect(gen.attrs).toMatchObject({ max_new_tokens: 512, prompt_tokens: 169, finish_reason: "stop" });
    expect(t.events.map((e) => e.name)).toEqual(["sglang_pd_summary"]);
    const card = t.requests[0]!;
    expect(card).toMatchObject({ name: "sglang_generate", pd: true, prompt_tokens: 169, completion_tokens: 258, cached_tokens: 2 });
    expect(card.segments.map((s) => s.phase)).toEqual(["queue", "prefill", "decode"]);
    const total = card.segments.reduce((a, s) => a + s.seconds!, 0);
    expect(total).toBeCloseTo(card.e2e_latency!, 12);
    expect(card.segments[2]!.seconds).toBe(7.036822893320189); // the PD decode forward
    expect(card.segments[1]!.parts.map((p) => p.name)).toEqual(["bootstrap_queue", "bootstrap", "alloc_wait", "forward", "transfer_queue"]);
  });

  test("unknown sample → 404; a sample without a trace → 404", async () => {
    expect((await call(traceGET, "/api/rollout/0/sample/999/trace?run=slime-pd", { rolloutId: "0", sampleIndex: "999" })).status).toBe(404);
    const plain = await call<ErrBody>(traceGET, "/api/rollout/0/sample/0/trace?run=plain", { rolloutId: "0", sampleIndex: "0" });
    expect(plain.status).toBe(404);
    expect(plain.body.error.message).toContain("carries no request trace");
  });
});

describe("perf/* through /api/meta and /api/metrics", () => {
  test("a slime run (no metrics stream) lists the perf keys in metric_keys and serves them by rollout id", async () => {
    const meta = await call<{ metric_keys: string[]; derived_metric_keys: string[] }>(metaGET, "/api/meta?run=slime-pd");
    expect(meta.status).toBe(200);
    expect(meta.body.metric_keys).toContain("perf/request/e2e_latency/mean");
    expect(meta.body.metric_keys).toContain("perf/prefill/transfer_speed_gb_s/median");
    expect(meta.body.derived_metric_keys).toContain("perf/request/profiled_count");
    const m = await call<Record<string, { x: number[]; y: number[] }>>(metricsGET, "/api/metrics?run=slime-pd&keys=perf/request/e2e_latency/mean,perf/request/count&x=rollout/step");
    expect(m.status).toBe(200);
    expect(m.body["perf/request/e2e_latency/mean"]!.x).toEqual([0, 1, 2]);
    expect(m.body["perf/request/e2e_latency/mean"]!.y[0]).toBeCloseTo(5.757528541335448, 12);
    expect(m.body["perf/request/count"]!.y).toEqual([16, 16, 16]);
    const plain = await call<{ metric_keys: string[] }>(metaGET, "/api/meta?run=plain");
    expect(plain.body.metric_keys.some((k) => k.startsWith("perf/"))).toBe(false);
  });
});
