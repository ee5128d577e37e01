import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { encodeElements, numpyArray, pickleDumps, pyCall, pyFloat, pyGlobal, tuple } from "@/lib/store/pt/write";
import { NdArray, NpDtype, PickleError, PyGlobal, PyObject, PY_DICT_KEYS, SkippedList, unpickle } from "./pickle";

/** CPython `pickle.dumps(obj, protocol=p)` for p = 0..5 (see __fixtures__/make_pickle_vectors.py). */
const VECTORS = JSON.parse(readFileSync(new URL("./__fixtures__/pickle-vectors.json", import.meta.url), "utf8")) as Record<string, string>;

const hex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s.replace(/\s+/g, ""), "hex"));
const bytesOf = (...xs: (number | string | Uint8Array)[]): Uint8Array =>
  Uint8Array.from(xs.flatMap((x) => (typeof x === "number" ? [x] : typeof x === "string" ? [...Buffer.from(x, "latin1")] : [...x])));

function asRecord(v: unknown): Record<string, unknown> {
  expect(typeof v === "object" && v !== null && !Array.isArray(v)).toBe(true);
  return v as Record<string, unknown>;
}

describe("unpickle: CPython vectors, protocols 0-5", () => {
  for (const p of ["0", "1", "2", "3", "4", "5"]) {
    it(`protocol ${p}`, () => {
      const root = asRecord(unpickle(hex(VECTORS[p] ?? "")));
      expect(root.ints).toEqual([
        0, 1, -1, 2n ** 2100n, 255, 256, 65535, 65536, -(2 ** 31), 2 ** 31 - 1, 2 ** 31, 2n ** 53n, -(2n ** 53n), 2n ** 64n, -(2n ** 70n),
      ]);
      const floats = root.floats as number[];
      expect(floats).toEqual([0, -0, 1.5, -2.25e-300, Infinity, -Infinity, 1e308]);
      expect(Object.is(floats[1], -0)).toBe(true);
      expect(Number.isNaN(root.nan)).toBe(true);
      expect(root.strs).toEqual(["", "abc", "héllo", "日本語", "emoji \u{1F600}", "x".repeat(300)]);
      const bytes = root.bytes as Uint8Array[];
      expect(bytes.map((b) => [...b])).toEqual([[], [0, 1, 255], Array.from({ length: 256 }, (_, i) => i)]);
      for (const b of bytes) expect(b).toBeInstanceOf(Uint8Array);
      expect([...(root.ba as Uint8Array)]).toEqual([0x10, 0x20]);
      expect(root.tuple).toEqual([1, [2, 3], [], [4, 5, 6, 7], [8, 9, 10]]);
      expect(root.none).toBeNull();
      expect(root.t).toBe(true);
      expect(root.f).toBe(false);
      const shared = root.shared as unknown[][];
      expect(shared[0]).toEqual([7, 8]);
      expect(shared[0]).toBe(shared[1]); // memo keeps identity
      expect(root.set).toEqual(new Set([1, 2, 3]));
      expect(root.fs).toEqual(new Set(["a"]));
      expect(root.od).toEqual({ z: 1, a: 2 });
      expect(Object.keys(root.od as object)).toEqual(["z", "a"]);
      expect(root.intkeys).toEqual({ "1": "one", "2": "two" });
      const foo = root.foo as PyObject;
      expect(foo).toBeInstanceOf(PyObject);
      expect(foo.__class__).toBe("mylib.things.Foo");
      expect(foo.state).toEqual({ x: 1, name: "foo" });
      const kw = root.kw as PyObject;
      expect(kw).toBeInstanceOf(PyObject);
      expect(kw.state).toEqual({ a: 3, b: 4 });
      if (Number(p) >= 4) {
        expect(kw.__class__).toBe("mylib.things.Kw");
        expect(kw.via).toBe("newobj_ex");
        expect(kw.args).toEqual([3]);
        expect(kw.kwargs).toEqual({ b: 4 });
      }
    });
  }
});

