import { describe, expect, it, vi } from "vitest";
import { JsonSink, jsonSafeStringify, jsonSafeStringifyAsync, keepAnswerText, keptAnswerResponse, NO_TRANSFORM_MIN_BYTES } from "@/lib/api/json";

describe("jsonSafeStringify", () => {
  it("maps NaN and ±Infinity to null everywhere, including inside typed arrays", () => {
    const out = jsonSafeStringify({ a: NaN, b: [1, Infinity, -Infinity], c: { d: new Float32Array([0.5, NaN]) }, e: new Int32Array([3, -4]) });
    expect(JSON.parse(out)).toEqual({ a: null, b: [1, null, null], c: { d: [0.5, null] }, e: [3, -4] });
  });
  it("keeps finite floats at shortest round-trip precision", () => {
    expect(jsonSafeStringify([0.1, 1e-7, 12623968.5])).toBe("[0.1,1e-7,12623968.5]");
  });

  it("converts typed arrays nested in arrays of objects without touching the input", () => {
    const row = { ts: new Float64Array([1.5, 2]), tag: "a" };
    const input = { lanes: [row, { ts: [3] }], n: 2, when: new Date(0) };
    expect(JSON.parse(jsonSafeStringify(input))).toEqual({ lanes: [{ ts: [1.5, 2], tag: "a" }, { ts: [3] }], n: 2, when: "1970-01-01T00:00:00.000Z" });
    expect(row.ts).toBeInstanceOf(Float64Array);
    expect(input.lanes[0]).toBe(row);
  });
});

describe("toErrorResponse", () => {
  it("recognises ApiErrors from another bundle copy by their brand", async () => {
    const { toErrorResponse } = await import("@/lib/api/errors");
    const { ApiError } = await import("@/lib/contracts/errors");
    const foreign = Object.assign(new Error("no such sample"), { code: "not_found", [Symbol.for("rlboard.ApiError")]: true });
    const res = toErrorResponse(foreign, () => undefined);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: "no such sample", error: { code: "not_found", message: "no such sample" } });
    expect(ApiError.is(new Error("x"))).toBe(false);
    const hidden = toErrorResponse(new Error("secret path /etc"), () => undefined);
    expect(hidden.status).toBe(500);
    expect(JSON.stringify(await hidden.json())).not.toContain("/etc");
  });
});

