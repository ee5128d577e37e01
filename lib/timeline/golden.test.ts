/**
 * Parity with the Python server's answers for fixtures/miles-demo (golden.json), with
 * the parity comparison rule: floats rel 1e-5 / abs 1e-6, golden keys
 * must exist in ours (extra keys allowed), lists of equal length, 400 ≡ 422.
 *
 * Parts that need the dump reader (/api/meta `rollout_ids` and `has_tokenizer`, `dump/*`
 * series) are compared only once lib/store/dumps exports `openDumpReader`.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ZodError, type z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "@/lib/contracts/errors";
import { decodeFrame } from "@/lib/contracts/binary";
import * as C from "@/lib/contracts/telemetry";
import { openMetricStore, type MetricStore } from "@/lib/store/telemetry";
import { copyRunWithOldMtimes } from "@/lib/store/telemetry/testing";
import * as api from "@/lib/timeline/api";
import type { DumpReader } from "@/lib/store/dumps";
import type { DumpSource } from "@/lib/timeline/dump-source";
import { MILES_DEMO_GOLDEN, MILES_DEMO_RUN } from "@/lib/testing/fixtures";

// The dump reader must satisfy the interface the telemetry side codes against.
export type DumpReaderIsDumpSource = DumpReader extends DumpSource ? true : never;
const _dumpReaderFits: DumpReaderIsDumpSource = true;
void _dumpReaderFits;

const here = path.dirname(fileURLToPath(import.meta.url));
const FIXTURE = MILES_DEMO_RUN;
const GOLDEN = MILES_DEMO_GOLDEN;
const DUMPS_INDEX = path.resolve(here, "../store/dumps/index.ts");

interface Golden {
  url: string;
  status: number;
  body: unknown;
}

/** The parity check's `same`: returns the list of differences (golden `a` vs ours `b`). */
function parityDiff(a: unknown, b: unknown, p = "$", out: string[] = []): string[] {
  if (typeof a === "number" || typeof b === "number") {
    if (typeof a !== "number" || typeof b !== "number") {
      out.push(`${p}: ${JSON.stringify(a)} != ${JSON.stringify(b)}`);
      return out;
    }
    if (a === b || Math.abs(a - b) <= Math.max(1e-5 * Math.max(Math.abs(a), Math.abs(b)), 1e-6)) return out;
    out.push(`${p}: ${a} != ${b}`);
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) {
      out.push(`${p}: length ${a.length} != ${b.length}`);
      return out;
    }
    for (let i = 0; i < a.length && out.length <= 5; i++) parityDiff(a[i], b[i], `${p}[${i}]`, out);
    return out;
  }
  if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
    for (const k of Object.keys(a)) {
      if (!(k in b)) out.push(`${p}.${k}: missing`);
      else parityDiff((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${p}.${k}`, out);
    }
    return out;
  }
  if (a !== b) out.push(`${p}: ${JSON.stringify(a)?.slice(0, 80)} != ${JSON.stringify(b)?.slice(0, 80)}`);
  return out;
}

const SETTINGS = { follow: false, lowMfuThreshold: 0.15, useUtilizationOverview: false };

/** A dump source for runs served without the dump reader: nothing visible. */
const NO_DUMPS: DumpSource = {
  listRolloutIds: async () => ({ train: [], eval: [] }),
  hasTokenizer: async () => false,
  stepAggregates: async () => [],
  summary: async () => {
    throw new ApiError("not_found", "no dump reader");
  },
  groups: async () => {
    throw new ApiError("not_found", "no dump reader");
  },
};

function parse<S extends z.ZodType>(schema: S, q: Record<string, string>): z.infer<S> {
  return schema.parse(q);
}

/** JSON round trip through the API serializer rules (NaN → null). */
const wire = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

async function answer(store: MetricStore, dumps: DumpSource, url: string): Promise<{ status: number; body: unknown }> {
  const u = new URL(url, "http://x");
  const q = Object.fromEntries(u.searchParams.entries());
  const run = { store, dumps, settings: SETTINGS };
  try {
    let body: unknown;
    switch (u.pathname) {
      case "/api/meta":
        body = await api.getMeta(run);
        C.GetMetaResponse.parse(wire(body));
        break;
      case "/api/timeline/topology":
        body = await api.getTopology(store);
        C.GetTopologyResponse.parse(wire(body));
        break;
      case "/api/timeline/phases":
        body = await api.getPhases(store, parse(C.GetPhasesQuery, q));
        C.GetPhasesResponse.parse(wire(body));
        break;
      case "/api/timeline/gpu":
        body = await api.getGpu(store, parse(C.GetGpuQuery, q));
        C.GetGpuResponse.parse(wire(body));
        break;
      case "/api/timeline/gpu_processes":
        body = await api.getGpuProcesses(store, parse(C.GetGpuProcessesQuery, q));
        C.GetGpuProcessesResponse.parse(wire(body));
        break;
      case "/api/timeline/engine_series":
        body = await api.getEngineSeries(store, parse(C.GetEngineSeriesQuery, q));
        C.GetEngineSeriesResponse.parse(wire(body));
        break;
      case "/api/timeline/heatmap": {
        const frame = decodeFrame(await api.getHeatmapFrame(store, parse(C.GetHeatmapQuery, q)));
        C.HeatmapHeader.parse(frame.header);
        body = { header: frame.header, matrix: [...frame.payload] };
        break;
      }
      case "/api/timeline/fleet":
        body = await api.getFleet(store, parse(C.GetFleetQuery, q));
        C.GetFleetResponse.parse(wire(body));
        break;
      case "/api/timeline/outliers":
        body = await api.getOutliers(store, parse(C.GetOutliersQuery, q));
        C.GetOutliersResponse.parse(wire(body));
        break;
      case "/api/timeline/bubbles":
        body = await api.getBubbles(store);
        C.GetBubblesResponse.parse(wire(body));
        break;
      case "/api/advisory":
        body = await api.getAdvisory(run, parse(C.GetAdvisoryQuery, q));
        C.GetAdvisoryResponse.parse(wire(body));
        break;
      case "/api/metrics":
        body = await api.getMetrics(store, dumps, parse(C.GetMetricsQuery, q));
        C.GetMetricsResponse.parse(wire(body));
        break;
      default:
        throw new Error(`no telemetry handler for ${url}`);
    }
    return { status: 200, body: wire(body) };
  } catch (err) {
    if (err instanceof ApiError) return { status: err.status, body: null };
    if (err instanceof ZodError) return { status: 400, body: null };
    throw err;
  }
}

const golden = (JSON.parse(fs.readFileSync(GOLDEN, "utf8")) as Golden[]).filter((g) => !g.url.startsWith("/api/rollout"));

describe("parity with the Python server on fixtures/miles-demo (telemetry URLs)", () => {
  let runDir: string;
  let store: MetricStore;
  let dumps: DumpSource = NO_DUMPS;
  let haveDumps = false;

  beforeAll(async () => {
    runDir = copyRunWithOldMtimes(FIXTURE);
    store = openMetricStore(runDir, { follow: false });
    if (fs.existsSync(DUMPS_INDEX)) {
      const mod = (await import(/* @vite-ignore */ DUMPS_INDEX)) as {
        openDumpReader?: (dir: string, opts: Record<string, unknown>) => DumpSource;
      };
      if (mod.openDumpReader) {
        dumps = mod.openDumpReader(runDir, { cacheDir: path.join(runDir, ".cache-dumps"), tensorLru: 2 });
        haveDumps = true;
      }
    }
  });

  afterAll(() => {
    if (runDir) fs.rmSync(runDir, { recursive: true, force: true });
  });

  it.each(golden.map((g) => [g.url, g] as const))("%s", async (_url, g) => {
    const ours = await answer(store, dumps, g.url);
    const okStatus = ours.status === g.status || (new Set([400, 422]).has(ours.status) && new Set([400, 422]).has(g.status));
    expect(okStatus, `status ${ours.status} != ${g.status}`).toBe(true);
    if (g.body === null) return;
    let expected = g.body;
    if (!haveDumps) {
      // Without the dump reader, leave out exactly what needs it.
      if (g.url === "/api/meta") {
        const { rollout_ids: _r, capabilities, ...rest } = expected as Record<string, unknown>;
        const { has_tokenizer: _t, ...caps } = capabilities as Record<string, unknown>;
        expected = { ...rest, capabilities: caps };
      }
      if (g.url.startsWith("/api/metrics"))
        expected = Object.fromEntries(Object.entries(expected as object).filter(([k]) => !k.startsWith("dump/")));
    }
    const diffs = parityDiff(expected, ours.body);
    expect(diffs).toEqual([]);
  });
});