describe("unpickle: hand-assembled opcodes", () => {
  it("py2 strings, DUP/POP/POP_MARK, TUPLE3, text INT/LONG/FLOAT, PUT/GET", () => {
    const data = bytesOf(
      0x80, 2, 0x28, // PROTO 2, MARK
      0x55, 3, "abc", // SHORT_BINSTRING
      0x54, 2, 0, 0, 0, "\xe9z", // BINSTRING (latin-1)
      "S'a\\nb\\x41'\n", // STRING
      "I01\n", "I00\n", "I-7\n", "L123456789012345678901L\n", "F-1.25\n",
      "Vcaf\\u00e9\n", // UNICODE raw-unicode-escape
      0x4b, 9, 0x32, 0x30, // BININT1 9, DUP, POP
      0x28, 0x4b, 1, 0x31, // MARK 1 POP_MARK
      0x4b, 1, 0x4b, 2, 0x4b, 3, 0x87, "p5\n", 0x30, "g5\n", // TUPLE3, PUT 5, POP, GET 5
      0x6c, // LIST
      0x2e,
    );
    expect(unpickle(data)).toEqual(["abc", "\xe9z", "a\nbA", true, false, -7, 123456789012345678901n, -1.25, "café", 9, [1, 2, 3]]);
  });

  it("BINBYTES8, BINUNICODE8, BYTEARRAY8, LONG4, FRAME, MEMOIZE, EMPTY_SET/ADDITEMS, FROZENSET", () => {
    const u64 = (n: number) => [n, 0, 0, 0, 0, 0, 0, 0];
    const data = bytesOf(
      0x80, 5, 0x95, ...u64(40), 0x28,
      0x8e, ...u64(2), 1, 2,
      0x8d, ...u64(3), "xyz", 0x94,
      0x96, ...u64(1), 7,
      0x8b, 2, 0, 0, 0, 0x00, 0x80, // LONG4 -32768
      0x8f, 0x28, 0x4b, 4, 0x4b, 5, 0x90,
      0x28, 0x4b, 6, 0x91,
      0x68, 0, // BINGET memo 0 ("xyz")
      0x6c, 0x2e,
    );
    const out = unpickle(data) as unknown[];
    expect([...(out[0] as Uint8Array)]).toEqual([1, 2]);
    expect(out.slice(1)).toEqual(["xyz", new Uint8Array([7]), -32768, new Set([4, 5]), new Set([6]), "xyz"]);
  });

  it("INST and OBJ build opaque objects; persistent ids go through the hook", () => {
    const data = bytesOf(
      0x28, // MARK (outer list)
      0x28, "imod\nCls\n", // MARK INST (no args)
      0x28, "cmod\nOther\n", 0x4b, 1, 0x6f, // MARK GLOBAL 1 OBJ
      "Pabc\n", // PERSID
      0x4b, 5, 0x51, // BINPERSID 5
      0x6c, 0x2e,
    );
    const [a, b, c, d] = unpickle(data, { persistentLoad: (pid) => ({ pid }) }) as unknown[];
    expect(a).toMatchObject({ __class__: "mod.Cls", args: [], via: "inst" });
    expect(b).toMatchObject({ __class__: "mod.Other", args: [1], via: "obj" });
    expect(c).toEqual({ pid: "abc" });
    expect(d).toEqual({ pid: 5 });
    expect(() => unpickle(bytesOf(0x4b, 5, 0x51, 0x2e))).toThrow(PickleError);
  });

  it("findClass hook overrides; a bare global stays a PyGlobal", () => {
    const data = pickleDumps([pyCall("my", "add", [2, 3]), pyGlobal("my", "thing")]);
    const out = unpickle(data, { findClass: (m, n) => (m === "my" && n === "add" ? (a: unknown[]) => (a[0] as number) + (a[1] as number) : undefined) });
    expect(out).toEqual([5, new PyGlobal("my", "thing")]);
  });
});