describe("jsonSafeStringifyAsync", () => {
  const big = {
    lanes: Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`n${i}:0`, { ts: new Float64Array(3000).map((_, j) => j + 0.5), util: new Uint8Array(3000).fill(i), mem: Array.from({ length: 3000 }, (_, j) => (j % 7 ? j : NaN)) }]),
    ),
    phases: Array.from({ length: 5000 }, (_, i) => ({ name: "rollout", t0: i, t1: i === 3 ? Infinity : i + 1, extra: undefined, f: () => 1 })),
    mixed: [1, undefined, () => 2, null, "s", { a: undefined, b: [undefined, NaN] }, new Date(0), new Map([[1, 2]])],
    empty: { a: [], b: {} },
    n: NaN,
    skip: undefined,
  };

  it.each([
    ["a nested payload with typed arrays, NaN, undefined and functions", big],
    ["an array root", [big.mixed, [], [[1, [2, [3, new Int16Array([4])]]]]]],
    ["a scalar root", 5],
    ["an empty object", {}],
  ])("writes exactly jsonSafeStringify's text: %s", async (_name, value) => {
    expect(await jsonSafeStringifyAsync(value, 0)).toBe(jsonSafeStringify(value));
    expect(await jsonSafeStringifyAsync(value, 8, 1)).toBe(jsonSafeStringify(value));
    expect(await jsonSafeStringifyAsync(value, 8, 6)).toBe(jsonSafeStringify(value));
    expect(await jsonSafeStringifyAsync(value)).toBe(jsonSafeStringify(value));
  });

  it("writes runs of holey and sparse arrays, and BigInt arrays, with the one-shot text (holes as null)", async () => {
    const holey = new Array<number>(5000);
    for (let i = 0; i < holey.length; i++) holey[i] = i % 3 ? i + 0.125 : i;
    // eslint-disable-next-line no-sparse-arrays
    const sparse = [1, , 3, , , 6.5];
    sparse.length = 2500; // a hole at the end of one run and across the next
    const value = { holey, sparse, bigints: new BigInt64Array([1n, -2n, 2n ** 40n]), bytes: new Uint8Array([0, 255]) };
    const text = await jsonSafeStringifyAsync(value, 0);
    expect(text).toBe(jsonSafeStringify(value));
    const back = JSON.parse(text) as { sparse: unknown[]; bigints: number[]; holey: number[] };
    expect(back.sparse.slice(0, 7)).toEqual([1, null, 3, null, null, 6.5, null]);
    expect(back.bigints).toEqual([1, -2, 2 ** 40]);
    expect(back.holey.slice(0, 3)).toEqual([0, 1.125, 2.125]);
  });

  it("writes a mid-size nested answer (512 trajectory lanes) in one native call, the same bytes", async () => {
    const lanes = Array.from({ length: 512 }, (_, i) => ({ sample_index: i, events: Array.from({ length: 12 }, (_, j) => ({ kind: "gen", t0: i + j / 10, t1: NaN })) }));
    let turns = 0;
    setImmediate(() => turns++);
    const text = await jsonSafeStringifyAsync({ lanes, mixed: big.mixed });
    expect(text).toBe(jsonSafeStringify({ lanes, mixed: big.mixed }));
    expect(turns).toBe(0); // no slicing: answered before the event loop turned
  });

  it("writes runs of flat rows (phase intervals, table rows) natively, the same bytes as the one-shot form", async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => ({ name: `p${i % 7}`, t0: i + 0.5, t1: i % 11 ? i + 1.25 : NaN, node: "10.0.0.1", gpu: i % 8, skip: undefined }));
    const mixed = [...rows.slice(0, 1500), { nested: new Float32Array([1, NaN, 2]) }, new Date(0), ...rows.slice(1500)];
    for (const v of [{ phases: rows }, { rows: mixed, n: 2 }, [rows, mixed]]) {
      expect(await jsonSafeStringifyAsync(v)).toBe(jsonSafeStringify(v));
    }
  });

  it("writes series of numbers (long, short, typed, with a stray non-number) with the one-shot text", async () => {
    const ms = (i: number) => 1763985573 + i * 0.997 + (i % 5) / 1000;
    const series = Array.from({ length: 6 }, (_, s) => ({
      addr: `10.0.0.${s}:30000`,
      labels: { dp_rank: String(s) },
      ts: s % 2 ? Float64Array.from({ length: 3000 }, (_, i) => Math.round(ms(i) * 1000) / 1000) : Array.from({ length: 3000 }, (_, i) => Math.round(ms(i) * 1000) / 1000),
      value: Array.from({ length: 3000 }, (_, i) => (i % 97 ? i * 0.25 : NaN)),
    }));
    const long = Array.from({ length: 40_000 }, (_, i) => i / 8);
    const stray = [...long.slice(0, 20_000), null, ...long.slice(20_000)];
    const lanes = Object.fromEntries(
      Array.from({ length: 4 }, (_, l) => [`n${l}:0`, { ts: new Float64Array(20_000).map((_, i) => 1.7e9 + i + l / 1000), util: new Uint8Array(20_000).fill(l * 30), mem_mb: new Int32Array(20_000).fill(-l) }]),
    );
    const values = [{ series }, { long, stray, short: [1.5, 2], empty: [], f32: new Float32Array([0.1, NaN, 3]) }, { lanes }, [series[0], [long.slice(0, 40)]]];
    for (const v of values) {
      const want = jsonSafeStringify(v);
      expect(await jsonSafeStringifyAsync(v)).toBe(want);
      expect(await jsonSafeStringifyAsync(v, 0)).toBe(want);
      expect(await jsonSafeStringifyAsync(v, 8, 1)).toBe(want);
    }
  });

  it("gives the event loop a turn while it writes a large answer", async () => {
    let turns = 0;
    let stop = false;
    const spin = () => {
      if (stop) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    const text = await jsonSafeStringifyAsync(big, 0);
    stop = true;
    expect(text.length).toBeGreaterThan(1_000_000);
    expect(turns).toBeGreaterThan(10);
  });
});

