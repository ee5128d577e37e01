import { describe, expect, it } from "vitest";
import { decodeFrame, encodeFrame } from "@/lib/contracts/binary";

describe("binary frame", () => {
  it("round-trips header and payload", () => {
    const header = { rows: [{ node: "n", gpu: 0, index: 0, roles: [] }], x_buckets: 5, t0: 0, t1: 10, metric: "util", scale: { max: 100 }, palette: null };
    const payload = Uint8Array.from([0, 1, 2, 254, 255]);
    const bytes = encodeFrame(header, payload);
    const view = new DataView(bytes.buffer);
    const h = view.getUint32(0, true);
    expect(new TextDecoder().decode(bytes.subarray(4, 4 + h))).toBe(JSON.stringify(header));
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
});
