import { describe, expect, it } from "vitest";
import { isNumberRun, MAX_NUMBER_BYTES, numbersInto } from "@/lib/api/number-text";

/** `numbersInto`'s text, or null where it refuses the run; written at an odd offset of a buffer with bytes on both sides. */
function numbersText(values: ArrayLike<unknown>, from = 0, to = values.length): string | null {
  const pad = 7;
  const b = Buffer.alloc(pad + (Math.max(0, to - from) || 0) * MAX_NUMBER_BYTES + pad, 0x21); // a DataView has no length
  const end = numbersInto(values, from, to, b, pad);
  if (end < 0) return null;
  expect(b.subarray(0, pad).toString("latin1")).toBe("!".repeat(pad)); // nothing before `at` touched
  return b.toString("latin1", pad, end);
}

/** What JSON.stringify writes for the same numbers (the oracle). */
const native = (xs: ArrayLike<number>) => JSON.stringify(Array.from(xs)).slice(1, -1);

/** A deterministic stream of doubles (xorshift), so a failure names its input. */
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

describe("numbersText", () => {
  it("writes every kind of double exactly as JSON.stringify does", () => {
    const r = rng(7);
    const f64 = new Float64Array(1);
    const u32 = new Uint32Array(f64.buffer);
    const xs: number[] = [];
    const ms = () => Math.round((r() - 0.3) * 2 ** (r() * 45)) / 1000;
    for (let i = 0; i < 20_000; i++) {
      u32[0] = r() * 2 ** 32;
      u32[1] = r() * 2 ** 32;
      xs.push(f64[0]!, ms(), ms(), ms(), ms()); // any bit pattern (NaN, subnormals, huge), among milliseconds
    }
    for (let i = 0; i < 20_000; i++) xs.push(Math.round((r() - 0.3) * 2 ** (r() * 45)) / 1000); // millisecond decimals of every size
    for (let i = 0; i < 20_000; i++) xs.push(1763985573 + Math.round(r() * 1e7) / 1000, Math.round(r() * 1e6) / 100, (r() * 2 ** 31) | 0, r() * 100, i);
    xs.push(0, -0, NaN, Infinity, -Infinity, 2 ** 31, 2 ** 31 - 1, -(2 ** 31), -(2 ** 31) + 1, 2147483647.999, 2147483647.9995, 1e21, 1e-7, 5e-324);
    xs.push(0.1 + 0.2, 1.005, 0.001, -0.001, 0.0005, 999.999, 9.999, 9.9995, 10, 100.1, 100.01, 2 ** 53, 2 ** 53 + 2, 1e9, 999999999.999, 0.01, 0.1, 0.5);
    expect(numbersText(xs)).toBe(native(xs));
  });

  it("writes series of timestamps as JSON does where their leading digits change, mixed with other numbers", () => {
    const r = rng(13);
    const xs: number[] = [];
    // leading digits 17639|99999 → 17640|00000, 5 → 6 integer digits, 9 → 10, and negatives
    for (const start of [1763999999.5, 99999.5, 999999999.5, -1763999999.5, 2147483646.5]) {
      let t = start;
      for (let i = 0; i < 3000; i++) {
        t = Math.round((t + r() * 0.004) * 1000) / 1000;
        xs.push(t);
        if (i % 97 === 0) xs.push(i, r() * 3, 12.5); // another kind between two timestamps
      }
    }
    expect(numbersText(xs)).toBe(native(xs));
    expect(numbersText(Float64Array.from(xs))).toBe(native(xs));
  });

  it("writes typed arrays of every number kind, and slices of them", () => {
    const r = rng(11);
    const kinds = [Float64Array, Float32Array, Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array];
    for (const K of kinds) {
      const a = new K(3000);
      // eighths and integers of every size the kind holds, one in five any number
      for (let i = 0; i < a.length; i++) a[i] = i % 5 === 0 ? (r() - 0.5) * 2 ** 33 * (i % 3 === 0 ? 1e-6 : 1) : Math.round((r() - (K === Uint32Array ? 0 : 0.5)) * 2 ** (r() * 34)) / 8;
      expect(numbersText(a), K.name).toBe(native(a));
      expect(numbersText(a, 17, 1234), K.name).toBe(native(a.subarray(17, 1234)));
    }
    expect(numbersText([1, 2, 3], 2, 2)).toBe("");
  });

  it("leaves runs of mostly other numbers to JSON.stringify (null), and writes those with a few", () => {
    const r = rng(5);
    const logprobs = Array.from({ length: 1000 }, () => -r() * 5);
    expect(numbersText(logprobs)).toBeNull();
    const few = Array.from({ length: 1000 }, (_, i) => (i % 5 ? i * 1.5 : -r() * 5));
    expect(numbersText(few)).toBe(native(few));
    expect(numbersText(logprobs.slice(0, 16))).toBe(native(logprobs.slice(0, 16))); // short runs are written
  });

  it("answers null for a run holding anything but numbers", () => {
    expect(numbersText([1, null, 2])).toBeNull();
    expect(numbersText([1, "2", 3])).toBeNull();
    expect(numbersText([1, undefined, 3])).toBeNull();
    expect(numbersText([1, null, 2], 2, 3)).toBe("2");
    expect(numbersText(new BigInt64Array(2))).toBeNull();
    expect(numbersText(new DataView(new ArrayBuffer(8)) as unknown as ArrayLike<number>)).toBeNull();
  });

  it("keeps no state between calls: a long run, then a short one, then a long one", () => {
    const long = Array.from({ length: 200_000 }, (_, i) => 1763985573 + i / 1000);
    expect(numbersText(long)).toBe(native(long));
    expect(numbersText([5, 6])).toBe("5,6");
    expect(numbersText(long, 5, 100_005)).toBe(native(long.slice(5, 100_005)));
  });
});

describe("isNumberRun", () => {
  it("takes number typed arrays and arrays that start and end with a number", () => {
    expect(isNumberRun(new Float32Array(2))).toBe(true);
    expect(isNumberRun([1, "a", 2])).toBe(true); // numbersText then answers null
    expect(isNumberRun(new BigInt64Array(2))).toBe(false);
    expect(isNumberRun(new DataView(new ArrayBuffer(4)))).toBe(false);
    expect(isNumberRun([])).toBe(false);
    expect(isNumberRun(["a", 1])).toBe(false);
    expect(isNumberRun({ 0: 1, length: 1 })).toBe(false);
  });
});
