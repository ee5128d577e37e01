/**
 * Error golden: bad requests across every route family answer the reference's status and
 * exact `detail` (docs/api.md "Errors") — 422 with FastAPI's item list for missing or
 * unparseable parameters, 400/404/503 with a string — and every body also carries
 * rlboard's `error: {code, message}`. Real route handlers, a real data dir, user and token.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEFAULT_GATE, heavyGate, resetHeavyGateForTests } from "@/lib/api/admission";
import { FASTAPI_MSG } from "@/lib/contracts/common";
import { LIMITS } from "@/lib/contracts/limits";
import { setServerEnvForTests } from "@/lib/env";
import { phase, RunBuilder } from "@/lib/store/telemetry/testing";
import { callJson, callRoute, setupTestServer, type TestServer } from "@/lib/testing/api";
import { GET as unknownGET, POST as unknownPOST } from "./[...unknown]/route";
import { GET as advisoryGET } from "./advisory/route";
import { GET as healthGET } from "./health/route";
import { GET as metaGET } from "./meta/route";
import { GET as metricsGET } from "./metrics/route";
import { GET as summaryGET } from "./rollout/[rolloutId]/summary/route";
import { GET as groupsGET } from "./rollout/[rolloutId]/groups/route";
import { GET as trajectoriesGET } from "./rollout/[rolloutId]/trajectories/route";
import { GET as tokensGET } from "./rollout/[rolloutId]/sample/[sampleIndex]/tokens/route";
import { GET as messagesGET } from "./rollout/[rolloutId]/sample/[sampleIndex]/messages/route";
import { GET as runsGET } from "./runs/route";
import { GET as engineGET } from "./timeline/engine_series/route";
import { GET as fleetGET } from "./timeline/fleet/route";
import { GET as gpuGET } from "./timeline/gpu/route";
import { GET as processesGET } from "./timeline/gpu_processes/route";
import { GET as heatmapGET } from "./timeline/heatmap/route";
import { GET as outliersGET } from "./timeline/outliers/route";
import { GET as phasesGET } from "./timeline/phases/route";

type Handler = typeof metaGET;
type Body = { detail: unknown; error: { code: string; message: string } };

let b: RunBuilder;
let server: TestServer;

beforeAll(async () => {
  b = new RunBuilder()
    .meta({ run_name: "errors", start_ts: 1000, args: {} })
    .laneCatalog({ "n1:0": { ranks: [0], roles: ["train"] } })
    .metrics({ ts: 1100, step_key: "rollout/step", step: 0, metrics: { "train/loss": 1.0 } })
    .phases(phase("actor_train", 1050, 1090, { gpus: [0] }))
    .gpu(...Array.from({ length: 20 }, (_, i) => ({ ts: 1000 + i, node: "n1", gpu: 0, util: 50, mem_mb: 100, power_w: 200 })));
  fs.mkdirSync(path.join(b.runDir, "rollout_data"), { recursive: true });
  fs.writeFileSync(path.join(b.runDir, "rollout_data", "5.pt"), "PK\u0003\u0004 torn"); // fresh: still being written
  server = await setupTestServer({ dumpDetails: b.runDir });
});

afterAll(() => {
  resetHeavyGateForTests();
  fs.rmSync(b.runDir, { recursive: true, force: true });
});

const item = (type: keyof typeof FASTAPI_MSG, loc: [string, string], input: string) => ({ type, loc, msg: FASTAPI_MSG[type], input });
const missing = (name: string) => ({ type: "missing", loc: ["query", name], msg: "Field required", input: null });

/** [handler, url, path params, status, exact detail, error code] */
const CASES: [Handler, string, Record<string, string>, number, unknown, string][] = [
  // meta / runs
  [metaGET, "/api/meta?run=nope", {}, 404, "unknown run 'nope' (ids are listed by GET /api/runs)", "not_found"],
  [runsGET, "/api/runs?refresh=maybe", {}, 422, [item("bool_parsing", ["query", "refresh"], "maybe")], "unprocessable"],
  [runsGET, `/api/runs?q=${"x".repeat(201)}`, {}, 400, "q is 201 characters long; the maximum is 200", "bad_request"],
  // metrics
  [metricsGET, "/api/metrics", {}, 422, [missing("keys")], "unprocessable"],
  [metricsGET, "/api/metrics?keys=,", {}, 400, "keys must be a non-empty comma-separated list", "bad_request"],
  [metricsGET, "/api/metrics?keys=dump/nope", {}, 400, "unknown dump metric 'dump/nope'", "bad_request"],
  [metricsGET, "/api/metrics?keys=a&t0=x", {}, 422, [item("float_parsing", ["query", "t0"], "x")], "unprocessable"],
  [metricsGET, `/api/metrics?keys=${Array.from({ length: 257 }, (_, i) => `k${i}`).join(",")}`, {}, 400, "keys lists 257 metrics; the maximum is 256", "bad_request"],
  // timeline/*
  [phasesGET, "/api/timeline/phases?t0=abc", {}, 422, [item("float_parsing", ["query", "t0"], "abc")], "unprocessable"],
  [phasesGET, "/api/timeline/phases?t0=1000&t1=1000", {}, 400, "bad window: t1=1000.0 <= t0=1000.0", "bad_request"],
  [phasesGET, "/api/timeline/phases?t0=0&t1=20000", {}, 400, "window 20000s exceeds max_window_s 14400", "bad_request"],
  [phasesGET, "/api/timeline/phases?lanes=bogus:1", {}, 400, "unknown lane selector kind 'bogus' in 'bogus:1'", "bad_request"],
  [phasesGET, `/api/timeline/phases?lanes=${"g:0,".repeat(1100)}`, {}, 400, "lanes is 4400 characters long; the maximum is 4096", "bad_request"],
  [gpuGET, "/api/timeline/gpu?max_points=1", {}, 400, "max_points=1 must be >= 2", "bad_request"],
  [gpuGET, "/api/timeline/gpu?max_points=1000000000", {}, 400, "max_points=1000000000 exceeds the maximum 40000", "bad_request"],
  [gpuGET, "/api/timeline/gpu?max_points=2.5", {}, 422, [item("int_parsing", ["query", "max_points"], "2.5")], "unprocessable"],
  [gpuGET, "/api/timeline/gpu?max_points=1e9", {}, 422, [item("int_parsing", ["query", "max_points"], "1e9")], "unprocessable"],
  [
    gpuGET,
    "/api/timeline/gpu?t1=zz&max_points=x&format=csv",
    {},
    422,
    [
      item("float_parsing", ["query", "t1"], "zz"),
      item("int_parsing", ["query", "max_points"], "x"),
      { type: "literal_error", loc: ["query", "format"], msg: "Input should be 'json' or 'bin'", input: "csv", ctx: { expected: "'json' or 'bin'" } },
    ],
    "unprocessable",
  ],
  [processesGET, "/api/timeline/gpu_processes?t0=0x10", {}, 422, [item("float_parsing", ["query", "t0"], "0x10")], "unprocessable"],
  [engineGET, "/api/timeline/engine_series", {}, 422, [missing("metric")], "unprocessable"],
  [engineGET, "/api/timeline/engine_series?metric=m&per_dp_rank=maybe", {}, 422, [item("bool_parsing", ["query", "per_dp_rank"], "maybe")], "unprocessable"],
  [engineGET, "/api/timeline/engine_series?metric=m&max_points=50000", {}, 400, "max_points=50000 exceeds the maximum 40000", "bad_request"],
  [heatmapGET, "/api/timeline/heatmap?x_buckets=1", {}, 400, "x_buckets=1 out of range [2, 4000]", "bad_request"],
  [heatmapGET, "/api/timeline/heatmap?metric=nope", {}, 400, "unknown heatmap metric 'nope'", "bad_request"],
  [heatmapGET, "/api/timeline/heatmap?x_buckets=", {}, 422, [item("int_parsing", ["query", "x_buckets"], "")], "unprocessable"],
  [fleetGET, "/api/timeline/fleet?x_buckets=4001", {}, 400, "x_buckets=4001 out of range [2, 4000]", "bad_request"],
  // One bound given: the other is the run's time range end (1000–1100 here), and the
  // window they make can be empty — the user's input, not a server fault (Python: 500).
  [heatmapGET, "/api/timeline/heatmap?t0=5000", {}, 400, "empty window: t1=1100.0 (the run's last timestamp) <= t0=5000.0: give t0 < t1", "bad_request"],
  [heatmapGET, "/api/timeline/heatmap?t1=1000", {}, 400, "empty window: t1=1000.0 <= t0=1000.0 (the run's first timestamp): give t0 < t1", "bad_request"],
  [fleetGET, "/api/timeline/fleet?t1=-5", {}, 400, "empty window: t1=-5.0 <= t0=1000.0 (the run's first timestamp): give t0 < t1", "bad_request"],
  [fleetGET, "/api/timeline/fleet?t0=1e300", {}, 400, "empty window: t1=1100.0 (the run's last timestamp) <= t0=1e+300: give t0 < t1", "bad_request"],
  [outliersGET, "/api/timeline/outliers", {}, 422, [missing("criterion")], "unprocessable"],
  [outliersGET, "/api/timeline/outliers?criterion=lowest_util&top_k=0", {}, 400, "top_k=0 out of range [1, 256]", "bad_request"],
  [outliersGET, "/api/timeline/outliers?criterion=nope", {}, 400, "unknown outlier criterion 'nope'", "bad_request"],
  // advisory
  [advisoryGET, "/api/advisory?t0=0&t1=20000", {}, 400, "window 20000s exceeds max_window_s 14400", "bad_request"],
  [advisoryGET, "/api/advisory?t1=later", {}, 422, [item("float_parsing", ["query", "t1"], "later")], "unprocessable"],
  // rollout/*
  [summaryGET, "/api/rollout/abc/summary", { rolloutId: "abc" }, 422, [item("int_parsing", ["path", "rollout_id"], "abc")], "unprocessable"],
  [summaryGET, "/api/rollout/999/summary", { rolloutId: "999" }, 404, "no such file: rollout_data/999.pt", "not_found"],
  [summaryGET, "/api/rollout/5/summary", { rolloutId: "5" }, 503, "dump still being written: rollout_data/5.pt", "still_writing"],
  [groupsGET, "/api/rollout/0/groups?eval=maybe", { rolloutId: "0" }, 422, [item("bool_parsing", ["query", "eval"], "maybe")], "unprocessable"],
  [trajectoriesGET, "/api/rollout/0/trajectories?sample_index=z", { rolloutId: "0" }, 422, [item("int_parsing", ["query", "sample_index"], "z")], "unprocessable"],
  [
    tokensGET,
    "/api/rollout/0/sample/x/tokens?start=y",
    { rolloutId: "0", sampleIndex: "x" },
    422,
    [item("int_parsing", ["path", "sample_index"], "x"), item("int_parsing", ["query", "start"], "y")],
    "unprocessable",
  ],
  [
    tokensGET,
    "/api/rollout/0/sample/0/tokens?start=10&end=400000",
    { rolloutId: "0", sampleIndex: "0" },
    400,
    `token window end-start=399990 exceeds the maximum ${LIMITS.token_window}`,
    "bad_request",
  ],
  [messagesGET, "/api/rollout/1.5/sample/0/messages", { rolloutId: "1.5", sampleIndex: "0" }, 422, [item("int_parsing", ["path", "rollout_id"], "1.5")], "unprocessable"],
];

