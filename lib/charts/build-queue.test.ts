import { describe, expect, test } from "vitest";
import { CostEstimate, createBuildQueue, viewportPriority, type FrameClock } from "@/lib/charts/build-queue";

/** A fake frame clock: `frame()` runs the requested callbacks; builds advance time. */
function fakeClock() {
  let t = 0;
  let cbs: (() => void)[] = [];
  const clock: FrameClock = { now: () => t, requestFrame: (cb) => void cbs.push(cb) };
  return {
    clock,
    advance: (ms: number) => void (t += ms),
    requested: () => cbs.length,
    frame: () => {
      const run = cbs;
      cbs = [];
      for (const cb of run) cb();
    },
  };
}

describe("build queue", () => {
  test("builds in priority order, spreading over frames by the time budget", () => {
    const f = fakeClock();
    const q = createBuildQueue(f.clock, { budgetMs: 8 });
    const order: string[] = [];
    const perFrame: number[] = [];
    const add = (id: string, prio: number, cost: number) => q.enqueue({ priority: () => prio, run: () => (order.push(id), f.advance(cost)) });
    add("far", 2000, 5);
    add("top", 0, 5);
    add("mid", 300, 5);
    add("near", 950, 5);
    expect(order).toEqual([]); // nothing runs before a frame
    expect(f.requested()).toBe(1); // one frame request for many enqueues
    while (q.pending() > 0) {
      const before = order.length;
      f.frame();
      perFrame.push(order.length - before);
    }
    expect(order).toEqual(["top", "mid", "near", "far"]);
    // 5 ms builds under an 8 ms budget: one per frame once the estimate has learned the cost
    expect(perFrame.every((n) => n >= 1 && n <= 2)).toBe(true);
    expect(perFrame.length).toBeGreaterThanOrEqual(3);
    expect(f.requested()).toBe(0); // idle once empty: no frame loop
  });

  test("cheap builds share a frame; a build over budget still runs alone (progress every frame)", () => {
    const f = fakeClock();
    const q = createBuildQueue(f.clock, { budgetMs: 8 });
    const ran: number[] = [];
    for (let i = 0; i < 10; i++) q.enqueue({ priority: () => i, run: () => (ran.push(i), f.advance(1)) });
    f.frame();
    expect(ran.length).toBeGreaterThanOrEqual(5);
    expect(ran.length).toBeLessThanOrEqual(8);
    const g = fakeClock();
    const q2 = createBuildQueue(g.clock, { budgetMs: 8 });
    let n = 0;
    for (let i = 0; i < 3; i++) q2.enqueue({ priority: () => i, run: () => (n++, g.advance(30)) });
    g.frame();
    expect(n).toBe(1);
    g.frame();
    expect(n).toBe(2);
  });

  test("priority is read at each frame's start (a card scrolled on screen jumps ahead), once per task; cancel removes", () => {
    const f = fakeClock();
    const q = createBuildQueue(f.clock, { budgetMs: 1, maxPerFrame: 1 });
    const order: string[] = [];
    let bPrio = 5000;
    let reads = 0;
    q.enqueue({ priority: () => (reads++, 100), run: () => void order.push("a") });
    q.enqueue({ priority: () => bPrio, run: () => void order.push("b") });
    const cancel = q.enqueue({ priority: () => 0, run: () => void order.push("gone") });
    cancel();
    bPrio = 10;
    f.frame();
    expect(order).toEqual(["b"]);
    expect(reads).toBe(1); // not again after the build
    f.frame();
    expect(order).toEqual(["b", "a"]);
    expect(q.pending()).toBe(0);
  });

  test("a throwing build does not stall the queue", () => {
    const f = fakeClock();
    const q = createBuildQueue(f.clock, { budgetMs: 8, maxPerFrame: 1 });
    const order: string[] = [];
    q.enqueue({ priority: () => 0, run: () => { throw new Error("boom"); } });
    q.enqueue({ priority: () => 1, run: () => void order.push("next") });
    expect(() => f.frame()).toThrow("boom");
    f.frame();
    expect(order).toEqual(["next"]);
  });
});

describe("cost estimate and viewport priority", () => {
  test("mean of the recent builds, seeded", () => {
    const c = new CostEstimate(4, 3);
    expect(c.value()).toBe(4);
    c.add(2);
    c.add(4);
    c.add(6);
    c.add(8);
    expect(c.value()).toBe(6);
    c.add(Number.NaN);
    expect(c.value()).toBe(6);
  });

  test("on screen top to bottom, then by distance from the viewport", () => {
    const H = 900;
    expect(viewportPriority({ top: 10, bottom: 300 }, H)).toBe(10);
    expect(viewportPriority({ top: -50, bottom: 200 }, H)).toBe(0);
    expect(viewportPriority({ top: 850, bottom: 1100 }, H)).toBe(850);
    expect(viewportPriority({ top: 1000, bottom: 1300 }, H)).toBe(1000);
    expect(viewportPriority({ top: -400, bottom: -100 }, H)).toBe(1000);
    expect(viewportPriority({ top: 1500, bottom: 1800 }, H)).toBe(1500);
    // every on-screen card before every off-screen one
    expect(viewportPriority({ top: 899, bottom: 1200 }, H)).toBeLessThan(viewportPriority({ top: 901, bottom: 1200 }, H));
  });
});
