import { describe, expect, it } from "vitest";
import { encodeElements, toBf16Bits, toF16Bits } from "@/lib/store/pt/write";
import {
  Tensor,
  bf16ToNumber,
  decodeContiguous,
  f16ToNumber,
  materialize,
  rebuildTensor,
  torchGlobal,
  TorchDtype,
  TorchStorageType,
  type DType,
  type Storage,
} from "./tensor";

/** In-memory storage that records the element ranges requested. */
function memStorage(dtype: DType, values: ArrayLike<number | bigint>): Storage & { reads: [number, number][] } {
  const bytes = encodeElements(dtype, values);
  const size = bytes.length / values.length;
  const reads: [number, number][] = [];
  return {
    key: "0",
    dtype,
    numel: values.length,
    location: "cpu",
    reads,
    read(start, count) {
      reads.push([start, count]);
      return Promise.resolve(bytes.slice(start * size, (start + count) * size));
    },
  };
}

describe("half / bfloat16 decoding", () => {
  it("decodes known f16 bit patterns exactly", () => {
    expect(f16ToNumber(0x3c00)).toBe(1);
    expect(f16ToNumber(0xc000)).toBe(-2);
    expect(f16ToNumber(0x7bff)).toBe(65504);
    expect(f16ToNumber(0x0001)).toBe(2 ** -24); // smallest subnormal
    expect(f16ToNumber(0x03ff)).toBe(1023 * 2 ** -24); // largest subnormal
    expect(f16ToNumber(0x0400)).toBe(2 ** -14); // smallest normal
    expect(f16ToNumber(0x3555)).toBe(0.333251953125);
    expect(f16ToNumber(0x7c00)).toBe(Infinity);
    expect(f16ToNumber(0xfc00)).toBe(-Infinity);
    expect(Number.isNaN(f16ToNumber(0x7e00))).toBe(true);
    expect(Object.is(f16ToNumber(0x8000), -0)).toBe(true);
  });

  it("every f16 bit pattern round-trips through the writer's encoder", () => {
    const bad: number[] = [];
    for (let h = 0; h < 0x10000; h++) {
      const v = f16ToNumber(h);
      if (!Number.isNaN(v) && toF16Bits(v) !== h) bad.push(h);
    }
    expect(bad).toEqual([]);
  });

  it("decodes bf16 as the upper half of an f32", () => {
    expect(bf16ToNumber(0x3f80)).toBe(1);
    expect(bf16ToNumber(0xc2f7)).toBe(-123.5);
    expect(bf16ToNumber(0x7f80)).toBe(Infinity);
    expect(bf16ToNumber(0x0001)).toBe(2 ** -133); // subnormal
    expect(Number.isNaN(bf16ToNumber(0x7fc0))).toBe(true);
    const bad: number[] = [];
    for (let h = 0; h < 0x10000; h++) {
      const v = bf16ToNumber(h);
      if (!Number.isNaN(v) && toBf16Bits(v) !== h) bad.push(h);
    }
    expect(bad).toEqual([]);
  });

  it("contiguous decoders agree with element decoders for every dtype", () => {
    const vals = [0, 1, -1, 2.5, -3.75, 100, 127];
    const expectFor: Record<DType, number[]> = {
      f32: vals, f64: vals, f16: vals, bf16: vals,
      i64: [0, 1, -1, 2, -3, 100, 127], i32: [0, 1, -1, 2, -3, 100, 127], i16: [0, 1, -1, 2, -3, 100, 127], i8: [0, 1, -1, 2, -3, 100, 127],
      u8: [0, 1, 255, 2, 253, 100, 127], bool: [0, 1, 1, 1, 1, 1, 1],
    };
    for (const dtype of Object.keys(expectFor) as DType[]) {
      const bytes = encodeElements(dtype, dtype.startsWith("f") || dtype === "bf16" ? vals : vals.map((v) => Math.trunc(v)));
      // unaligned source offset exercises the copy path
      const shifted = new Uint8Array(bytes.length + 3);
      shifted.set(bytes, 3);
      expect([...decodeContiguous(shifted, dtype, vals.length, 3)], dtype).toEqual(expectFor[dtype]);
    }
  });

  it("decodes from a Node Buffer view at an offset (Buffer#slice is not a copy)", () => {
    const pool = Buffer.alloc(64, 0xee);
    const view = pool.subarray(8, 8 + 12);
    view.set(encodeElements("f32", [1, 2, 3]));
    expect(decodeContiguous(view, "f32", 2, 4)).toEqual(new Float32Array([2, 3]));
    expect(decodeContiguous(view, "i32", 1, 8)).toEqual(new Int32Array(encodeElements("f32", [3]).buffer));
  });

  it("i64 beyond 2^53 rounds to the nearest double; within stays exact", () => {
    const out = decodeContiguous(encodeElements("i64", [2n ** 53n - 1n, -(2n ** 53n) + 1n, 2n ** 62n + 1n, -(2n ** 63n)]), "i64", 4);
    expect([...out]).toEqual([2 ** 53 - 1, -(2 ** 53) + 1, 2 ** 62, -(2 ** 63)]);
  });
});