describe("error golden: status and exact detail", () => {
  test.each(CASES.map(([handler, url, params, status, detail, code]) => ({ handler, url, params, status, detail, code })))(
    "$status $url",
    async ({ handler, url, params, status, detail, code }) => {
    const r = await callJson<Body>(handler, url, { token: server.token, params });
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    expect(r.body.detail).toEqual(detail);
    expect(r.body.error.code).toBe(code);
    expect(r.body.error.message.length).toBeGreaterThan(0);
    if (typeof detail === "string") expect(r.body.error.message).toBe(detail);
    },
  );

  test("at least 15 bad requests, across every route family", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(15);
    const families = new Set(CASES.map(([, url]) => url.split("?")[0]!.split("/").slice(2, 3)[0]));
    expect([...families].sort()).toEqual(["advisory", "meta", "metrics", "rollout", "runs", "timeline"]);
  });

  test("a 404 message never carries an absolute path", async () => {
    for (const [handler, url, params, status] of CASES.filter((c) => c[3] === 404 || c[3] === 503)) {
      const r = await callJson<Body>(handler, url, { token: server.token, params });
      expect(r.status).toBe(status);
      for (const abs of [b.runDir, server.dataDir, os.tmpdir(), process.cwd()]) expect(JSON.stringify(r.body)).not.toContain(abs);
    }
  });

  test("a 422 message names each parameter for people; the client's error.message", async () => {
    const r = await callJson<Body>(gpuGET, "/api/timeline/gpu?t0=a&max_points=b", { token: server.token });
    expect(r.body.error.message).toBe(`query.t0: ${FASTAPI_MSG.float_parsing}; query.max_points: ${FASTAPI_MSG.int_parsing}`);
  });

  test("auth comes first: no token is a 401 even for a malformed request", async () => {
    const r = await callJson<Body>(gpuGET, "/api/timeline/gpu?max_points=x", { token: null });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("unauthorized");
    expect(r.body.detail).toBe(r.body.error.message);
  });
});