describe("compression of large heavy answers", () => {
  it("marks answers of 1 MiB or more no-transform (Next then sends them uncompressed), the text unchanged", async () => {
    const { jsonResponseSliced, jsonSafeStringify, NO_TRANSFORM_MIN_BYTES } = await import("@/lib/api/json");
    const big = { xs: Array.from({ length: NO_TRANSFORM_MIN_BYTES / 8 }, (_, i) => i / 3) };
    const res = await jsonResponseSliced(big);
    expect(res.headers.get("cache-control")).toBe("no-transform");
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.text()).toBe(jsonSafeStringify(big));
    const kept = await jsonResponseSliced(big, { headers: { "cache-control": "private, max-age=5" } });
    expect(kept.headers.get("cache-control")).toBe("private, max-age=5, no-transform");
    const small = await jsonResponseSliced({ xs: [1, 2, 3] });
    expect(small.headers.get("cache-control")).toBeNull();
    expect(await small.text()).toBe('{"xs":[1,2,3]}');
  });
});

describe("keptAnswerResponse: the text of a frozen answer is written once", () => {
  const answer = () => Object.freeze({ rollout_id: 3, rows: Array.from({ length: 400 }, (_, i) => ({ i, v: i / 7, nan: NaN })) });

  it("leaves answers that are not frozen to the usual path", async () => {
    expect(await keptAnswerResponse({ a: 1 })).toBeNull();
    expect(await keptAnswerResponse(null)).toBeNull();
    expect(await keptAnswerResponse(Object.freeze([1, 2]) as unknown)).not.toBeNull();
  });

  it("sends the answer's JSON text, the same every time", async () => {
    const a = answer();
    const r1 = (await keptAnswerResponse(a))!;
    expect(r1.headers.get("content-type")).toBe("application/json");
    expect(r1.headers.get("cache-control")).toBeNull(); // Next compresses it as any answer
    const t1 = await r1.text();
    expect(t1).toBe(jsonSafeStringify(a));
    expect((JSON.parse(t1) as { rows: unknown[] }).rows[5]).toEqual({ i: 5, v: 5 / 7, nan: null });
    expect(await (await keptAnswerResponse(a))!.text()).toBe(t1);
  });

  it("keeps one text per process: another instance of the module (the warm-up's bundle) sends the text written here", async () => {
    let writes = 0;
    const a = Object.freeze({ rows: [1, 2], at: { toJSON: () => (writes++, "t") } });
    await keepAnswerText(a);
    await keepAnswerText({ not: "frozen" }); // ignored
    expect(writes).toBe(1);
    vi.resetModules();
    const other = await import("@/lib/api/json");
    expect(other.keptAnswerResponse).not.toBe(keptAnswerResponse);
    expect(await (await other.keptAnswerResponse(a))!.text()).toBe('{"rows":[1,2],"at":"t"}');
    expect(writes).toBe(1);
  });

  it("sends a long answer marked no-transform, as jsonResponseSliced does", async () => {
    const big = Object.freeze({ s: "x".repeat(NO_TRANSFORM_MIN_BYTES) });
    const r = (await keptAnswerResponse(big))!;
    expect(r.headers.get("cache-control")).toBe("no-transform");
    expect((await r.text()).length).toBe(NO_TRANSFORM_MIN_BYTES + 8);
  });
});

