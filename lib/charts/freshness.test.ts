import { describe, expect, test } from "vitest";
import { freshness, lastPointTs, panelFreshness } from "@/lib/charts/freshness";

describe("freshness is about what is shown (#15 defect 6)", () => {
  test("no data: waiting only while the run runs; a finished/killed run without a stream has none", () => {
    expect(freshness({ mode: "follow", t1: null, nowS: 1000 }).state).toBe("waiting");
    expect(freshness({ mode: "follow", t1: null, nowS: 1000, runState: "running" }).state).toBe("waiting");
    expect(freshness({ mode: "follow", t1: null, nowS: 1000, runState: "killed" }).state).toBe("none");
    expect(freshness({ mode: "static", t1: null, nowS: 1000, runState: "finished" }).state).toBe("none");
  });

  test("a panel's own last point: frozen SGLang series are stale while the run's data is live", () => {
    const now = 10_000;
    expect(panelFreshness({ mode: "follow", t1: now - 6, runT1: now - 6, nowS: now })).toEqual({ state: "live", ageS: 6, behindS: 0 });
    expect(panelFreshness({ mode: "follow", t1: now - 43 * 60, runT1: now - 6, nowS: now })).toMatchObject({ state: "stale", ageS: 43 * 60 });
    // a finished run: a panel that stopped long before the run's end is stale, one that ran to the end is not
    expect(panelFreshness({ mode: "static", t1: 5000, runT1: 8000, nowS: now })).toMatchObject({ state: "stale", behindS: 3000 });
    expect(panelFreshness({ mode: "static", t1: 7990, runT1: 8000, nowS: now })).toMatchObject({ state: "static", behindS: 10 });
    expect(panelFreshness({ mode: "follow", t1: null, runT1: 8000, nowS: now, runState: "finished" }).state).toBe("none");
  });

  test("lastPointTs: the newest last ts over series", () => {
    expect(lastPointTs([{ ts: [1, 5] }, { ts: [] }, { ts: [2, 9] }])).toBe(9);
    expect(lastPointTs([])).toBeNull();
    expect(lastPointTs(undefined)).toBeNull();
  });
});
