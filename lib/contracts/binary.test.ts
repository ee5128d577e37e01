import { describe, expect, it } from "vitest";
import { decodeFrame, decodeGpuFrame, encodeFrame, encodeGpuFrame } from "@/lib/contracts/binary";

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
});
