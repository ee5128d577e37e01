/**
 * The heavy-query gate's semantics (lib/api/admission.ts): N running server-wide, M per
 * user, a bounded queue served in arrival order, 503 busy + Retry-After beyond it. No
 * timing assertions here (the bench measures latency under load).
 */
import { describe, expect, test } from "vitest";
import { AdmissionGate, type Release } from "@/lib/api/admission";
import { ApiError } from "@/lib/contracts/errors";

const gate = (o: Partial<AdmissionGate["opts"]> = {}) =>
  new AdmissionGate({ maxRunning: 2, maxPerUser: 1, maxQueue: 2, maxQueuedPerUser: 2, maxWaitMs: 60_000, ...o });

/** Settle pending microtasks and one setImmediate turn (the gate hands slots over there). */
const turn = () => new Promise((r) => setImmediate(r));

async function refused(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(ApiError.is(err)).toBe(true);
  const e = err as ApiError;
  expect(e.code).toBe("busy");
  expect(e.status).toBe(503);
  expect(e.headers).toEqual({ "retry-after": "1" });
  return e;
}

describe("AdmissionGate", () => {
  test("at most maxRunning at once; the next ones queue and start in arrival order", async () => {
    const g = gate({ maxPerUser: 10 });
    const a = await g.acquire("u");
    const b = await g.acquire("u");
    expect(g.stats()).toEqual({ running: 2, queued: 0 });
    const started: string[] = [];
    const c = g.acquire("u").then((r) => (started.push("c"), r));
    const d = g.acquire("u").then((r) => (started.push("d"), r));
    await turn();
    expect(g.stats()).toEqual({ running: 2, queued: 2 });
    expect(started).toEqual([]);
    a();
    a(); // releasing twice frees one slot only
    await turn();
    expect(started).toEqual(["c"]);
    expect(g.stats()).toEqual({ running: 2, queued: 1 });
    b();
    await turn();
    expect(started).toEqual(["c", "d"]);
    (await c)();
    (await d)();
    expect(g.stats()).toEqual({ running: 0, queued: 0 });
  });

  test("beyond the queue: 503 busy with Retry-After: 1", async () => {
    const g = gate({ maxRunning: 1, maxPerUser: 5, maxQueue: 1, maxQueuedPerUser: 5 });
    const a = await g.acquire("u");
    const queued = g.acquire("v");
    const e = await refused(g.acquire("w"));
    expect(e.message).toMatch(/^the server is busy/);
    a();
    (await queued)();
    expect(g.stats()).toEqual({ running: 0, queued: 0 });
  });

  test("per user: a user at its limit waits while another user runs", async () => {
    const g = gate({ maxRunning: 3, maxPerUser: 1, maxQueue: 4 });
    const a1 = await g.acquire("alice");
    let a2: Release | null = null;
    const a2p = g.acquire("alice").then((r) => (a2 = r));
    await turn();
    expect(a2).toBeNull(); // alice is at her limit although 2 slots are free
    const b1 = await g.acquire("bob"); // bob jumps ahead: nobody queued can run
    expect(g.stats()).toEqual({ running: 2, queued: 1 });
    a1();
    await a2p;
    expect(a2).not.toBeNull();
    b1();
    a2!();
    expect(g.stats()).toEqual({ running: 0, queued: 0 });
  });

  test("one user cannot fill the whole queue", async () => {
    const g = gate({ maxRunning: 1, maxPerUser: 1, maxQueue: 10, maxQueuedPerUser: 2 });
    const r = await g.acquire("alice");
    const q1 = g.acquire("alice");
    const q2 = g.acquire("alice");
    const e = await refused(g.acquire("alice"));
    expect(e.message).toMatch(/^too many expensive queries from this user/);
    const bob = g.acquire("bob"); // bob still queues
    expect(g.stats()).toEqual({ running: 1, queued: 3 });
    r();
    (await q1)();
    (await q2)();
    (await bob)();
    expect(g.stats()).toEqual({ running: 0, queued: 0 });
  });

  test("a queued request that waits longer than maxWaitMs is refused and leaves the queue", async () => {
    const g = gate({ maxRunning: 1, maxPerUser: 1, maxWaitMs: 20 });
    const r = await g.acquire("u");
    const e = await refused(g.acquire("v"));
    expect(e.message).toMatch(/waited too long/);
    expect(g.stats()).toEqual({ running: 1, queued: 0 });
    r();
  });

  test("a released slot is handed over after pending I/O, not in the same tick", async () => {
    const g = gate({ maxRunning: 1, maxPerUser: 1 });
    const r = await g.acquire("u");
    const order: string[] = [];
    const next = g.acquire("v").then((rel) => (order.push("queued heavy"), rel));
    r();
    await Promise.resolve();
    order.push("same tick");
    (await next)();
    expect(order).toEqual(["same tick", "queued heavy"]);
  });
});