describe("unpickle: value policy", () => {
  it("unknown globals become PyObjects recording args and BUILD state, never abort", () => {
    const data = pickleDumps({ adapter: pyCall("miles.utils.types", "AdapterRef", [1, "x"], { name: "lora", rank: 8 }) });
    const { adapter } = unpickle(data) as { adapter: PyObject };
    expect(adapter).toBeInstanceOf(PyObject);
    expect(adapter.__class__).toBe("miles.utils.types.AdapterRef");
    expect(adapter.args).toEqual([1, "x"]);
    expect(adapter.state).toEqual({ name: "lora", rank: 8 });
  });

  it("APPEND/SETITEM into opaque objects are kept", () => {
    const data = bytesOf(0x80, 2, "cx\nL\n", 0x29, 0x52, 0x4b, 1, 0x61, 0x4b, 2, 0x4b, 3, 0x73, 0x2e);
    const o = unpickle(data) as PyObject;
    expect(o.listItems).toEqual([1]);
    expect([...(o.dictItems ?? new Map())]).toEqual([[2, 3]]);
  });

  it("dict keys: str as is, ints/bools/None JSON-style, others stringified with originals kept", () => {
    const m = new Map<unknown, unknown>([[1, "a"], [true, "b"], [null, "c"], [tuple(1, 2), "d"], ["__proto__", "e"]]);
    const d = unpickle(pickleDumps(m)) as Record<string, unknown>;
    expect(Object.keys(d)).toEqual(["1", "true", "null", "(1, 2)", "__proto__"]);
    expect(Object.getPrototypeOf(d)).toBe(Object.prototype);
    expect(d["(1, 2)"]).toBe("d");
    expect((d as { [PY_DICT_KEYS]?: Map<string, unknown> })[PY_DICT_KEYS]?.get("(1, 2)")).toEqual([1, 2]);
  });

  it("big ints: number within ±2^53, bigint beyond", () => {
    const vals = [2 ** 53 - 1, -(2 ** 53 - 1), 2n ** 53n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 80n];
    expect(unpickle(pickleDumps(vals))).toEqual([2 ** 53 - 1, -(2 ** 53 - 1), 2n ** 53n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 80n]);
  });

  it("numpy arrays via _codecs.encode latin-1 (numpy 1 and 2 module names), dtype byte order, fortran order", () => {
    const i4 = encodeElements("i32", [1, -2, 300, 2 ** 31 - 1, -(2 ** 31), 0]);
    const bigF8 = new Uint8Array(Buffer.from("3ff8000000000000c000000000000000", "hex")); // >f8: 1.5, -2
    const data = pickleDumps({
      a: numpyArray("<i4", [2, 3], i4),
      b: numpyArray(">f8", [2], bigF8, { numpy2: true }),
      c: numpyArray("<i4", [2, 3], i4, { fortran: true }),
      h: numpyArray("<f2", [2], encodeElements("f16", [0.5, -65504])),
      u: numpyArray("|u1", [3], new Uint8Array([1, 2, 255])),
      s: pyCall("numpy.core.multiarray", "scalar", [pyCall("numpy", "dtype", ["f8", false, true], tuple(3, "<", null, null, null, -1, -1, 0)), encodeElements("f64", [0.25])]),
      q: pyCall("numpy._core.multiarray", "scalar", [pyCall("numpy", "dtype", ["i8", false, true], tuple(3, "<", null, null, null, -1, -1, 0)), encodeElements("i64", [2n ** 60n])]),
    });
    // The raw data travels as REDUCE(_codecs.encode, (str, 'latin1')) under protocol 2.
    expect(Buffer.from(data).includes("_codecs\nencode")).toBe(true);
    const r = unpickle(data) as Record<string, NdArray | number | bigint>;
    const a = r.a as NdArray;
    expect(a).toBeInstanceOf(NdArray);
    expect(a.shape).toEqual([2, 3]);
    expect(a.dtype).toBeInstanceOf(NpDtype);
    expect(a.dtype?.str).toBe("<i4");
    expect(a.data).toEqual(new Int32Array([1, -2, 300, 2 ** 31 - 1, -(2 ** 31), 0]));
    expect((r.b as NdArray).data).toEqual(new Float64Array([1.5, -2]));
    // Fortran: memory holds columns; data is returned row-major.
    expect((r.c as NdArray).data).toEqual(new Int32Array([1, 300, -(2 ** 31), -2, 2 ** 31 - 1, 0]));
    expect((r.h as NdArray).data).toEqual(new Float32Array([0.5, -65504]));
    expect((r.u as NdArray).data).toEqual(new Uint8Array([1, 2, 255]));
    expect(r.s).toBe(0.25);
    expect(r.q).toBe(2n ** 60n);
  });

  it("numpy array with hand-built latin-1 string payload (no writer)", () => {
    // _reconstruct(ndarray, (0,), b'b') + BUILD (1, (3,), dtype('u2'), False, _codecs.encode('\x01\x00\xff\xff\x00\x01', 'latin1'))
    const data = bytesOf(
      0x80, 2,
      "cnumpy.core.multiarray\n_reconstruct\n", "cnumpy\nndarray\n", 0x4b, 0, 0x85, 0x43, 1, "b", 0x87, 0x52,
      0x28, 0x4b, 1, 0x4b, 3, 0x85,
      "cnumpy\ndtype\n", 0x58, 2, 0, 0, 0, "u2", 0x89, 0x88, 0x87, 0x52,
      0x28, 0x4b, 3, 0x58, 1, 0, 0, 0, "<", 0x4e, 0x4e, 0x4e, 0x4a, 0xff, 0xff, 0xff, 0xff, 0x4a, 0xff, 0xff, 0xff, 0xff, 0x4b, 0, 0x74, 0x62,
      0x89,
      "c_codecs\nencode\n", 0x58, 8, 0, 0, 0, Buffer.from("\x01\x00\u00ff\u00ff\x00\x01", "utf8"), 0x58, 6, 0, 0, 0, "latin1", 0x86, 0x52,
      0x74, 0x62, 0x2e,
    );
    const arr = unpickle(data) as NdArray;
    expect(arr.shape).toEqual([3]);
    expect(arr.data).toEqual(new Uint16Array([1, 65535, 256]));
  });
});

