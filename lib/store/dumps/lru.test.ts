import { describe, expect, test } from "vitest";
import { Lru, Recent } from "./lru";

describe("Lru", () => {
  test("keeps the most recently used keys and calls the hook for the evicted one", () => {
    const evicted: string[] = [];
    const lru = new Lru<string, number>(2, (_v, k) => evicted.push(k));
    lru.set("a", 1);
    lru.set("b", 2);
    expect(lru.get("a")).toBe(1);
    lru.set("c", 3);
    expect(evicted).toEqual(["b"]);
    expect(lru.get("b")).toBeUndefined();
    expect(lru.size).toBe(2);
  });
});

describe("Recent", () => {
  function clocked(ms: number, capacity = 8) {
    let t = 1000;
    const r = new Recent<string, number>(ms, capacity, () => t);
    return { r, advance: (d: number) => (t += d) };
  }

  test("a check runs once per interval per key; after the interval it runs again", async () => {
    const { r, advance } = clocked(500);
    let calls = 0;
    const check = () => Promise.resolve(++calls);
    expect(await r.get("k", check)).toBe(1);
    advance(499);
    expect(await r.get("k", check)).toBe(1);
    expect(await r.get("other", check)).toBe(2);
    advance(1);
    expect(await r.get("k", check)).toBe(3);
    expect(calls).toBe(3);
  });

  test("concurrent callers share one check in progress", async () => {
    const { r } = clocked(500);
    let calls = 0;
    let finish!: (v: number) => void;
    const check = () => {
      calls++;
      return new Promise<number>((resolve) => (finish = resolve));
    };
    const a = r.get("k", check);
    const b = r.get("k", check);
    finish(7);
    expect(await a).toBe(7);
    expect(await b).toBe(7);
    expect(calls).toBe(1);
  });

  test("a failed check is not kept: the next call checks again", async () => {
    const { r } = clocked(500);
    let calls = 0;
    const check = () => (++calls === 1 ? Promise.reject(new Error("EIO")) : Promise.resolve(calls));
    await expect(r.get("k", check)).rejects.toThrow("EIO");
    expect(await r.get("k", check)).toBe(2);
    expect(await r.get("k", check)).toBe(2);
  });

  test("an interval of 0 checks on every call; at most `capacity` keys are kept", async () => {
    const zero = clocked(0).r;
    let calls = 0;
    const check = () => Promise.resolve(++calls);
    await zero.get("k", check);
    await zero.get("k", check);
    expect(calls).toBe(2);

    const { r } = clocked(500, 2);
    calls = 0;
    await r.get("a", check);
    await r.get("b", check);
    await r.get("c", check);
    expect(await r.get("a", check)).toBe(4);
  });
});