describe("answers are sent as the UTF-8 bytes they were written in", () => {
  it("sends exactly the text, whatever characters fall on the buffers' edges", async () => {
    const { jsonResponseSliced, jsonSafeStringify } = await import("@/lib/api/json");
    // Surrogate pairs (emoji), 3-byte (CJK) and 2-byte (é) characters at every alignment
    // against the sink's buffer edges.
    for (const prefix of ["", "x", "xy", "xyz"]) {
      const value = Object.freeze({ s: prefix + "😀".repeat(70_000), t: "漢é".repeat(40_000), n: [1.5, NaN, 3] });
      const want = jsonSafeStringify(value);
      for (const res of [await jsonResponseSliced(value), (await keptAnswerResponse(value))!]) {
        const bytes = new Uint8Array(await res.arrayBuffer());
        expect(new TextDecoder("utf-8", { fatal: true }).decode(bytes)).toBe(want);
        expect(bytes.length).toBe(Buffer.byteLength(want));
      }
    }
  });

  it("a sliced answer of many pieces arrives whole, in buffers of at most 1 MiB", async () => {
    const { jsonResponseSliced, jsonSafeStringify } = await import("@/lib/api/json");
    const value = { lanes: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`n${i}`, { ts: Array.from({ length: 3000 }, (_, k) => 1.7e9 + k / 3), util: new Uint8Array(3000).fill(i) }])) };
    const res = await jsonResponseSliced(value);
    const reader = res.body!.getReader();
    const chunks: Uint8Array[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
    const want = jsonSafeStringify(value);
    expect(want.length).toBeGreaterThan(2 << 20);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(1 << 20);
    expect(Buffer.concat(chunks).toString("utf8")).toBe(want);
  });
});