describe("unpickle: robustness", () => {
  it("every truncation of a real-world-like pickle throws PickleError (no hang, no other error)", () => {
    const full = hex(VECTORS["2"] ?? "");
    for (let cut = 0; cut < full.length; cut++) {
      let err: unknown = null;
      try {
        unpickle(full.subarray(0, cut));
      } catch (e) {
        err = e;
      }
      expect(err, `cut at ${cut}`).toBeInstanceOf(PickleError);
    }
  });

  it("rejects unknown opcodes, bad memo refs and stack underflow", () => {
    expect(() => unpickle(bytesOf(0xff))).toThrow(/unknown opcode 0xff/);
    expect(() => unpickle(bytesOf(0x68, 3, 0x2e))).toThrow(/memo key 3/);
    expect(() => unpickle(bytesOf(0x52, 0x2e))).toThrow(/stack underflow/);
    expect(() => unpickle(bytesOf(0x82, 1))).toThrow(PickleError);
  });

  it("unpickles a multi-MB pickle in well under a second", () => {
    const samples = Array.from({ length: 2000 }, (_, i) => ({
      index: i,
      tokens: Array.from({ length: 1000 }, (_, j) => (i * 7919 + j * 104729) % 150000),
      rollout_log_probs: Array.from({ length: 300 }, (_, j) => pyFloat(-j / 301)),
      status: "completed",
      response: `response ${i} ${"é".repeat(20)}`,
    }));
    const data = pickleDumps({ samples });
    expect(data.length).toBeGreaterThan(5_000_000);
    const t0 = performance.now();
    const out = unpickle(data) as { samples: { tokens: number[]; rollout_log_probs: number[] }[] };
    const ms = performance.now() - t0;
    console.log(`unpickle ${(data.length / 1e6).toFixed(1)} MB: ${ms.toFixed(0)} ms`);
    expect(out.samples[1999]?.tokens[999]).toBe((1999 * 7919 + 999 * 104729) % 150000);
    expect(out.samples[5]?.rollout_log_probs[3]).toBe(-3 / 301);
    expect(ms).toBeLessThan(1500); // typically ~50-100 ms; generous for a shared 2-core box
  });
});

