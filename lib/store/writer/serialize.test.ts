import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  LaneCatalog,
  parsePyJson,
  pyFloat,
  RECORD_FIELDS,
  serializeMeta,
  STREAM_SCHEMAS,
  STREAMS,
  type GpuSample,
  type PhaseEvent,
  type StreamName,
  type StreamRecords,
  type TopologySnapshot,
} from "@/lib/store/format";
import { LINE_SERIALIZERS, serializeRecord } from "./serialize";
import { MILES_DEMO_RUN } from "@/lib/testing/fixtures";

const DASH = resolve(MILES_DEMO_RUN, "dashboard");

function fixtureLines(file: string): string[] {
  const lines = readFileSync(resolve(DASH, file), "utf8").split("\n");
  lines.pop();
  return lines;
}

const FILES: [StreamName, string][] = [
  ["metrics", "metrics.jsonl"],
  ["topology", "topology.jsonl"],
  ["phases", "phases/19700112_13.jsonl"],
  ["gpu_util", "gpu_util/19700112_13.jsonl"],
  ["engine_series", "engine_series/19700112_13.jsonl"],
  ["trajectories", "trajectories/19700112_13.jsonl"],
];

function validated<S extends StreamName>(stream: S, line: string): unknown {
  return STREAM_SCHEMAS[stream].parse(parsePyJson(line));
}

describe("record serializers", () => {
  it.each(FILES)("%s: schema-validated fixture lines re-serialize byte for byte", (stream, file) => {
    for (const line of fixtureLines(file)) {
      const rec = validated(stream, line);
      expect((LINE_SERIALIZERS[stream] as (r: unknown) => string)(rec)).toBe(line);
    }
  });

  it("writes float fields as floats even when the JS value is integral", () => {
    expect(serializeRecord("gpu_util", { ts: 5, node: "n", gpu: 0, util: 87, mem_mb: 61234, power_w: 612 })).toBe(
      '{"ts":5.0,"node":"n","gpu":0,"util":87,"mem_mb":61234,"power_w":612}',
    );
    expect(
      serializeRecord("phases", { name: "train_wait", t0: 1755000040, t1: -1, node: "10.0.0.2", gpus: [3], rank: 3, role: "train" }),
    ).toBe('{"name":"train_wait","t0":1755000040.0,"t1":-1.0,"node":"10.0.0.2","gpus":[3],"rank":3,"role":"train"}');
    expect(
      serializeRecord("engine_series", { ts: 1, addr: "a", metric: "m", labels: { engine_type: "prefill", dp_rank: "0" }, value: NaN }),
    ).toBe('{"ts":1.0,"addr":"a","metric":"m","labels":{"engine_type":"prefill","dp_rank":"0"},"value":NaN}');
  });

  it("metrics values keep their producer type and order", () => {
    const line =
      '{"ts":1755000161.5,"step_key":"train/step","step":96,"metrics":{"train/loss":NaN,"train/grad_norm":Infinity,"train/step":96,"perf/step_time":95.0,"ok":true,"s":"\\u00e9"}}';
    const rec = validated("metrics", line);
    expect(serializeRecord("metrics", rec as never)).toBe(line);
    expect(
      serializeRecord("metrics", { ts: 1, step_key: null, step: null, metrics: { a: pyFloat(3), b: 3, c: 0.25 } }),
    ).toBe('{"ts":1.0,"step_key":null,"step":null,"metrics":{"a":3.0,"b":3,"c":0.25}}');
  });

  it("schemas reject missing, extra and mistyped keys", () => {
    const bad = STREAM_SCHEMAS.gpu_util.safeParse({ ts: "x", node: "n", gpu: 1.5, util: 1, mem_mb: 1, power_w: 1, extra: 1 });
    expect(bad.success).toBe(false);
    const paths = bad.error?.issues.map((i) => i.path.join(".")).sort();
    expect(paths).toEqual(["", "gpu", "ts"]);
    expect(STREAM_SCHEMAS.phases.safeParse({ name: "x", t0: 1, t1: -2, node: "n", gpus: [], rank: -1, role: "train" }).success).toBe(
      false,
    );
    expect(STREAM_SCHEMAS.gpu_util.safeParse({ ts: 1e20, node: "n", gpu: 1, util: 1, mem_mb: 1, power_w: 1 }).success).toBe(false);
    // An integral float token for an int field is accepted as the int.
    expect(STREAM_SCHEMAS.gpu_util.parse(parsePyJson('{"ts":1,"node":"n","gpu":3.0,"util":1,"mem_mb":1,"power_w":1}')).gpu).toBe(3);
  });

  it("meta.json is byte-identical to the miles fixture", () => {
    const text = readFileSync(resolve(DASH, "meta.json"), "utf8");
    expect(serializeMeta({ run_name: "dummy-telemetry", start_ts: 1000000, args: { colocate: true } })).toBe(text);
  });
});