describe("non-finite window bounds are a 400 on every route that takes t0/t1", () => {
  const ROUTES: [string, Handler, string][] = [
    ["phases", phasesGET, "/api/timeline/phases?"],
    ["gpu", gpuGET, "/api/timeline/gpu?"],
    ["gpu_processes", processesGET, "/api/timeline/gpu_processes?"],
    ["engine_series", engineGET, "/api/timeline/engine_series?metric=m&"],
    ["heatmap", heatmapGET, "/api/timeline/heatmap?"],
    ["fleet", fleetGET, "/api/timeline/fleet?"],
    ["outliers", outliersGET, "/api/timeline/outliers?criterion=lowest_util&"],
    ["advisory", advisoryGET, "/api/advisory?"],
    ["metrics", metricsGET, "/api/metrics?keys=train/loss&"],
  ];
  const BOUNDS: [string, string][] = [
    ["t0=nan", "t0=nan is not a finite number"],
    ["t1=inf", "t1=inf is not a finite number"],
    ["t0=-inf", "t0=-inf is not a finite number"],
    ["t0=1000&t1=Infinity", "t1=inf is not a finite number"],
    ["t0=NaN&t1=1100", "t0=nan is not a finite number"],
  ];
  test.each(ROUTES.flatMap(([name, handler, url]) => BOUNDS.map(([q, msg]) => ({ name, handler, url: url + q, msg }))))(
    "$name: $url",
    async ({ handler, url, msg }) => {
      const r = await callJson<Body>(handler, url, { token: server.token });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.detail).toBe(msg);
    },
  );
  test("finite bounds still answer", async () => {
    expect((await callJson(phasesGET, "/api/timeline/phases?t0=1000&t1=1e3", { token: server.token })).status).toBe(400); // t1 <= t0
    expect((await callJson(phasesGET, "/api/timeline/phases?t0=1000&t1=1.1e3", { token: server.token })).status).toBe(200);
  });
});

