import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { decodeFrame, decodeGpuFrame, decodePhaseFrame, phaseLanesFromRows } from "@/lib/contracts/binary";
import {
  GetAdvisoryResponse,
  GetBubblesResponse,
  GetEngineSeriesResponse,
  GetFleetResponse,
  GetGpuProcessesResponse,
  GetGpuResponse,
  GetMetaResponse,
  GetMetricsResponse,
  GetOutliersResponse,
  GetPhasesResponse,
  GetTopologyResponse,
  HeatmapHeader,
} from "@/lib/contracts/telemetry";
import { phase, RunBuilder } from "@/lib/store/telemetry/testing";
import { callJson, callRoute, setupTestServer, type TestServer } from "@/lib/testing/api";
import { GET as advisoryGET } from "../advisory/route";
import { GET as metaGET } from "../meta/route";
import { GET as metricsGET } from "../metrics/route";
import { GET as bubblesGET } from "./bubbles/route";
import { GET as engineGET } from "./engine_series/route";
import { GET as fleetGET } from "./fleet/route";
import { GET as gpuGET } from "./gpu/route";
import { GET as processesGET } from "./gpu_processes/route";
import { GET as heatmapGET } from "./heatmap/route";
import { GET as outliersGET } from "./outliers/route";
import { GET as phasesGET } from "./phases/route";
import { GET as topologyGET } from "./topology/route";

let b: RunBuilder;
let server: TestServer;
type ErrBody = { error: { code: string; message: string } };

beforeAll(async () => {
  b = new RunBuilder()
    .meta({ run_name: "routes", start_ts: 1000, args: { sglang_max_running_requests: 64 } })
    .laneCatalog({ "n1:0": { ranks: [0], roles: ["train", "rollout"], engine_addrs: ["http://n1:15000"] }, "n1:1": { ranks: [1], roles: ["train"] } })
    .metrics(
      { ts: 1100, step_key: "rollout/step", step: 0, metrics: { "perf/step_time": 90.0, "perf/wait_time_ratio": 0.5, "train/loss": NaN } },
      { ts: 1200, step_key: "rollout/step", step: 1, metrics: { "perf/step_time": 80.0, "perf/wait_time_ratio": 0.25 } },
    )
    .topology({ ts: 1000, engines: [{ addr: "http://n1:15000", worker_type: "regular", engine_rank: 0, gpus: [["n1", 0]], gpu_uuids: [null] }] })
    .phases(phase("rollout", 1010, 1050, { gpus: [], rank: -1, role: "rollout_manager" }), phase("actor_train", 1050, 1090, { gpus: [0, 1] }))
    .gpu(...Array.from({ length: 200 }, (_, i) => ({ ts: 1000 + i, node: "n1", gpu: i % 2, util: i % 100, mem_mb: 100, power_w: 200 })))
    .engine(
      { ts: 1000, addr: "http://n1:15000", metric: "sglang_num_running_reqs", value: 3 },
      { ts: 1002, addr: "http://n1:15000", metric: "sglang_num_running_reqs", value: NaN },
    )
    .processes({ ts: 1001, node: "n1", gpu: 0, pid: 1, name: "sglang", mem_mb: 50 });
  server = await setupTestServer({ dumpDetails: b.runDir });
});

afterAll(() => {
  fs.rmSync(b.runDir, { recursive: true, force: true });
});

type Handler = typeof metaGET;
const call = <T>(h: Handler, url: string) => callJson<T>(h, url, { token: server.token });

