import { describe, expect, it } from "vitest";
import { columnEnvelope, nearestFiniteIndex, nearestIndex, nearestInPixels, reduceM4, traceColumns, visibleRange, yExtentInWindow, type PathSink } from "@/lib/charts/core/envelope";

const seq = (n: number, f: (i: number) => number) => Float64Array.from({ length: n }, (_, i) => f(i));

describe("reduceM4", () => {
  it("returns raw points when the window holds no more than one per pixel", () => {
    const x = seq(10, (i) => i);
    const y = seq(10, (i) => i * 2);
    const r = reduceM4(x, y, 0, 9, 100);
    expect(r.reduced).toBe(false);
    expect(r.length).toBe(10);
  });

  it("keeps every spike and dip when reducing (min/max, never the mean)", () => {
    const n = 10_000;
    const x = seq(n, (i) => i);
    const y = seq(n, (i) => (i === 4321 ? 1000 : i === 7777 ? -1000 : Math.sin(i / 50)));
    const r = reduceM4(x, y, 0, n - 1, 200);
    expect(r.reduced).toBe(true);
    expect(r.length).toBeLessThanOrEqual(200 * 4 + 8);
    const ys = Array.from(r.y.subarray(0, r.length));
    expect(Math.max(...ys)).toBe(1000);
    expect(Math.min(...ys)).toBe(-1000);
  });

  it("never bridges a gap: a NaN break is emitted and buckets close at it", () => {
    const x = seq(2000, (i) => i);
    const y = seq(2000, (i) => (i >= 1000 && i < 1010 ? Number.NaN : 1));
    const r = reduceM4(x, y, 0, 1999, 50);
    const ys = Array.from(r.y.subarray(0, r.length));
    expect(ys.filter((v) => Number.isNaN(v)).length).toBe(1);
    const raw = reduceM4(seq(5, (i) => i), Float64Array.from([1, Number.NaN, Number.NaN, 2, 3]), 0, 4, 100);
    expect(Array.from(raw.y.subarray(0, raw.length)).map((v) => (Number.isNaN(v) ? "gap" : v))).toEqual([1, "gap", 2, 3]);
  });

  it("draws one neighbour beyond each window edge so lines reach the border", () => {
    const x = seq(100, (i) => i);
    expect(visibleRange(x, 10.5, 20.5)).toEqual([10, 22]);
  });
});

describe("columnEnvelope", () => {
  it("is null when the window holds at most one point per column (a path is exact then)", () => {
    const x = seq(50, (i) => i);
    expect(columnEnvelope(x, x, 0, 49, 100)).toBeNull();
  });

  it("keeps every column's min and max, and joins each bar to the previous column's last value", () => {
    // 10 columns over [0, 100), 4 samples per column: a spike of 90 in column 3, a dip of 1 in column 6
    const x = seq(40, (i) => i * 2.5);
    const y = Float64Array.from(x, (_, i) => (i === 13 ? 90 : i === 26 ? 1 : 50 + (i % 4)));
    const e = columnEnvelope(x, y, 0, 100, 10)!;
    expect(e.cols).toBe(10);
    expect(Array.from(e.hi)).toEqual([53, 53, 53, 90, 53, 53, 53, 53, 53, 53]);
    expect(Array.from(e.lo)).toEqual([50, 50, 50, 50, 50, 50, 1, 50, 50, 50]);
    // column 4 starts after column 3 ended at 53: its bar spans 50..53 (joined, nothing extra)
    expect([e.barLo[4], e.barHi[4]]).toEqual([50, 53]);
    // a column whose predecessor ended higher reaches up to it
    const y2 = Float64Array.from(x, (_, i) => (i < 20 ? 80 : 20));
    const e2 = columnEnvelope(x, y2, 0, 100, 10)!;
    expect([e2.lo[5], e2.hi[5], e2.barLo[5], e2.barHi[5]]).toEqual([20, 20, 20, 80]);
  });

  it("bridges empty columns between samples by interpolation, but never across a NaN", () => {
    // 30 samples: a dense run, a stretch with one sample every 4 columns, then NaN, then more
    const xs: number[] = [];
    const ys: number[] = [];
    for (let i = 0; i < 20; i++) {
      xs.push(i * 0.5);
      ys.push(10);
    }
    xs.push(14, 18);
    ys.push(30, 50);
    xs.push(19);
    ys.push(Number.NaN);
    for (let i = 0; i < 12; i++) {
      xs.push(24 + i * 0.5);
      ys.push(70);
    }
    const e = columnEnvelope(xs, ys, 0, 30, 30)!;
    // columns 10..13 lie between the samples at x=9.5 (10) and x=14 (30): interpolated upwards
    expect(e.hi[12]! > 10 && e.hi[12]! < 30).toBe(true);
    expect(e.hi[16]! > 30 && e.hi[16]! < 50).toBe(true);
    // 19..23: after the NaN nothing is bridged
    for (let c = 19; c < 24; c++) expect(Number.isNaN(e.hi[c]!)).toBe(true);
    expect(e.hi[25]).toBe(70);
    // the first column after a gap does not reach back across it
    expect([e.barLo[24], e.barHi[24]]).toEqual([70, 70]);
  });

  it("runs to both plot edges from the neighbours just outside the window", () => {
    const x = seq(400, (i) => i - 100); // -100..299
    const y = Float64Array.from(x, () => 42);
    const e = columnEnvelope(x, y, 0.5, 99.5, 20)!;
    expect(Array.from(e.hi).every((v) => v === 42)).toBe(true);
  });
});