describe("unknown API paths", () => {
  test("answer FastAPI's 404 JSON for any method, without credentials", async () => {
    for (const h of [unknownGET, unknownPOST]) {
      const res = await h();
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("application/json");
      const body = (await res.json()) as Body;
      expect(body.detail).toBe("Not Found");
      expect(body.error).toEqual({ code: "not_found", message: "Not Found" });
    }
  });
});

describe("heavy-query gate through withApi", () => {
  const tight = { ...DEFAULT_GATE, maxRunning: 4, maxPerUser: 1, maxQueue: 0 };

  test("the gate takes its limits from the server environment", async () => {
    resetHeavyGateForTests();
    setServerEnvForTests({ dataDir: server.dataDir, dumpDetails: b.runDir, heavy: { maxRunning: 3, maxPerUser: 2, maxQueue: 5 } });
    expect((await callRoute(gpuGET, "/api/timeline/gpu?max_points=10", { token: server.token })).status).toBe(200);
    const gate = heavyGate(() => {
      throw new Error("withApi built the gate already");
    });
    expect(gate.opts).toMatchObject({ maxRunning: 3, maxPerUser: 2, maxQueue: 5 });
    resetHeavyGateForTests();
  });

  test("a heavy route beyond the user's limit answers 503 busy with Retry-After; light routes pass", async () => {
    resetHeavyGateForTests();
    const gate = heavyGate(() => tight);
    try {
      // hold the user's only slot, as a long-running heatmap would
      const release = await gate.acquire("user:tester");
      const res = await callRoute(gpuGET, "/api/timeline/gpu?max_points=10", { token: server.token });
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      const body = (await res.json()) as Body;
      expect(body.error.code).toBe("busy");
      expect(body.detail).toBe(body.error.message);
      expect(body.detail).toMatch(/^the server is busy/);
      // light routes bypass the gate
      expect((await callRoute(metaGET, "/api/meta", { token: server.token })).status).toBe(200);
      expect((await callRoute(healthGET, "/api/health", {})).status).toBe(200);
      // another user still gets in
      const other = await server.tokenFor("other-user");
      expect((await callRoute(gpuGET, "/api/timeline/gpu?max_points=10", { token: other })).status).toBe(200);
      release();
      expect((await callRoute(gpuGET, "/api/timeline/gpu?max_points=10", { token: server.token })).status).toBe(200);
      expect(gate.stats()).toEqual({ running: 0, queued: 0 });
    } finally {
      resetHeavyGateForTests();
    }
  });

  test("refused requests (422, 401) never take a slot", async () => {
    resetHeavyGateForTests();
    const gate = heavyGate(() => ({ ...tight, maxRunning: 1 }));
    const release = await gate.acquire("user:someone-else");
    try {
      expect((await callRoute(gpuGET, "/api/timeline/gpu?max_points=x", { token: server.token })).status).toBe(422);
      expect((await callRoute(gpuGET, "/api/timeline/gpu", { token: null })).status).toBe(401);
      expect(gate.stats()).toEqual({ running: 1, queued: 0 });
    } finally {
      release();
      resetHeavyGateForTests();
    }
  });
});
