import { describe, expect, it } from "vitest";
import type { EngineSeriesResponse, GpuResponse, PhasesResponse, TopologyResponse } from "@/lib/charts/api-shapes";
import { phaseLanesFromRows } from "@/lib/contracts/binary";
import { golden } from "@/lib/testing/golden";
import { engineForLane, gpuColumns, gpuSampleAt, overlayAt, phasesAt, phaseTrack, prepareLanes, prepareProcessTracks, processesAt } from "@/lib/charts/prepare-lanes";

describe("phaseTrack", () => {
  it("gives nested intervals a sub-row instead of overpainting", () => {
    const rows = [
      { name: "actor_train", t0: 0, t1: 100, node: "n", gpu: 0, rank: 0, role: "train" },
      { name: "log_probs", t0: 10, t1: 20, node: "n", gpu: 0, rank: 0, role: "train" },
      { name: "update_weights", t0: 100, t1: 110, node: "n", gpu: 0, rank: 0, role: "train" },
    ];
    const cols = phaseLanesFromRows(rows);
    expect(cols.strings).toEqual(["actor_train", "train", "log_probs", "update_weights"]);
    const t = phaseTrack(cols.lanes[0]!, [0, 9, 1, 2]);
    expect(Array.from(t.depth)).toEqual([0, 1, 0]);
    expect(Array.from(t.name)).toEqual([0, 1, 2]);
    expect(phasesAt(t, 15)).toEqual([0, 1]);
    expect(phasesAt(t, 105)).toEqual([2]);
    expect(phasesAt(t, 200)).toEqual([]);
  });

  it("sorts by start, the longer interval first on a tie, equal ones in answer order", () => {
    const row = (t0: number, t1: number, rank: number) => ({ name: "p", t0, t1, node: "n", gpu: 0, rank, role: "train" });
    const lane = phaseLanesFromRows([row(50, 60, 1), row(10, 20, 2), row(10, 40, 3), row(10, 40, 4), row(5, 8, 5)]).lanes[0]!;
    const t = phaseTrack(lane, [0, 0]);
    expect(Array.from(t.rank)).toEqual([5, 3, 4, 2, 1]);
    expect(Array.from(t.t0)).toEqual([5, 10, 10, 10, 50]);
    expect(Array.from(t.t1)).toEqual([8, 40, 40, 20, 60]);
    expect(Array.from(t.depth)).toEqual([0, 0, 1, 2, 0]);
  });
});

describe("gpuColumns", () => {
  it("breaks the line where sampling stopped for long", () => {
    const g = gpuColumns([0, 1, 2, 3, 200, 201], [10, 20, 30, 40, 50, 60], [1, 1, 1, 1, 1, 1]);
    expect(g.ts.length).toBe(7);
    expect(Number.isNaN(g.util[4]!)).toBe(true);
    expect(gpuSampleAt(g, 2.2)).toEqual({ ts: 2, util: 30, mem: 1 });
  });
});

const eng = (addr: string, gpus: [string, number][]) => ({ addr, worker_type: "regular", engine_rank: 0, gpus, gpu_uuids: gpus.map(() => null) });

describe("prepareProcessTracks", () => {
  it("groups snapshots per lane and lists the largest processes of the nearest one", () => {
    const row = (ts: number, pid: number, mem: number) => ({ ts, node: "n", gpu: 0, pid, name: `p${pid}`, mem_mb: mem });
    const t = prepareProcessTracks([row(10, 1, 100), row(10, 2, 300), row(20, 1, 50), row(10, 3, 200), row(10, 4, 10)]).get("n:0");
    expect(processesAt(t, 12).map((p) => p.pid)).toEqual([2, 3, 1]);
    expect(processesAt(t, 19).map((p) => p.pid)).toEqual([1]);
  });
});

describe("engineForLane", () => {
  it("matches by GPU list, else by engine host == node", () => {
    const w = { t0: 0, t1: null, engines: [eng("http://10.0.0.1:15000", [["10.0.0.1", 0]]), eng("http://10.0.0.9:30000", [])] };
    expect(engineForLane(w, "10.0.0.1", 0)).toBe("http://10.0.0.1:15000");
    expect(engineForLane(w, "10.0.0.9", 3)).toBe("http://10.0.0.9:30000");
    expect(engineForLane(w, "10.0.0.1", 5)).toBeNull();
  });
});

describe("prepareLanes on the fixture run", () => {
  it("builds four lanes with phases, util, memory and the overlay", () => {
    const topo = golden<TopologyResponse>("/api/timeline/topology");
    const phases = phaseLanesFromRows(golden<PhasesResponse>("/api/timeline/phases?t0=1000000.0&t1=1000329.0").phases);
    const gpu = golden<GpuResponse>("/api/timeline/gpu?t0=1000000.0&t1=1000329.0");
    const engine = golden<EngineSeriesResponse>("/api/timeline/engine_series?metric=sglang_num_running_reqs&t0=1000000.0&t1=1000329.0");
    const m = prepareLanes({ lanes: topo.lanes, phases, gpu, windows: topo.windows, overlayMetric: "sglang_num_running_reqs", engine });
    expect(m.lanes.map((l) => l.key)).toEqual(["10.0.0.1:0", "10.0.0.1:1", "10.0.0.1:2", "10.0.0.1:3"]);
    expect(m.phasesPresent).toEqual(["actor_train", "initialize", "rollout", "train_wait", "update_weights"]);
    expect(m.memMaxMb).toBeGreaterThan(0);
    expect(m.multiNode).toBe(false);
    const lane0 = m.lanes[0]!;
    expect(lane0.phases.t0.length).toBeGreaterThan(5);
    const at = phasesAt(lane0.phases, 1000050);
    expect(at.map((i) => m.phaseNames[lane0.phases.name[i]!])).toEqual(["rollout"]);
    expect(lane0.overlay.length).toBeGreaterThan(0);
    expect(overlayAt(lane0, m, 1000050)?.addr).toBe("http://10.0.0.1:15000");
    expect(m.overlay!.max).toBeGreaterThan(0);
    expect(processesAt(prepareProcessTracks([]).get(lane0.key), 1000050)).toEqual([]);
  });
});
