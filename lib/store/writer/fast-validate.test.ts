import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { FAST_CHECKS } from "./fast-validate";
import { PyFloat, parsePyJson } from "./python-json";
import { STREAM_SCHEMAS } from "./records";
import type { StreamName } from "./records";
import { MILES_DEMO_RUN } from "@/lib/testing/fixtures";

const DASH = resolve(MILES_DEMO_RUN, "dashboard");
const lines = (f: string): string[] => readFileSync(resolve(DASH, f), "utf8").trim().split("\n");

const SAMPLES: Partial<Record<StreamName, unknown[]>> = {
  gpu_util: lines("gpu_util/19700112_13.jsonl").slice(0, 20).map((l) => JSON.parse(l) as unknown),
  engine_series: [
    ...lines("engine_series/19700112_13.jsonl").slice(0, 20).map((l) => JSON.parse(l) as unknown),
    { ts: 1, addr: "a", metric: "m", labels: { engine_type: "prefill", dp_rank: "0" }, value: NaN },
  ],
  phases: lines("phases/19700112_13.jsonl").map((l) => JSON.parse(l) as unknown),
  trajectories: lines("trajectories/19700112_13.jsonl").slice(0, 20).map((l) => JSON.parse(l) as unknown),
  metrics: [
    // Integral float timestamps arrive as PyFloat and take the zod path; use plain ones here.
    ...lines("metrics.jsonl").map((l) => ({ ...(parsePyJson(l) as object), ts: 1000125.5 })),
    parsePyJson('{"ts":1.5,"step_key":null,"step":null,"metrics":{"a":NaN,"b":true,"c":"s","d":-Infinity}}'),
  ],
  gpu_processes: [{ ts: 1755000045.2, node: "10.0.0.1", gpu: 0, pid: 4321, name: "sglang::scheduler_TP0", mem_mb: 40960 }],
};

const BAD_VALUES: unknown[] = [undefined, null, "x", -1, 1.5, NaN, Infinity, 1e20, -1e-9, 2 ** 53, true, [], {}, [1.5], { a: 1 }, new PyFloat(3), new Map()];

function* mutations(r: Record<string, unknown>): Generator<unknown> {
  for (const k of Object.keys(r)) {
    for (const v of BAD_VALUES) {
      const m = { ...r };
      if (v === undefined) delete m[k];
      else m[k] = v;
      yield m;
      const inner = r[k];
      if (inner && typeof inner === "object" && !Array.isArray(inner)) {
        for (const ik of Object.keys(inner)) yield { ...r, [k]: { ...inner, [ik]: v } };
        yield { ...r, [k]: { ...inner, extra: v } };
      }
    }
  }
  yield { ...r, extra: 1 };
}

describe("FAST_CHECKS agree with the zod schemas", () => {
  it.each(Object.keys(SAMPLES) as StreamName[])("%s: accepts the fixtures and never accepts what zod rejects or changes", (stream) => {
    const fast = FAST_CHECKS[stream];
    expect(fast).toBeDefined();
    const schema = STREAM_SCHEMAS[stream];
    let fastAccepted = 0;
    for (const r of SAMPLES[stream] ?? []) {
      expect(fast?.(r), JSON.stringify(r)).toBe(true);
      for (const m of [r, ...mutations(r as Record<string, unknown>)]) {
        if (!fast?.(m)) continue;
        fastAccepted++;
        const z = schema.safeParse(m);
        expect(z.success, `fast accepted but zod rejected ${String(JSON.stringify(m))}`).toBe(true);
        expect(z.data).toStrictEqual(m);
      }
    }
    expect(fastAccepted).toBeGreaterThan(0);
  });
});
