/**
 * GET /api/metrics over real HTTP (the route handler behind a node:http server on
 * 127.0.0.1): the multi-key form the compare overlay batches into answers each key as
 * its single-key request does, `format=bin` carries exactly the JSON answer
 * (lib/contracts/metrics-frame.ts), and bad input and unknown runs keep the error table
 * of docs/api.md 9.3 in both forms.
 */
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_KEYS_PER_REQUEST, MetricsBatcher, overlayColumns } from "@/components/compare/metrics-batch";
import { prepareOverlay } from "@/lib/compare/overlay";
import { ApiClientError, errorFromResponse } from "@/lib/client/fetcher";
import { decodeMetricsColumns, decodeMetricsFrame } from "@/lib/contracts/metrics-frame";
import { GetMetricsResponse } from "@/lib/contracts/telemetry";
import { restrictRun } from "@/lib/server/auth/run-access";
import { getDb } from "@/lib/server/db";
import { RunBuilder } from "@/lib/store/telemetry/testing";
import type { MetricsRecord } from "@/lib/store/telemetry/types";
import { setupTestServer, type TestServer } from "@/lib/testing/api";
import { freePort } from "@/lib/testing/net";
import { GET } from "@/app/api/metrics/route";

let server: TestServer;
let httpServer: http.Server;
let base: string;

const KEYS = ["rollout/raw_reward", "perf/step_time", "train/loss", "rollout/note", "eval/score"];

const recs: MetricsRecord[] = [
  ...Array.from({ length: 6 }, (_, i) => ({
    ts: 1000.25 + 10 * i,
    step_key: "rollout/step",
    step: i,
    metrics: {
      "rollout/raw_reward": 0.1 * i,
      "perf/step_time": 90 + i,
      // NaN and ±Inf travel as null; strings and booleans as themselves
      "train/loss": i === 2 ? Number.NaN : i === 3 ? Number.POSITIVE_INFINITY : 1 / (i + 1),
      "rollout/note": i % 2 ? "warmup" : i === 4 ? true : 7,
    },
  })),
  { ts: 1070, step_key: "rollout/step", step: 6, metrics: { "perf/step_time": 99 } },
  { ts: 1080, step_key: "eval/step", step: 0, metrics: { "eval/score": 0.75 } },
  { ts: 1090, step_key: "eval/step", step: null, metrics: { "eval/score": 0.5 } },
];

/** The App Router handler on a real socket: the request URL and bearer token in, status, headers and body bytes out. */
function serve(): http.Server {
  return http.createServer((req, res) => {
    const headers = new Headers();
    if (req.headers.authorization) headers.set("authorization", req.headers.authorization);
    void GET(new Request(new URL(req.url ?? "/", base), { headers }), { params: Promise.resolve({}) }).then(async (r) => {
      res.writeHead(r.status, Object.fromEntries(r.headers));
      res.end(Buffer.from(await r.arrayBuffer()));
    });
  });
}

