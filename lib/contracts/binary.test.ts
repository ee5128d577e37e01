import { describe, expect, it } from "vitest";
import { decodeFrame, decodeGpuFrame, decodePhaseFrame, encodeFrame, encodeGpuFrame, encodePhaseFrame, phaseLanesFromRows } from "@/lib/contracts/binary";

describe("binary frame", () => {
  it("round-trips header and payload", () => {
    const header = { rows: [{ node: "n", gpu: 0, index: 0, roles: [] }], x_buckets: 5, t0: 0, t1: 10, metric: "util", scale: { max: 100 }, palette: null };
    const payload = Uint8Array.from([0, 1, 2, 254, 255]);
    const bytes = encodeFrame(header, payload);
    const view = new DataView(bytes.buffer);
    const h = view.getUint32(0, true);
    expect(new TextDecoder().decode(bytes.subarray(4, 4 + h)).trimEnd()).toBe(JSON.stringify(header));
    expect((4 + h) % 8).toBe(0);
    const back = decodeFrame(bytes);
    expect(back.header).toEqual(header);
    expect([...back.payload]).toEqual([...payload]);
  });

  it("writes non-finite header numbers as null and accepts an ArrayBuffer", () => {
    const bytes = encodeFrame({ scale: { max: NaN } }, new Uint8Array(0));
    expect(decodeFrame(bytes.buffer).header).toEqual({ scale: { max: null } });
  });

  it("rejects truncated frames", () => {
    expect(() => decodeFrame(new Uint8Array(2))).toThrow(RangeError);
    const bytes = encodeFrame({ a: 1 }, new Uint8Array(0));
    expect(() => decodeFrame(bytes.subarray(0, 6))).toThrow(RangeError);
  });

  it("carries GPU series as columns: same keys, order and values as the JSON answer", () => {
    const lanes = {
      "10.0.0.1:0": { ts: [1000.5, 1001.5, 1002.25], util: [0, 55, 100], mem_mb: [81920, 81921, 0], power_w: [700, 12, 0] },
      "10.0.0.1:1": { ts: [], util: [], mem_mb: [], power_w: [] },
      "10.0.0.2:7": { ts: [1764000000.027], util: [7], mem_mb: [2_000_000], power_w: [-1] },
    };
    const bytes = encodeGpuFrame(lanes);
    // the decoder works on a frame that sits at an odd offset of a larger buffer too
    const shifted = new Uint8Array(bytes.length + 3);
    shifted.set(bytes, 3);
    for (const input of [bytes, shifted.subarray(3)]) {
      const back = decodeGpuFrame(input);
      expect(Object.keys(back.lanes)).toEqual(Object.keys(lanes));
      for (const [k, l] of Object.entries(lanes)) {
        const b = back.lanes[k]!;
        expect([Array.from(b.ts), Array.from(b.util), Array.from(b.mem_mb), Array.from(b.power_w)]).toEqual([l.ts, l.util, l.mem_mb, l.power_w]);
      }
    }
    expect(() => decodeGpuFrame(bytes.subarray(0, bytes.length - 1))).toThrow(/payload/);
  });

  it("carries phase lanes as columns: the JSON rows' values and order, strings numbered by first use", () => {
    // the store's string ids (3 = "train", 7 = "rollout", …) are renumbered by first use
    const store = ["", "", "", "train", "update_weights", "", "", "rollout", "derived", "initialize"];
    const lane = (node: string, gpu: number, rows: [number, number, number, number, number][]) => ({
      node,
      gpu,
      n: rows.length,
      t0: rows.map((r) => r[0]),
      t1: rows.map((r) => r[1]),
      rank: rows.map((r) => r[2]),
      name: rows.map((r) => r[3]),
      role: rows.map((r) => r[4]),
    });
    const lanes = [
      lane("10.0.0.1", 0, [
        [999.5, 1000.25, -1, 9, 8],
        [1000.25, 1764000000.027, 3, 7, 3],
      ]),
      lane("10.0.0.1", 1, []),
      lane("10.0.0.2", 7, [[1001, 1002, 2147483648, 4, 3]]),
    ];
    const bytes = encodePhaseFrame(lanes, store);
    const rows = lanes.flatMap((l) =>
      Array.from({ length: l.n }, (_, i) => ({ name: store[l.name[i]!]!, t0: l.t0[i]!, t1: l.t1[i]!, node: l.node, gpu: l.gpu, rank: l.rank[i]!, role: store[l.role[i]!]! })),
    );
    const shifted = new Uint8Array(bytes.length + 5);
    shifted.set(bytes, 5);
    for (const input of [bytes, shifted.subarray(5)]) {
      const back = decodePhaseFrame(input);
      expect(back.strings).toEqual(["initialize", "derived", "rollout", "train", "update_weights"]);
      expect(back.lanes.map((l) => [l.node, l.gpu, l.t0.length])).toEqual([
        ["10.0.0.1", 0, 2],
        ["10.0.0.2", 7, 1],
      ]);
      expect(Array.from(back.lanes[0]!.t1)).toEqual([1000.25, 1764000000.027]);
      expect(Array.from(back.lanes[1]!.rank)).toEqual([2147483648]);
      expect(back).toEqual(phaseLanesFromRows(rows));
    }
    expect(() => decodePhaseFrame(bytes.subarray(0, bytes.length - 8))).toThrow(/payload/);
  });

  it("rejects a phase frame whose rows name a string it does not carry", () => {
    const bytes = encodePhaseFrame([{ node: "n", gpu: 0, n: 1, t0: [1], t1: [2], rank: [0], name: [1], role: [1] }], ["", "train"]);
    const back = decodeFrame<{ strings: string[] }>(bytes);
    expect(back.header.strings).toEqual(["train"]);
    const forged = encodeFrame({ strings: ["train"], lanes: [["n", 0, 1]] }, back.payload.slice());
    new Uint32Array(forged.buffer, forged.length - 8, 2).set([0, 1]);
    expect(() => decodePhaseFrame(forged)).toThrow(/string 1 of 1/);
  });
});