describe("telemetry routes", () => {
  test("GET /api/meta answers the contract", async () => {
    const { status, body } = await call(metaGET, "/api/meta");
    expect(status).toBe(200);
    const meta = GetMetaResponse.parse(body);
    expect(meta).toMatchObject({ mode: "static", run_name: "routes", time_range: [1000, 1200], engine_metric_keys: ["sglang_num_running_reqs"] });
  });

  test.each([
    [topologyGET, "/api/timeline/topology", GetTopologyResponse],
    [phasesGET, "/api/timeline/phases?t0=1000&t1=1100&lanes=g:0", GetPhasesResponse],
    [gpuGET, "/api/timeline/gpu?t0=1000&t1=1100&max_points=10", GetGpuResponse],
    [processesGET, "/api/timeline/gpu_processes", GetGpuProcessesResponse],
    [engineGET, "/api/timeline/engine_series?metric=sglang_num_running_reqs&per_dp_rank=NO", GetEngineSeriesResponse],
    [fleetGET, "/api/timeline/fleet?x_buckets=10", GetFleetResponse],
    [outliersGET, "/api/timeline/outliers?criterion=slowest_phase:rollout&top_k=1", GetOutliersResponse],
    [bubblesGET, "/api/timeline/bubbles", GetBubblesResponse],
    [advisoryGET, "/api/advisory?t0=1000&t1=1200", GetAdvisoryResponse],
    [metricsGET, "/api/metrics?keys=train/loss,perf/step_time", GetMetricsResponse],
  ] as const)("%#: %s answers its contract", async (handler, url, schema) => {
    const { status, body } = await call(handler, url);
    expect(status).toBe(200);
    schema.parse(body);
  });

  test("non-finite numbers travel as null", async () => {
    const m = await call<Record<string, { y: unknown[] }>>(metricsGET, "/api/metrics?keys=train/loss");
    expect(m.body["train/loss"]!.y).toEqual([null]);
    const e = await call<{ series: { value: unknown[] }[] }>(engineGET, "/api/timeline/engine_series?metric=sglang_num_running_reqs");
    expect(e.body.series[0]!.value).toEqual([3, null]);
  });

  test("the heatmap is a binary frame", async () => {
    const res = await callRoute(heatmapGET, "/api/timeline/heatmap?metric=util&t0=1000&t1=1200&x_buckets=20", { token: server.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    const frame = decodeFrame(await res.arrayBuffer());
    const header = HeatmapHeader.parse(frame.header);
    expect(header.rows.length).toBe(2);
    expect(frame.payload.length).toBe(40);
  });

  test("phases?format=bin carries exactly the JSON answer as columns", async () => {
    const q = "/api/timeline/phases?t0=1000&t1=1200";
    const json = await call<GetPhasesResponse>(phasesGET, q);
    const res = await callRoute(phasesGET, `${q}&format=bin`, { token: server.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    const bin = decodePhaseFrame(await res.arrayBuffer());
    expect(json.body.phases.length).toBeGreaterThan(3);
    expect(bin.lanes.length).toBeGreaterThan(1);
    expect(bin).toEqual(phaseLanesFromRows(json.body.phases));
    const one = decodePhaseFrame(await (await callRoute(phasesGET, `${q}&lanes=g:0&format=bin`, { token: server.token })).arrayBuffer());
    expect(one).toEqual(phaseLanesFromRows((await call<GetPhasesResponse>(phasesGET, `${q}&lanes=g:0`)).body.phases));
    expect((await callRoute(phasesGET, `${q}&format=csv`, { token: server.token })).status).toBe(422);
  });

  test("gpu?format=bin carries exactly the JSON answer as columns", async () => {
    const q = "/api/timeline/gpu?t0=1000&t1=1200&max_points=50";
    const json = await call<{ lanes: Record<string, { ts: number[]; util: number[]; mem_mb: number[]; power_w: number[] }> }>(gpuGET, q);
    const res = await callRoute(gpuGET, `${q}&format=bin`, { token: server.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    const bin = decodeGpuFrame(await res.arrayBuffer());
    expect(Object.keys(json.body.lanes).length).toBeGreaterThan(0);
    expect(Object.keys(bin.lanes)).toEqual(Object.keys(json.body.lanes));
    for (const [k, l] of Object.entries(json.body.lanes)) {
      const b = bin.lanes[k]!;
      expect({ ts: Array.from(b.ts), util: Array.from(b.util), mem_mb: Array.from(b.mem_mb), power_w: Array.from(b.power_w) }).toEqual(l);
    }
    const bad = await callRoute(gpuGET, `${q}&format=csv`, { token: server.token });
    expect(bad.status).toBe(422);
  });

  test.each([
    [phasesGET, "/api/timeline/phases?t0=1000&t1=20000", "max_window_s"],
    [phasesGET, "/api/timeline/phases?t0=1000&t1=1000", "bad window: t1=1000.0 <= t0=1000.0"],
    [phasesGET, "/api/timeline/phases?lanes=bogus:1", "unknown lane selector kind 'bogus'"],
    [gpuGET, "/api/timeline/gpu?max_points=1", "max_points=1 must be >= 2"],
    [heatmapGET, "/api/timeline/heatmap?x_buckets=1", "x_buckets=1 out of range [2, 4000]"],
    [heatmapGET, "/api/timeline/heatmap?metric=nope", "unknown heatmap metric 'nope'"],
    [fleetGET, "/api/timeline/fleet?x_buckets=4001", "x_buckets=4001 out of range [2, 4000]"],
    [outliersGET, "/api/timeline/outliers?criterion=lowest_util&top_k=0", "top_k=0 out of range [1, 256]"],
    [outliersGET, "/api/timeline/outliers?criterion=nope", "unknown outlier criterion 'nope'"],
    [metricsGET, "/api/metrics?keys=,", "keys must be a non-empty comma-separated list"],
    [metricsGET, "/api/metrics?keys=dump/nope", "unknown dump metric 'dump/nope'"],
    [advisoryGET, "/api/advisory?t0=0&t1=20000", "max_window_s"],
  ] as const)("%#: bad input %s → 400", async (handler, url, fragment) => {
    const { status, body } = await call<ErrBody>(handler, url);
    expect(status).toBe(400);
    expect(body.error.message).toContain(fragment);
  });

  test.each([
    [phasesGET, "/api/timeline/phases?t0=abc", "query.t0"],
    [gpuGET, "/api/timeline/gpu?max_points=2.5", "query.max_points"],
    [outliersGET, "/api/timeline/outliers", "query.criterion: Field required"],
    [engineGET, "/api/timeline/engine_series", "query.metric: Field required"],
    [engineGET, "/api/timeline/engine_series?metric=x&per_dp_rank=maybe", "query.per_dp_rank"],
  ] as const)("%#: unparseable or missing %s → 422", async (handler, url, fragment) => {
    const { status, body } = await call<ErrBody>(handler, url);
    expect(status).toBe(422);
    expect(body.error.message).toContain(fragment);
  });

  test("an unknown engine metric is an empty list, an unknown run a 404", async () => {
    const { body } = await call<{ series: unknown[] }>(engineGET, "/api/timeline/engine_series?metric=nope");
    expect(body.series).toEqual([]);
    expect((await call(metaGET, "/api/meta?run=nope")).status).toBe(404);
  });
});