describe("Tensor views", () => {
  it("contiguous, offset, non-contiguous (transpose), expanded and 0-d views", async () => {
    const s = memStorage("f32", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const m = new Tensor(s, 0, [3, 4], [4, 1]);
    expect(m.isContiguous).toBe(true);
    expect([...(await materialize(m))]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const t = new Tensor(s, 0, [4, 3], [1, 4]);
    expect(t.isContiguous).toBe(false);
    expect([...(await materialize(t))]).toEqual([0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
    const col = new Tensor(s, 2, [3], [4]);
    expect([...(await materialize(col))]).toEqual([2, 6, 10]);
    const row = new Tensor(s, 4, [4], [1]);
    s.reads.length = 0;
    expect([...(await materialize(row))]).toEqual([4, 5, 6, 7]);
    expect(s.reads).toEqual([[4, 4]]); // only the view's span is requested
    const expanded = new Tensor(s, 1, [2, 3], [0, 1]);
    expect([...(await materialize(expanded))]).toEqual([1, 2, 3, 1, 2, 3]);
    const scalar = new Tensor(s, 7, [], []);
    expect(scalar.numel).toBe(1);
    expect([...(await materialize(scalar))]).toEqual([7]);
    const empty = new Tensor(s, 0, [0, 5], [5, 1]);
    expect((await materialize(empty)).length).toBe(0);
    const sliced3d = new Tensor(s, 1, [2, 2, 2], [6, 3, 1]);
    expect([...(await materialize(sliced3d))]).toEqual([1, 2, 4, 5, 7, 8, 10, 11]);
  });

  it("returns the typed array for each dtype", async () => {
    expect(await materialize(new Tensor(memStorage("bf16", [1.5, -2]), 0, [2], [1]))).toEqual(new Float32Array([1.5, -2]));
    expect(await materialize(new Tensor(memStorage("f16", [0.5, 65504]), 0, [2], [1]))).toEqual(new Float32Array([0.5, 65504]));
    expect(await materialize(new Tensor(memStorage("i64", [151643, -1]), 0, [2], [1]))).toEqual(new Float64Array([151643, -1]));
    expect(await materialize(new Tensor(memStorage("i32", [1, 0]), 0, [2], [1]))).toEqual(new Int32Array([1, 0]));
    expect(await materialize(new Tensor(memStorage("bool", [1, 0]), 0, [2], [1]))).toEqual(new Uint8Array([1, 0]));
    expect(await materialize(new Tensor(memStorage("f64", [Math.PI]), 0, [], []))).toEqual(new Float64Array([Math.PI]));
  });

  it("rebuildTensor validates arguments", () => {
    const s = memStorage("f32", [1, 2, 3]);
    expect(rebuildTensor([s, 0, [3], [1], false, {}])).toBeInstanceOf(Tensor);
    expect(rebuildTensor([s, 1, [2], [1], true, {}, {}])?.requiresGrad).toBe(true);
    expect(rebuildTensor(["not a storage", 0, [3], [1]])).toBeNull();
    expect(rebuildTensor([s, 0, [3], [1, 1]])).toBeNull();
  });

  it("maps torch storage classes and dtype globals", () => {
    expect(torchGlobal("torch", "BFloat16Storage")).toEqual(new TorchStorageType("BFloat16Storage", "bf16"));
    expect(torchGlobal("torch", "BoolStorage")).toEqual(new TorchStorageType("BoolStorage", "bool"));
    expect(torchGlobal("torch", "ComplexFloatStorage")).toEqual(new TorchStorageType("ComplexFloatStorage", null));
    expect(torchGlobal("torch", "float32")).toEqual(new TorchDtype("float32", "f32"));
    expect(torchGlobal("torch", "float8_e4m3fn")).toEqual(new TorchDtype("float8_e4m3fn", null));
    expect(torchGlobal("torch", "device")).toBeUndefined();
    expect(torchGlobal("torch", "toString")).toBeUndefined();
  });
});