describe("JsonSink", () => {
  it("holds exactly the text appended, for random strings, literals and runs of numbers", () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const alphabet = ["a", "é", "漢", "😀", "\n", '"'];
    for (let round = 0; round < 20; round++) {
      const sink = new JsonSink();
      const want: string[] = [];
      for (let op = 1 + rnd(30); op > 0; op--) {
        const kind = rnd(3);
        if (kind === 0) {
          const n = rnd(4) === 0 ? rnd(600_000) : rnd(300);
          let s = "";
          while (s.length < n) s += alphabet[rnd(alphabet.length)]!.repeat(1 + rnd(50));
          sink.text(s);
          want.push(s);
        } else if (kind === 1) {
          sink.ascii(",");
          want.push(",");
        } else {
          // timestamps, counts, and now and then a stretch the digit writer refuses (a null
          // inside, or mostly other fractions): JSON.stringify writes that stretch
          const n = rnd(3) === 0 ? rnd(40_000) : rnd(100);
          const other = rnd(3) === 0;
          const xs: unknown[] = Array.from({ length: n }, (_, i) => (other && rnd(2) ? i / 7 : rnd(2) ? 1.7e9 + i / 1000 : rnd(1000)));
          if (n > 0 && rnd(4) === 0) xs[rnd(n)] = null;
          const from = n > 0 ? rnd(n) : 0;
          sink.numbers(xs, from, n);
          want.push(JSON.stringify(xs.slice(from, n)).slice(1, -1));
        }
      }
      const chunks = sink.chunks();
      const bytes = Buffer.concat(chunks);
      expect(bytes.length).toBe(sink.bytes);
      const got = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      const text = want.join("");
      // compared by index, not by toBe: a diff of MB-long strings takes minutes to print
      let i = 0;
      while (i < text.length && got.charCodeAt(i) === text.charCodeAt(i)) i++;
      expect({ round, firstDifference: i, length: got.length }).toEqual({ round, firstDifference: text.length, length: text.length });
      for (const c of chunks.slice(0, -1)) expect(c.length).toBeGreaterThan(0);
    }
    expect(new JsonSink().chunks()).toEqual([]);
  });

  it("copies the text of a run equal to a recent one, and only then", () => {
    const ticks = Array.from({ length: 4000 }, (_, i) => 1763985602.012 + 2 * i);
    const neg = ticks.map((t, i) => (i === 7 ? -0 : t));
    const zero = ticks.map((t, i) => (i === 7 ? 0 : t));
    const runs: ArrayLike<unknown>[] = [
      ticks,
      Array.from({ length: 4000 }, (_, i) => i % 60),
      [...ticks], // equal, another array: copied
      Float64Array.from(ticks), // equal, typed: copied
      ticks.map((t, i) => (i === 3999 ? t + 1 : t)), // the last element differs
      ticks.map((t, i) => (i === 0 ? t - 1 : t)), // the first element differs
      ticks.slice(0, 3999), // shorter
      neg,
      zero, // equal to `neg` as numbers, the same text
      ticks.map((t, i) => (i === 5 ? NaN : t)),
      ticks.map((t, i) => (i === 5 ? NaN : t)), // NaN is not equal to NaN: written again, the same text
      ticks.map((t) => t / 7), // left to JSON.stringify
      ticks.map((t) => t / 7),
      ticks, // the same array again (series sharing one timestamps array): copied
    ];
    const sink = new JsonSink();
    const want: string[] = [];
    runs.forEach((r, k) => {
      if (k > 0) {
        sink.ascii(";");
        want.push(";");
      }
      sink.numbers(r, 0, r.length);
      want.push(JSON.stringify(Array.from(r as ArrayLike<number>)).slice(1, -1));
    });
    expect(Buffer.concat(sink.chunks()).toString()).toBe(want.join(""));
    // the same array from another element is another run
    const shifted = new JsonSink();
    shifted.numbers(ticks, 0, 100);
    shifted.ascii(";");
    shifted.numbers(ticks, 1, 101);
    expect(Buffer.concat(shifted.chunks()).toString()).toBe(`${JSON.stringify(ticks.slice(0, 100)).slice(1, -1)};${JSON.stringify(ticks.slice(1, 101)).slice(1, -1)}`);
    // a run of another answer's sink is not a recent run of this one
    const other = new JsonSink();
    other.numbers(ticks.map((t) => t + 1), 0, 4000);
    expect(Buffer.concat(other.chunks()).toString()).toBe(JSON.stringify(ticks.map((t) => t + 1)).slice(1, -1));
  });

  it("never copies what it wrote: a first buffer of its size, then buffers of 1 MiB", () => {
    const sink = new JsonSink();
    sink.text("x".repeat(200_000));
    expect(sink.chunks().map((c) => c.buffer.byteLength)).toEqual([256 * 1024]);
    const first = sink.chunks()[0]!;
    sink.text("y".repeat(100_000));
    const after = sink.chunks();
    expect(after.map((c) => c.length)).toEqual([200_000, 100_000]);
    expect(after[0]!.buffer).toBe(first.buffer);
    expect(after[1]!.buffer.byteLength).toBe(1 << 20);
    sink.text("z".repeat(3_000_000)); // longer than a buffer: one of its own size
    expect(sink.chunks().map((c) => c.length)).toEqual([200_000, 100_000, 3_000_000]);
    expect(sink.chunks()[2]!.buffer.byteLength).toBe(3_000_000);

    const small = new JsonSink(1024);
    small.text('{"rows":[1,2,3]}');
    small.numbers([1.5, 2, 3], 0, 3); // room for 3 numbers fits the first buffer
    expect(small.chunks()).toHaveLength(1);
    // a slice of Node's 8 KiB pool (Buffer.allocUnsafe below 4 KiB), not a buffer of its own
    expect(small.chunks()[0]!.buffer.byteLength).toBeLessThanOrEqual(Buffer.poolSize);
    expect(Buffer.concat(small.chunks()).toString()).toBe('{"rows":[1,2,3]}1.5,2,3');
  });
});
