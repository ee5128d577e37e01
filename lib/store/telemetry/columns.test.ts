/**
 * Col.reserve (#20): a parse that knows its file's size holds a column's rows in one buffer,
 * so closing the column takes that buffer as `flat` instead of copying it. Checked against
 * a column without a reservation (same pushes and appends, same values) for estimates that
 * are close, too high and too low, and for rows already present when it is reserved.
 */
import { describe, expect, it } from "vitest";
import { CHUNK, Col } from "@/lib/store/telemetry/columns";

/** A deterministic generator (no Math.random in tests). */
function lcg(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/** `n` rows into `a` and `b` alike, by single pushes and bulk appends of random sizes. */
function fill(rnd: () => number, n: number, ...cols: Col<Int32Array>[]): void {
  let done = 0;
  while (done < n) {
    const take = Math.min(n - done, 1 + Math.floor(rnd() * 9000));
    const src = Int32Array.from({ length: take }, (_, i) => (done + i) * 7 - 3);
    for (const c of cols) {
      if (rnd() < 0.5) c.append(src);
      else for (const v of src) c.push(v);
    }
    done += take;
  }
}

describe("Col.reserve", () => {
  it("holds the rows in the reserved buffer and closes without a copy when the estimate is close", () => {
    const rnd = lcg(7);
    const n = 3 * CHUNK + 1234;
    const plain = new Col(Int32Array);
    const sized = new Col(Int32Array);
    fill(rnd, 5000, plain, sized);
    sized.reserve(Math.ceil(n * 1.02));
    fill(rnd, n - 5000, plain, sized);
    for (const i of [0, 4999, 5000, CHUNK - 1, CHUNK, n - 1]) expect(sized.get(i)).toBe(plain.get(i));
    const buffer = sized.chunks[0]!.buffer;
    expect(sized.chunks.every((c) => c.buffer === buffer)).toBe(true);
    sized.compact();
    plain.compact();
    expect(sized.flat!.buffer).toBe(buffer); // no copy
    expect(sized.flat!.length).toBe(n);
    expect(Array.from(sized.flat!)).toEqual(Array.from(plain.flat!));
    expect(sized.chunks.length).toBe(Math.ceil(n / CHUNK));
  });

  it("copies when the estimate left more than 1/16 unused, and grows past one that was too low", () => {
    for (const [rows, estimate] of [
      [2 * CHUNK, 3 * CHUNK], // too high: the spare room is not kept
      [3 * CHUNK + 77, 2 * CHUNK + 5], // too low: rows past it go into chunks of their own
      [CHUNK * 2 + 3, CHUNK * 2 + 3], // exact, ending inside a chunk
    ] as const) {
      const rnd = lcg(rows);
      const plain = new Col(Int32Array);
      const sized = new Col(Int32Array);
      fill(rnd, 100, plain, sized);
      sized.reserve(estimate);
      fill(rnd, rows - 100, plain, sized);
      sized.compact();
      plain.compact();
      expect(Array.from(sized.flat!), `${rows}/${estimate}`).toEqual(Array.from(plain.flat!));
      expect(sized.flat!.buffer.byteLength, `${rows}/${estimate}`).toBe(rows * 4);
    }
  });

  it("is ignored on a closed or loaded column and when the estimate is not above the rows held", () => {
    const c = new Col(Int32Array);
    c.load(Int32Array.from([1, 2, 3]));
    c.reserve(10 * CHUNK);
    c.push(4);
    expect(Array.from(c.toArray())).toEqual([1, 2, 3, 4]);
    const d = new Col(Int32Array);
    fill(lcg(3), CHUNK + 10, d);
    d.reserve(CHUNK);
    expect(d.chunks[0]!.buffer).not.toBe(d.chunks[1]!.buffer);
  });

  it("trim() of a reserved column closes it like compact()", () => {
    const c = new Col(Int32Array);
    c.reserve(2 * CHUNK + 100);
    fill(lcg(5), 2 * CHUNK, c);
    const buffer = c.chunks[0]!.buffer;
    c.trim();
    expect(c.flat!.buffer).toBe(buffer);
    expect(c.flat!.length).toBe(2 * CHUNK);
  });
});
