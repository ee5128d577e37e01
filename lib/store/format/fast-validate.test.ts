import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { FAST_CHECKS } from "./fast-validate";
import { PyFloat, parsePyJson } from "./python-json";
import { STREAM_SCHEMAS } from "./records";
import type { StreamName } from "./streams";
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

/**
 * One table of records per stream: what the schema decides, and the fast check must decide
 * the same — except rows marked `slow`, valid but unusual input (an integral float token
 * for an int, a `Map` metric dict) that the fast check hands to zod by answering false.
 */
type Row = [label: string, record: unknown, valid: boolean, slow?: "slow"];
const gpu = { ts: 1755000000.5, node: "10.0.0.1", gpu: 0, util: 87, mem_mb: 40960, power_w: 350 };
const proc = { ts: 1755000000.5, node: "10.0.0.1", gpu: 1, pid: 4321, name: "sglang::scheduler", mem_mb: 1024 };
const eng = { ts: 1755000000.5, addr: "10.0.0.1:30000", metric: "sglang:num_running_reqs", labels: { dp_rank: "0" }, value: 3 };
const phase = { name: "actor_train", t0: 1755000000.5, t1: 1755000010.5, node: "10.0.0.1", gpus: [0, 1], rank: 0, role: "train" };
const traj = { ts: 1755000000.5, kind: "gen_end", sample_index: 3, group_index: 1, turn: 0, weight_version: "v2", detail: "" };
const met = { ts: 1755000000.5, step_key: "rollout/step", step: 2, metrics: { "perf/step_time": 95.5, ok: true, tag: "x" } };

const TABLE: Partial<Record<StreamName, Row[]>> = {
  gpu_util: [
    ["a sample", gpu, true],
    ["ts 0", { ...gpu, ts: 0 }, true],
    ["negative ts", { ...gpu, ts: -1 }, false],
    ["ts past year 9999", { ...gpu, ts: 253402300800 }, false],
    ["NaN ts", { ...gpu, ts: NaN }, false],
    ["gpu -1", { ...gpu, gpu: -1 }, false],
    ["util 1.5", { ...gpu, util: 1.5 }, false],
    ["util as integral float token", { ...gpu, util: new PyFloat(87) }, true, "slow"],
    ["node a number", { ...gpu, node: 1 }, false],
    ["missing power_w", (({ power_w: _p, ...r }) => r)(gpu), false],
    ["extra key", { ...gpu, extra: 1 }, false],
    ["not an object", [gpu], false],
  ],
  gpu_processes: [
    ["a sample", proc, true],
    ["pid 2.5", { ...proc, pid: 2.5 }, false],
    ["name null", { ...proc, name: null }, false],
    ["gpu -2", { ...proc, gpu: -2 }, false],
    ["extra key", { ...proc, uuid: "x" }, false],
  ],
  engine_series: [
    ["a sample", eng, true],
    ["NaN value", { ...eng, value: NaN }, true],
    ["Infinity value", { ...eng, value: Infinity }, true],
    ["value as integral float token", { ...eng, value: new PyFloat(3) }, true, "slow"],
    ["value a string", { ...eng, value: "3" }, false],
    ["label value a number", { ...eng, labels: { dp_rank: 0 } }, false],
    ["labels missing", (({ labels: _l, ...r }) => r)(eng), false],
    ["labels an array", { ...eng, labels: [] }, false],
  ],
  phases: [
    ["a closed phase", phase, true],
    ["an OPEN phase", { ...phase, t1: -1 }, true],
    ["t1 -2", { ...phase, t1: -2 }, false],
    ["rollout_manager role", { ...phase, role: "rollout_manager", rank: -1 }, true],
    ["unknown role", { ...phase, role: "critic" }, false],
    ["gpus with a float", { ...phase, gpus: [0, 1.5] }, false],
    ["gpus not a list", { ...phase, gpus: 0 }, false],
    ["rank 0.5", { ...phase, rank: 0.5 }, false],
  ],
  trajectories: [
    ...(["attempt_start", "gen_start", "gen_end", "tool_start", "tool_end", "attempt_end"] as const).map((kind): Row => [`kind ${kind}`, { ...traj, kind }, true]),
    ["unknown kind", { ...traj, kind: "gen_middle" }, false],
    ["turn 1.5", { ...traj, turn: 1.5 }, false],
    ["detail null", { ...traj, detail: null }, false],
  ],
  metrics: [
    ["a record", met, true],
    ["no step", { ...met, step_key: null, step: null }, true],
    ["NaN metric", { ...met, metrics: { a: NaN } }, true],
    ["integral float metric", { ...met, metrics: { a: new PyFloat(95) } }, true],
    ["metrics as Map", { ...met, metrics: new Map([["0", 1]]) }, true, "slow"],
    ["null metric", { ...met, metrics: { a: null } }, false],
    ["list metric", { ...met, metrics: { a: [1] } }, false],
    ["step 1.5", { ...met, step: 1.5 }, false],
    ["step_key a number", { ...met, step_key: 3 }, false],
  ],
};

describe("fast checks and schema decide one table alike", () => {
  for (const [stream, rows] of Object.entries(TABLE) as [StreamName, Row[]][]) {
    it.each(rows)(`${stream}: %s`, (_label, record, valid, slow) => {
      const z = STREAM_SCHEMAS[stream].safeParse(record);
      expect(z.success).toBe(valid);
      const fast = FAST_CHECKS[stream]!(record);
      expect(fast).toBe(valid && slow === undefined);
      if (fast) expect(z.data).toStrictEqual(record);
    });
  }
});