describe("unpickle: list fast path and skipListItems", () => {
  // MARK <items> APPENDS batches are taken by a speculative fast path when every item is
  // a primitive; anything else rolls back to the general VM. Both must agree.
  const PROTO2 = [0x80, 2];
  const EMPTY_LIST = 0x5d;
  const MARK = 0x28;
  const APPENDS = 0x65;
  const STOP = 0x2e;
  const binint1 = (v: number) => [0x4b, v];
  const binint2 = (v: number) => [0x4d, v & 0xff, v >> 8];
  const binint = (v: number) => { const b = Buffer.alloc(4); b.writeInt32LE(v); return [0x4a, ...b]; };
  const binfloat = (v: number) => { const b = Buffer.alloc(8); b.writeDoubleBE(v); return [0x47, ...b]; };
  const long1 = (v: number) => { const b = Buffer.alloc(6); b.writeIntLE(v, 0, 6); return [0x8a, 6, ...b]; };

  it("primitive batches (ints, floats, None, bools, LONG1) land in the list unchanged", () => {
    const items = [binint1(7), binint2(40000), binint(-5), binfloat(-0.25), [0x4e], [0x88], [0x89], long1(2 ** 40), binfloat(NaN)];
    const v = unpickle(bytesOf(...PROTO2, EMPTY_LIST, MARK, ...items.flat(), APPENDS, MARK, ...binint1(1), ...binint1(2), APPENDS, STOP)) as unknown[];
    expect(v).toEqual([7, 40000, -5, -0.25, null, true, false, 2 ** 40, NaN, 1, 2]);
  });

  it("a batch with a non-primitive item falls back to the general VM (same result)", () => {
    // [1, 2.5, (3, 4), 'x', 5]: TUPLE2 and a string break the fast path mid-batch.
    const v = unpickle(bytesOf(...PROTO2, EMPTY_LIST, MARK, ...binint1(1), ...binfloat(2.5), ...binint1(3), ...binint1(4), 0x86, 0x8c, 1, "x", ...binint1(5), APPENDS, STOP));
    expect(v).toEqual([1, 2.5, [3, 4], "x", 5]);
    // A MARK whose stack top is a list but that closes as a TUPLE (not APPENDS).
    const t = unpickle(bytesOf(...PROTO2, EMPTY_LIST, MARK, ...binint1(1), ...binint1(2), 0x74, 0x61, STOP));
    expect(t).toEqual([[1, 2]]);
    // Truncated inside the fast path: still a PickleError.
    expect(() => unpickle(bytesOf(...PROTO2, EMPTY_LIST, MARK, ...binint1(1), 0x4a, 1, 2))).toThrow(PickleError);
  });

  it("skipListItems: lists under the given dict keys only count their items", () => {
    const sample = { tokens: Array.from({ length: 2500 }, (_, i) => i % 300), loss_mask: [1, 0, 1], other: [1, 2, 3], rollout_log_probs: [pyFloat(-0.5)], name: "s" };
    const data = pickleDumps({ samples: [sample, { ...sample, tokens: [] }] });
    const skip = new Set(["tokens", "loss_mask", "rollout_log_probs"]);
    const full = asRecord(unpickle(data));
    const lean = asRecord(unpickle(data, { skipListItems: skip }));
    const [a, b] = lean.samples as Record<string, unknown>[];
    expect(a!.tokens).toBeInstanceOf(SkippedList);
    expect((a!.tokens as SkippedList).length).toBe(2500);
    expect((a!.loss_mask as SkippedList).length).toBe(3);
    expect((a!.rollout_log_probs as SkippedList).length).toBe(1);
    expect((b!.tokens as SkippedList).length).toBe(0);
    expect(a!.other).toEqual([1, 2, 3]);
    expect(a!.name).toBe("s");
    expect(((full.samples as Record<string, unknown>[])[0]!.tokens as unknown[]).length).toBe(2500);
  });
});
