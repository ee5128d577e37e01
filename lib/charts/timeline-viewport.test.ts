import { describe, expect, it } from "vitest";
import {
  clampViewport,
  covers,
  fetchWindow,
  followViewport,
  latestViewport,
  panBy,
  stepViewport,
  tickStep,
  ticksWithStep,
  timeTicks,
  wheelFactor,
  zoomAround,
} from "@/lib/charts/timeline-viewport";

const H4 = 14400;

describe("viewport", () => {
  it("starts on the last 4 h of data (or all of a shorter run)", () => {
    expect(latestViewport(0, 100)).toEqual({ v0: 0, v1: 100 });
    expect(latestViewport(0, 20000)).toEqual({ v0: 20000 - H4, v1: 20000 });
    expect(latestViewport(5, 5)).toEqual({ v0: 4, v1: 5 });
  });
  it("trails new data only when pinned to the right edge", () => {
    expect(followViewport({ v0: 50, v1: 100 }, 100, 0, 130)).toEqual({ v0: 80, v1: 130 });
    expect(followViewport({ v0: 20, v1: 60 }, 100, 0, 130)).toEqual({ v0: 20, v1: 60 });
  });
  it("zooms around the cursor, clamps to the data and never exceeds 4 h", () => {
    const z = zoomAround({ v0: 0, v1: 100 }, 25, 0.5, 0, 1000);
    expect(z).toEqual({ v0: 12.5, v1: 62.5 });
    const out = zoomAround({ v0: 10000, v1: 20000 }, 15000, 10, 0, 100000);
    expect(out.v1 - out.v0).toBe(H4);
    expect(zoomAround({ v0: 0, v1: 10 }, 5, 0.0001, 0, 100).v1 - zoomAround({ v0: 0, v1: 10 }, 5, 0.0001, 0, 100).v0).toBe(2);
    expect(wheelFactor(100)).toBeCloseTo(Math.exp(0.2));
  });
  it("pans with the span kept inside the data", () => {
    expect(panBy({ v0: 10, v1: 20 }, 100, 0, 50)).toEqual({ v0: 40, v1: 50 });
    expect(panBy({ v0: 10, v1: 20 }, -100, 0, 50)).toEqual({ v0: 0, v1: 10 });
    expect(clampViewport({ v0: -5, v1: 200 }, 0, 100)).toEqual({ v0: 0, v1: 100 });
  });
  it("fetches a margin around the viewport but never more than 4 h", () => {
    expect(fetchWindow({ v0: 400, v1: 800 }, 0, 1000)).toEqual({ v0: 300, v1: 900 });
    const f = fetchWindow({ v0: 0, v1: H4 }, 0, 100000);
    expect(f.v1 - f.v0).toBe(H4);
    expect(covers({ v0: 0, v1: 10 }, { v0: 1, v1: 9 })).toBe(true);
    expect(covers({ v0: 0, v1: 10 }, { v0: 1, v1: 11 })).toBe(false);
  });
});

describe("ticks", () => {
  it("picks the first step giving at most 10 ticks, aligned to T0", () => {
    expect(tickStep(329)).toBe(60);
    expect(tickStep(14400)).toBe(1800);
    expect(tickStep(86400)).toBe(14400);
    expect(timeTicks({ v0: 1000005, v1: 1000200 }, 1000000)).toEqual([1000030, 1000060, 1000090, 1000120, 1000150, 1000180]);
    expect(ticksWithStep({ v0: 95, v1: 260 }, 0, 60)).toEqual([120, 180, 240]);
  });
  it("frames one step for click-to-zoom", () => {
    const v = stepViewport(1000125, 95, 1000000, 1000329);
    expect(v.v0).toBeLessThan(1000030);
    expect(v.v1).toBeGreaterThan(1000125);
  });
});
