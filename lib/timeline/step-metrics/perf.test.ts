/**
 * Golden: the `perf/*` family over copies of the slime fixture runs (written by slime's own
 * rollout path) equals `expected_perf.json` — `perf_if_pd_attrs_were_flat` for every
 * trace-derived key (relative 1e-9), both variants, every step — through the real dump
 * reader and `/api/metrics` / `/api/meta` logic.
 */
import fs from "node:fs";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PERF_KEYS } from "@/lib/rollout/perf";
import { openDumpReader } from "@/lib/store/dumps";
import { ageFiles } from "@/lib/store/dumps/test-fixtures";
import type { MetricStore } from "@/lib/store/telemetry";
import { SLIME_DEBUG_FIXTURES } from "@/lib/testing/fixtures";
import { getMetrics } from "@/lib/timeline/metrics";
import { derivedMetricKeys, STEP_METRIC_FAMILIES } from "@/lib/timeline/step-metrics";
import { perfFamily } from "@/lib/timeline/step-metrics/perf";

interface Expected {
  variants: Record<string, { steps: Record<string, { perf: Record<string, number>; perf_if_pd_attrs_were_flat: Record<string, number>; sglang_generate_span_ends: number }> }>;
}
const EXPECTED = JSON.parse(fs.readFileSync(path.join(SLIME_DEBUG_FIXTURES, "expected_perf.json"), "utf8")) as Expected;
const emptyStore = { metrics: async () => [] } as unknown as MetricStore;

let tmp: string;
beforeAll(async () => {
  tmp = await fsp.mkdtemp(path.join(os.tmpdir(), "rlboard-perf-"));
  for (const v of ["with-pd", "no-pd"]) await fsp.cp(path.join(SLIME_DEBUG_FIXTURES, v), path.join(tmp, v), { recursive: true });
  await ageFiles(tmp);
});
afterAll(async () => {
  await fsp.rm(tmp, { recursive: true, force: true });
});

function close(a: number, b: number): boolean {
  return a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
}

describe.each(["with-pd", "no-pd"])("perf/* golden (%s)", (variant) => {
  const steps = EXPECTED.variants[variant]!.steps;
  const expectedKeys = (step: string) => Object.keys(steps[step]!.perf_if_pd_attrs_were_flat).filter((k) => PERF_KEYS.has(k));

  it("lists the trace-derived keys slime's docs promise, plus count / profiled_count", async () => {
    const dumps = openDumpReader(path.join(tmp, variant));
    const keys = await derivedMetricKeys({ store: emptyStore, dumps });
    const want = new Set(Object.keys(steps).flatMap(expectedKeys));
    want.add("perf/request/count");
    want.add("perf/request/profiled_count");
    expect(keys).toEqual([...want].sort());
    if (variant === "no-pd") expect(keys.some((k) => k.startsWith("perf/prefill/"))).toBe(false);
    else expect(keys.filter((k) => k.endsWith("/mean") && (k.startsWith("perf/prefill/") || k.endsWith("_duration/mean")))).toHaveLength(13);
  });

  it("answers /api/metrics with slime's values for every step (x = rollout id)", async () => {
    const dumps = openDumpReader(path.join(tmp, variant));
    const keys = [...new Set(Object.keys(steps).flatMap(expectedKeys))];
    const out = await getMetrics(emptyStore, dumps, { keys: [...keys, "perf/request/count", "perf/request/profiled_count"].join(","), x: "rollout/step", t0: null, t1: null });
    const bad: string[] = [];
    for (const [step, e] of Object.entries(steps)) {
      const rolloutId = Number(step);
      for (const k of expectedKeys(step)) {
        const s = out[k]!;
        const i = s.x.indexOf(rolloutId);
        const got = s.y[i];
        if (i < 0 || typeof got !== "number" || !close(got, e.perf_if_pd_attrs_were_flat[k]!)) bad.push(`${step} ${k}: ${String(got)} != ${e.perf_if_pd_attrs_were_flat[k]}`);
        // slime's own log (`perf`) agrees wherever it has the key.
        if (k in e.perf && typeof got === "number" && !close(got, e.perf[k]!)) bad.push(`${step} ${k} (slime's log)`);
      }
      const count = out["perf/request/count"]!;
      expect(count.y[count.x.indexOf(rolloutId)]).toBe(e.sglang_generate_span_ends);
      const prof = out["perf/request/profiled_count"]!;
      expect(prof.y[prof.x.indexOf(rolloutId)]).toBe(e.sglang_generate_span_ends);
    }
    expect(bad).toEqual([]);
    expect(out["perf/request/e2e_latency/mean"]!.x).toEqual([0, 1, 2]);
    expect(out["perf/request/e2e_latency/mean"]!.ts.every((t) => t > 1.7e9)).toBe(true);
  });
});

describe("perf family on a run without traces", () => {
  it("lists nothing and is registered once", async () => {
    expect(STEP_METRIC_FAMILIES.filter((f) => f === perfFamily)).toHaveLength(1);
    const { writeRollout } = await import("@/lib/store/dumps/test-fixtures");
    const dir = path.join(tmp, "plain");
    await writeRollout(dir, 0, [{ index: 0, response_length: 3 }]);
    await ageFiles(dir);
    expect(await perfFamily.keys({ store: emptyStore, dumps: openDumpReader(dir) })).toEqual([]);
    expect(perfFamily.owns("perf/step_time")).toBe(false);
    expect(perfFamily.owns("perf/request/e2e_latency/p99")).toBe(false);
  });
});