describe("lookups", () => {
  it("finds the nearest sample and skips gaps", () => {
    const x = Float64Array.from([0, 10, 20, 30]);
    const y = Float64Array.from([1, Number.NaN, 3, 4]);
    expect(nearestIndex(x, 12)).toBe(1);
    expect(nearestFiniteIndex(x, y, 12)).toBe(2);
    expect(yExtentInWindow(x, y, 5, 35)).toEqual([3, 4]);
    expect(yExtentInWindow(x, y, 9, 11)).toBeNull();
  });
});

describe("nearestInPixels", () => {
  it("picks the closest finite point within the radius, in pixel space", () => {
    const xs = [0, 10, 20];
    const ys = [0, Number.NaN, 5];
    const id = (v: number) => v * 10;
    expect(nearestInPixels(xs, ys, id, id, 190, 40, 20)).toBe(2);
    expect(nearestInPixels(xs, ys, id, id, 100, 0, 20)).toBe(-1); // the NaN point is never picked
    expect(nearestInPixels(xs, ys, id, id, 3, 4, 5)).toBe(0);
  });
});

/** Records closed polygons; `winding` is the nonzero rule a canvas fills with. */
class Polygons implements PathSink {
  readonly rings: [number, number][][] = [];
  calls = 0;
  moveTo(x: number, y: number) {
    this.calls++;
    this.rings.push([[x, y]]);
  }
  lineTo(x: number, y: number) {
    this.calls++;
    this.rings.at(-1)!.push([x, y]);
  }
  closePath() {
    this.calls++;
  }
  winding(px: number, py: number): number {
    let w = 0;
    for (const ring of this.rings) {
      for (let i = 0; i < ring.length; i++) {
        const [ax, ay] = ring[i]!;
        const [bx, by] = ring[(i + 1) % ring.length]!;
        // a horizontal ray to +x: count upward / downward crossings of each edge
        if (ay <= py && by > py && (bx - ax) * (py - ay) - (px - ax) * (by - ay) > 0) w++;
        else if (ay > py && by <= py && (bx - ax) * (py - ay) - (px - ax) * (by - ay) < 0) w--;
      }
    }
    return w;
  }
}

describe("traceColumns", () => {
  // deterministic pseudo-random numbers
  let seed = 7;
  const rnd = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;

  it("covers exactly the union of the column boxes: gaps, equal neighbours, disjoint and nested spans", () => {
    for (let round = 0; round < 24; round++) {
      const cols = 1 + Math.floor(rnd() * 60);
      const x0 = rnd() * 10;
      const top = new Float64Array(cols);
      const bottom = new Float64Array(cols);
      for (let c = 0; c < cols; c++) {
        const r = rnd();
        if (r < 0.15) {
          top[c] = Number.NaN; // no box
          continue;
        }
        // quantised so that equal neighbours are common
        top[c] = r < 0.35 && c > 0 && !Number.isNaN(top[c - 1]!) ? top[c - 1]! : Math.round(rnd() * 16) * 2.5;
        bottom[c] = r < 0.5 && c > 0 && !Number.isNaN(top[c - 1]!) ? Math.max(top[c]! + 0.5, bottom[c - 1]!) : top[c]! + 0.5 + Math.round(rnd() * 12) * 2.5;
      }
      const p = new Polygons();
      traceColumns(p, cols, x0, top, bottom);
      for (let c = 0; c < cols; c++) {
        const px = x0 + c + 0.5;
        for (let y = -1.3; y < 80; y += 1.1) {
          const inside = !Number.isNaN(top[c]!) && y > top[c]! && y < bottom[c]!;
          if (Math.abs(y - top[c]!) < 1e-9 || Math.abs(y - bottom[c]!) < 1e-9) continue; // on an edge
          expect(p.winding(px, y) !== 0, `round ${round} column ${c} y ${y}`).toBe(inside);
        }
      }
    }
  });

  it("one outline per run of boxes, and equal neighbours add no vertex", () => {
    const p = new Polygons();
    const N = Number.NaN;
    traceColumns(p, 7, 10, [5, 5, 5, N, 3, 4, N], [9, 9, 9, 0, 8, 8, 0]);
    expect(p.rings).toEqual([
      [[10, 5], [13, 5], [13, 9], [10, 9]],
      [[14, 3], [15, 3], [15, 4], [16, 4], [16, 8], [14, 8]],
    ]);
    const none = new Polygons();
    traceColumns(none, 3, 0, [N, N, N], [1, 1, 1]);
    expect(none.calls).toBe(0);
  });

  it("costs path calls per step, not per column, on a flat series", () => {
    const p = new Polygons();
    const cols = 1330;
    traceColumns(p, cols, 0, new Float64Array(cols).fill(20), new Float64Array(cols).fill(60));
    expect(p.calls).toBeLessThanOrEqual(6);
  });
});