async function get(q: string, token: string | null = server.token): Promise<Response> {
  return fetch(`${base}/api/metrics${q}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
}

async function json<T>(q: string, token?: string | null): Promise<{ status: number; body: T }> {
  const r = await get(q, token);
  return { status: r.status, body: (await r.json()) as T };
}

type Err = { error: { code: string; message: string } };
const keysParam = (keys: readonly string[]) => encodeURIComponent(keys.join(","));

beforeAll(async () => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-metrics-route-")));
  new RunBuilder(path.join(root, "a")).meta({ run_name: "A", start_ts: 1000 }).metrics(...recs);
  new RunBuilder(path.join(root, "secret")).meta({ run_name: "S", start_ts: 1000 }).metrics(...recs);
  server = await setupTestServer({ runsRoots: [root] });
  await server.tokenFor("alice");
  restrictRun(getDb(), "secret", ["alice"]);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  httpServer = serve();
  await new Promise<void>((resolve) => httpServer.listen(port, "127.0.0.1", resolve));
});

afterAll(async () => {
  await new Promise((resolve) => httpServer.close(resolve));
});

describe("GET /api/metrics, several keys at once", () => {
  it("each key's series equals its single-key answer (step axis, eval axis, a window)", async () => {
    for (const x of ["rollout/step", "eval/step"]) {
      for (const win of ["", "&t0=1015&t1=1045"]) {
        const many = await json<Record<string, unknown>>(`?run=a&x=${encodeURIComponent(x)}&keys=${keysParam(KEYS)}${win}`);
        expect(many.status).toBe(200);
        const body = GetMetricsResponse.parse(many.body);
        expect(Object.keys(body)).toEqual(KEYS);
        for (const k of KEYS) {
          const one = await json<Record<string, unknown>>(`?run=a&x=${encodeURIComponent(x)}&keys=${encodeURIComponent(k)}${win}`);
          expect(one.status).toBe(200);
          expect(body[k], `${x} ${k} ${win}`).toEqual(one.body[k]);
        }
      }
    }
    // the values themselves, so equal-but-empty answers cannot pass
    const m = (await json<Record<string, { x: unknown[]; y: unknown[]; ts: number[] }>>(`?run=a&keys=${keysParam(KEYS)}`)).body;
    expect(m["train/loss"]!.y).toEqual([1, 0.5, null, null, 0.2, 1 / 6]);
    expect(m["rollout/note"]!.y).toEqual([7, "warmup", 7, "warmup", true, "warmup"]);
    expect(m["perf/step_time"]!.x).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(m["perf/step_time"]!.ts[0]).toBe(1000.25);
    expect(m["eval/score"]!.y).toEqual([]);
    const ev = (await json<Record<string, { x: unknown[]; y: unknown[] }>>(`?run=a&x=eval%2Fstep&keys=eval%2Fscore`)).body;
    expect(ev["eval/score"]).toMatchObject({ x: [0, null], y: [0.75, 0.5] });
  });

  it("format=bin: a binary frame that decodes to exactly the JSON answer", async () => {
    for (const q of [`?run=a&keys=${keysParam(KEYS)}`, `?run=a&x=eval%2Fstep&keys=${keysParam(KEYS)}`, `?run=a&keys=perf%2Fstep_time&t0=1020&t1=1060`]) {
      const j = await json<Record<string, unknown>>(q);
      const r = await get(`${q}&format=bin`);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/octet-stream");
      const decoded = decodeMetricsFrame(await r.arrayBuffer());
      expect(Object.keys(decoded)).toEqual(Object.keys(j.body));
      expect(decoded).toEqual(j.body);
    }
    expect((await json<Record<string, unknown>>(`?run=a&keys=perf%2Fstep_time&format=json`)).body).toEqual(
      (await json<Record<string, unknown>>(`?run=a&keys=perf%2Fstep_time`)).body,
    );
  });

  it("bad input: 400 for no keys or too many, 422 for a missing keys or an unknown format — each with a message naming it", async () => {
    for (const [q, status, fragment] of [
      ["?run=a&keys=,", 400, "keys must be a non-empty comma-separated list"],
      [`?run=a&keys=${Array.from({ length: 257 }, (_, i) => `m${i}`).join(",")}`, 400, "keys lists 257 metrics; the maximum is 256"],
      [`?run=a&keys=${keysParam(["perf/step_time", "dump/nope"])}`, 400, "unknown dump metric 'dump/nope'"],
      ["?run=a", 422, "query.keys"],
      ["?run=a&keys=perf%2Fstep_time&format=xml", 422, "query.format"],
      ["?run=a&keys=perf%2Fstep_time&t0=abc", 422, "query.t0"],
    ] as const) {
      for (const fmt of ["", "&format=bin"]) {
        const url = q.includes("format=") ? q : `${q}${fmt}`;
        const res = await json<Err>(url);
        expect(res.status, url).toBe(status);
        expect(res.body.error.message, url).toContain(fragment);
      }
    }
  });

  it("401 without credentials, 404 naming an unknown run; a restricted run's metrics answer every member (the restriction covers trajectory content, docs/api.md 9.2)", async () => {
    expect((await get(`?run=a&keys=perf%2Fstep_time`, null)).status).toBe(401);
    expect((await get(`?run=a&keys=perf%2Fstep_time&format=bin`, null)).status).toBe(401);
    for (const fmt of ["", "&format=bin"]) {
      const missing = await json<Err>(`?run=nope&keys=${keysParam(KEYS)}${fmt}`);
      expect(missing.status).toBe(404);
      expect(missing.body.error.message).toContain("unknown run 'nope'");
    }
    const restricted = await get(`?run=secret&keys=${keysParam(KEYS)}&format=bin`);
    expect(restricted.status).toBe(200);
    expect(decodeMetricsFrame(await restricted.arrayBuffer())["perf/step_time"]!.y).toEqual([90, 91, 92, 93, 94, 95, 99]);
  });
});

describe("the compare overlay's batcher (components/compare/metrics-batch.ts) against the route", () => {
  /** The batcher's requests over real HTTP, as the browser sends them (a relative URL, the session's credentials). */
  const sent: string[] = [];
  const fetchFrame = async (url: string) => {
    sent.push(url);
    const r = await get(url.replace(/^\/api\/metrics/, ""));
    if (!r.ok) throw await errorFromResponse(r);
    return decodeMetricsFrame(await r.arrayBuffer());
  };

  it("asks made together go out as one request per run and axis; each gets its single-key JSON series", async () => {
    sent.length = 0;
    const b = new MetricsBatcher(fetchFrame);
    const asks = [...KEYS.map((k) => ["a", "rollout/step", k] as const), ["a", "eval/step", "eval/score"] as const, ["secret", "rollout/step", "perf/step_time"] as const, ["a", "rollout/step", "perf/step_time"] as const];
    const got = await Promise.all(asks.map(([run, x, k]) => b.load(run, x, k)));
    expect(sent.length).toBe(3);
    expect(sent.every((u) => u.includes("format=bin"))).toBe(true);
    for (const [i, [run, x, k]] of asks.entries()) {
      const one = await json<Record<string, unknown>>(`?run=${run}&x=${encodeURIComponent(x)}&keys=${encodeURIComponent(k)}`);
      expect(got[i], `${run} ${x} ${k}`).toEqual(one.body[k]);
    }
    expect(got[1]!.y).toEqual([90, 91, 92, 93, 94, 95, 99]);
  });

  it(`at most ${MAX_KEYS_PER_REQUEST} keys per request`, async () => {
    sent.length = 0;
    const b = new MetricsBatcher(fetchFrame);
    const keys = Array.from({ length: 2 * MAX_KEYS_PER_REQUEST + 1 }, (_, i) => (i === 0 ? "perf/step_time" : `absent/m${i}`));
    const got = await Promise.all(keys.map((k) => b.load("a", "rollout/step", k)));
    expect(sent.length).toBe(3);
    expect(sent.map((u) => decodeURIComponent(new URL(u, base).searchParams.get("keys")!).split(",").length)).toEqual([MAX_KEYS_PER_REQUEST, MAX_KEYS_PER_REQUEST, 1]);
    expect(got[0]!.x).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(got[5]).toEqual({ x: [], y: [], ts: [] });
  });

  it("a bad key fails only its own ask (the batch is asked again key by key); an unknown run fails every ask with its 404", async () => {
    sent.length = 0;
    const b = new MetricsBatcher(fetchFrame);
    const [good, bad] = await Promise.allSettled([b.load("a", "rollout/step", "perf/step_time"), b.load("a", "rollout/step", "dump/nope")]);
    expect(good.status === "fulfilled" && good.value.y).toEqual([90, 91, 92, 93, 94, 95, 99]);
    expect(bad.status === "rejected" && bad.reason instanceof ApiClientError && [bad.reason.status, bad.reason.message]).toEqual([400, "unknown dump metric 'dump/nope'"]);
    expect(sent.length).toBe(3);
    const gone = await Promise.allSettled([b.load("nope", "rollout/step", "perf/step_time"), b.load("nope", "rollout/step", "train/loss")]);
    expect(gone.map((r) => r.status === "rejected" && (r.reason as ApiClientError).status)).toEqual([404, 404]);
    expect(sent.length).toBe(4);
  });
});

describe("the overlay drawn from the frame's columns", () => {
  it("is the overlay drawn from the JSON answer: same points, values and order, both x modes", async () => {
    const q = `?run=a&keys=${keysParam(KEYS)}`;
    const j = (await json<Record<string, { x: (number | null)[]; y: unknown[]; ts: number[] }>>(q)).body;
    const cols = decodeMetricsColumns(await (await get(`${q}&format=bin`)).arrayBuffer());
    for (const mode of ["step", "time"] as const) {
      for (const k of KEYS) {
        const run = (points: Parameters<typeof prepareOverlay>[0][number]["points"]) => [{ id: "a", name: "A", color: "#123456", startTs: 1000, points }];
        const fromJson = prepareOverlay(run(j[k]), mode);
        const fromCols = prepareOverlay(run(overlayColumns(cols[k]!)), mode);
        expect(fromCols, `${mode} ${k}`).toEqual(fromJson);
      }
    }
    // booleans count 1/0, strings are gaps, as from JSON
    expect([...prepareOverlay([{ id: "a", name: "A", color: "#1", startTs: 1000, points: overlayColumns(cols["rollout/note"]!) }], "step").model.series[0]!.y]).toEqual([7, Number.NaN, 7, Number.NaN, 1, Number.NaN]);
  });
});
