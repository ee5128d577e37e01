import { describe, expect, it } from "vitest";
import { anatomyDensity, anatomyTooltip, MIN_LABEL_GAP_PX, panView, prepareAnatomy, timeTicks, versionColor, zoomView } from "./anatomy";
import { trajectories0 } from "./testing/golden";

describe("versionColor", () => {
  it("starts green at v0 and steps 25° per version around a 320° ring", () => {
    expect(versionColor(0)).toBe("hsl(160, 69%, 37%)");
    expect(versionColor(1)).toBe("hsl(185, 69%, 37%)");
    expect(versionColor(9)).toBe("hsl(65, 69%, 37%)");
  });
});

describe("prepareAnatomy", () => {
  it("makes one row per lane, relative to the earliest submit, with the consume marker", () => {
    const m = prepareAnatomy(trajectories0)!;
    expect(m.rows).toHaveLength(trajectories0.lanes.length);
    expect(m.t0).toBe(Math.min(...trajectories0.lanes.map((l) => l.first_ts)));
    expect(m.consume).toBe(trajectories0.consume_ts! - m.t0);
    const s0 = m.rows.find((r) => r.sampleIndex === 0)!;
    expect(s0.segments.map((s) => [s.kind, s.version])).toEqual([
      ["gen", 0],
      ["tool", 0],
      ["gen", 1],
    ]);
    expect(s0.segments[0]!.color).toBe(versionColor(0));
    expect(m.versions).toContain(1);
  });
  it("sorts by wall span and by reward, ties on submit", () => {
    const bySpan = prepareAnatomy(trajectories0, "span")!.rows;
    const spans = bySpan.map((r) => r.last - r.first);
    expect([...spans].sort((a, b) => b - a)).toEqual(spans);
    const facts = new Map(trajectories0.lanes.map((l) => [l.sample_index, { reward: l.sample_index % 2, turns: 1 }]));
    const byReward = prepareAnatomy(trajectories0, "reward", facts)!.rows;
    expect(byReward[0]!.sampleIndex % 2).toBe(1);
    expect(byReward[0]!.info).toBe("1t·r=1");
  });
  it("returns null without lanes (run predates the probes)", () => {
    expect(prepareAnatomy({ lanes: [], consume_ts: null, t0: null })).toBeNull();
  });
});

describe("density, ticks and view arithmetic", () => {
  it("switches to compressed rows above 48 lanes", () => {
    expect(anatomyDensity(32)).toMatchObject({ detailed: true, rowH: 13, labelEvery: 1 });
    expect(anatomyDensity(512)).toMatchObject({ detailed: false, rowH: 4, labelEvery: 13 });
    // 64 rows of 4 px: every 3rd row (12 px apart), not every 2nd (8 px: the labels overprinted)
    expect(anatomyDensity(64)).toMatchObject({ detailed: false, rowH: 4, labelEvery: 3 });
    for (const n of [49, 64, 100, 513, 2000]) {
      const d = anatomyDensity(n);
      expect(d.labelEvery * d.rowH, String(n)).toBeGreaterThanOrEqual(MIN_LABEL_GAP_PX);
    }
    expect(anatomyDensity(1000).rowH).toBe(2);
  });
  it("picks the first tick step giving at most 8 ticks", () => {
    expect(timeTicks([0, 95]).step).toBe(30);
    expect(timeTicks([0, 5]).ticks).toEqual([0, 1, 2, 3, 4, 5]);
  });
  it("zooms around the cursor, clamps to the run and keeps at least 1 s", () => {
    const z = zoomView([0, 100], 50, -500, 100);
    expect(z[0]).toBeGreaterThan(0);
    expect(z[1]).toBeLessThan(100);
    expect((z[0] + z[1]) / 2).toBeCloseTo(50, 5);
    expect(zoomView([0, 100], 50, 1000, 100)).toEqual([0, 100]);
    const tiny = zoomView([49, 51], 50, -5000, 100);
    expect(tiny[1] - tiny[0]).toBeCloseTo(1, 9);
    expect(panView([0, 10], -5, 100)).toEqual([0, 10]);
    expect(panView([80, 100], 30, 100)).toEqual([80, 100]);
  });
  it("describes what a sample was doing at a time", () => {
    const m = prepareAnatomy(trajectories0)!;
    const s0 = m.rows.find((r) => r.sampleIndex === 0)!;
    const gen = s0.segments[0]!;
    expect(anatomyTooltip(s0, (gen.a + gen.b) / 2)).toMatch(/^s0 .*completed {2}v0–v1\nturn 1 generating · v0/);
    const tool = s0.segments[1]!;
    expect(anatomyTooltip(s0, (tool.a + tool.b) / 2)).toContain("tool wait");
    expect(anatomyTooltip(s0, s0.attempts[0]!.a + 0.1)).toContain("queued / waiting");
  });
});