describe("lane catalog", () => {
  it("rebuilt from the fixture streams equals the fixture's lane_catalog.json", () => {
    const cat = new LaneCatalog();
    cat.foldPhases(fixtureLines("phases/19700112_13.jsonl").map((l) => validated("phases", l) as PhaseEvent));
    cat.foldTopology(fixtureLines("topology.jsonl").map((l) => validated("topology", l) as TopologySnapshot));
    cat.foldGpu(fixtureLines("gpu_util/19700112_13.jsonl").map((l) => validated("gpu_util", l) as GpuSample));
    expect(cat.serialize()).toBe(readFileSync(resolve(DASH, "lane_catalog.json"), "utf8"));
  });

  it("follows the fold rules: rollout-manager phases ignored, rank -1 not recorded, gpu samples add empty lanes", () => {
    const cat = new LaneCatalog();
    cat.foldPhases([
      { name: "rollout", t0: 1, t1: 2, node: "10.0.0.9", gpus: [5], rank: -1, role: "rollout_manager" },
      { name: "train", t0: 1, t1: 2, node: "10.0.0.2", gpus: [3], rank: -1, role: "train" },
      { name: "train", t0: 1, t1: 2, node: "10.0.0.2", gpus: [3], rank: 11, role: "train" },
      { name: "train", t0: 1, t1: 2, node: "10.0.0.2", gpus: [3], rank: 2, role: "train" },
    ]);
    cat.foldGpu([{ ts: 1, node: "10.0.0.1", gpu: 0, util: 1, mem_mb: 1, power_w: 1 }]);
    cat.foldTopology([
      { ts: 1, engines: [{ addr: "http://b:1", worker_type: "regular", engine_rank: 0, gpus: [["10.0.0.1", 0]], gpu_uuids: [null] }] },
      { ts: 2, engines: [{ addr: "http://a:1", worker_type: "regular", engine_rank: 0, gpus: [["10.0.0.1", 0]], gpu_uuids: [null] }] },
    ]);
    expect(cat.serialize()).toBe(
      '{"version": 1, "lanes": {"10.0.0.2:3": {"ranks": [2, 11], "engine_addrs": [], "roles": ["train"]}, "10.0.0.1:0": {"ranks": [], "engine_addrs": ["http://a:1", "http://b:1"], "roles": ["rollout"]}}}',
    );
    cat.dirty = false;
    cat.foldGpu([{ ts: 1, node: "10.0.0.1", gpu: 0, util: 1, mem_mb: 1, power_w: 1 }]);
    expect(cat.dirty).toBe(false);
    expect(LaneCatalog.parse(cat.serialize()).serialize()).toBe(cat.serialize());
  });
});

describe("the serializers follow the format's field lists", () => {
  // The read side's byte scanners (lib/store/telemetry/ingest.ts) and decoders rely on it.
  const SAMPLE: { [S in StreamName]: StreamRecords[S] } = {
    metrics: { ts: 1.5, step_key: "rollout/step", step: 1, metrics: { a: 1 } },
    phases: { name: "actor_train", t0: 1, t1: 2, node: "n", gpus: [0], rank: 0, role: "train" },
    topology: { ts: 1, engines: [{ addr: "a", worker_type: "regular", engine_rank: 0, gpus: [["n", 0]], gpu_uuids: [null] }] },
    gpu_util: { ts: 1, node: "n", gpu: 0, util: 1, mem_mb: 2, power_w: 3 },
    engine_series: { ts: 1, addr: "a", metric: "m", labels: {}, value: 1 },
    trajectories: { ts: 1, kind: "gen_end", sample_index: 0, group_index: 0, turn: 0, weight_version: "v", detail: "" },
    gpu_processes: { ts: 1, node: "n", gpu: 0, pid: 1, name: "p", mem_mb: 1 },
    data_buffer: { ts: 1, length: 3 },
  };
  it.each([...STREAMS])("%s", (stream) => {
    const line = serializeRecord(stream, SAMPLE[stream] as never);
    expect(Object.keys(JSON.parse(line) as object)).toEqual(RECORD_FIELDS[stream]);
  });
});
