import { describe, expect, test } from "vitest";
import { createKeyBatcher } from "@/lib/charts/key-batcher";

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("key batcher", () => {
  test("keys asked for in one tick are one request, in order, chunked at maxKeys; repeats share", async () => {
    const calls: string[][] = [];
    const b = createKeyBatcher<number>({
      maxKeys: 3,
      fetchMany: async (keys) => {
        calls.push([...keys]);
        return Object.fromEntries(keys.map((k) => [k, Number(k.slice(1))]));
      },
    });
    const got = await Promise.all(["k1", "k2", "k1", "k3", "k4"].map((k) => b.load(k)));
    expect(got).toEqual([1, 2, 1, 3, 4]);
    expect(calls).toEqual([["k1", "k2", "k3"], ["k4"]]);
    // a later tick is a new request
    expect(await b.load("k9")).toBe(9);
    expect(calls.length).toBe(3);
  });

  test("a failed batch is retried key by key: only the bad key fails, with its own error", async () => {
    const calls: string[][] = [];
    const b = createKeyBatcher<string>({
      maxKeys: 256,
      fetchMany: async (keys) => {
        calls.push([...keys]);
        if (keys.includes("dump/bad")) throw new Error("unknown dump metric 'dump/bad'");
        return Object.fromEntries(keys.map((k) => [k, `v:${k}`]));
      },
    });
    const r = await Promise.allSettled([b.load("a"), b.load("dump/bad"), b.load("c")]);
    expect(r[0]).toEqual({ status: "fulfilled", value: "v:a" });
    expect(r[1]).toMatchObject({ status: "rejected", reason: { message: "unknown dump metric 'dump/bad'" } });
    expect(r[2]).toEqual({ status: "fulfilled", value: "v:c" });
    expect(calls[0]).toEqual(["a", "dump/bad", "c"]);
    expect(calls.slice(1).map((c) => c.join()).sort()).toEqual(["a", "c", "dump/bad"]);
  });

  test("a key missing from the answer resolves undefined; a single-key failure is not retried", async () => {
    let n = 0;
    const b = createKeyBatcher<number>({
      maxKeys: 10,
      fetchMany: async (keys) => {
        n++;
        if (keys.length === 1 && keys[0] === "x") throw new Error("HTTP 503");
        return { a: 1 };
      },
    });
    const [a, missing] = await Promise.all([b.load("a"), b.load("m")]);
    expect(a).toBe(1);
    expect(missing).toBeUndefined();
    await tick();
    n = 0;
    await expect(b.load("x")).rejects.toThrow("HTTP 503");
    expect(n).toBe(1);
  });
});

describe("key batcher: priming and joining", () => {
  test("prime sends exactly its keys at once; loads of them join it; a key asked later fetches again", async () => {
    const calls: string[][] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const b = createKeyBatcher<string>({
      maxKeys: 256,
      fetchMany: async (keys) => {
        calls.push([...keys]);
        await gate;
        return Object.fromEntries(keys.map((k) => [k, `v:${k}`]));
      },
    });
    b.prime(["b", "a", "c"]);
    expect(calls).toEqual([["b", "a", "c"]]); // at once, in the given order (the preloaded URL)
    const joined = Promise.all([b.load("a"), b.load("c"), b.load("z")]);
    await tick();
    expect(calls).toEqual([["b", "a", "c"], ["z"]]); // only the key not primed is asked for
    release();
    expect(await joined).toEqual(["v:a", "v:c", "v:z"]);
    // once answered, the next ask (a poll) is a new request
    expect(await b.load("a")).toBe("v:a");
    expect(calls.at(-1)).toEqual(["a"]);
  });

  test("a key is primed once: priming the same first keys again after they were answered asks for nothing", async () => {
    const calls: string[][] = [];
    const b = createKeyBatcher<number>({ maxKeys: 10, fetchMany: async (keys) => (calls.push([...keys]), Object.fromEntries(keys.map((k) => [k, 1]))) });
    b.prime(["a", "b"]);
    expect(await b.load("a")).toBe(1);
    await tick();
    b.prime(["a", "b"]); // the view re-rendered (a live run's meta refetch)
    b.prime(["a", "b", "c"]); // a new first key: only it is asked for
    await tick();
    expect(calls).toEqual([["a", "b"], ["c"]]);
  });

  test("a card that asks after the primed answer came takes it without a request, once", async () => {
    const calls: string[][] = [];
    const b = createKeyBatcher<number>({ maxKeys: 10, fetchMany: async (keys) => (calls.push([...keys]), Object.fromEntries(keys.map((k) => [k, 7]))) });
    b.prime(["a", "b"]);
    await tick();
    await tick();
    expect(await b.load("a")).toBe(7); // the observer reported the card late
    expect(calls).toEqual([["a", "b"]]);
    expect(await b.load("a")).toBe(7); // a later ask (a poll) is a new request
    expect(calls).toEqual([["a", "b"], ["a"]]);
  });

  test("priming keys already on their way sends nothing", async () => {
    const calls: string[][] = [];
    const b = createKeyBatcher<number>({ maxKeys: 10, fetchMany: async (keys) => (calls.push([...keys]), Object.fromEntries(keys.map((k) => [k, 1]))) });
    const p = b.load("a");
    b.prime(["a", "b"]); // "a" is pending: the preloaded URL would not match anyway
    await p;
    expect(calls).toEqual([["a"]]);
  });

  test("splitOn decides whether a failed batch is asked again key by key; URLs stay under maxChars", async () => {
    const calls: string[][] = [];
    const b = createKeyBatcher<number>({
      maxKeys: 100,
      maxChars: 40,
      splitOn: (e) => !(e instanceof Error && e.message === "unknown run"),
      fetchMany: async (keys) => {
        calls.push([...keys]);
        throw new Error("unknown run");
      },
    });
    const r = await Promise.allSettled(["a", "b"].map((k) => b.load(k)));
    expect(r.map((x) => x.status)).toEqual(["rejected", "rejected"]);
    expect(calls).toEqual([["a", "b"]]); // not asked again: every key would fail the same way

    calls.length = 0;
    const long = createKeyBatcher<number>({ maxKeys: 100, maxChars: 40, fetchMany: async (keys) => (calls.push([...keys]), Object.fromEntries(keys.map((k) => [k, k.length]))) });
    const keys = ["perf/step_time", "perf/actor_train_time", "rollout/rewards_mean"];
    expect(await Promise.all(keys.map((k) => long.load(k)))).toEqual([14, 21, 20]);
    // encoded: "perf%2Fstep_time" (16) + 3, "perf%2Factor_train_time" (23) + 3 → 45 > 40: two requests
    expect(calls).toEqual([["perf/step_time"], ["perf/actor_train_time"], ["rollout/rewards_mean"]]);
  });
});
