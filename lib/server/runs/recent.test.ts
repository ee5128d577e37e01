import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GET as metaGET } from "@/app/api/meta/route";
import { GET as trajectoriesGET } from "@/app/api/rollout/[rolloutId]/trajectories/route";
import { GET as runsGET } from "@/app/api/runs/route";
import { restrictRun } from "@/lib/server/auth/run-access";
import { getDb, openDatabase } from "@/lib/server/db";
import { getRunOrThrow } from "@/lib/server/runs/context";
import { NOTE_EVERY_MS, noteRunOpened, RECENT_KEEP, recentlyOpenedRuns } from "@/lib/server/runs/recent";
import type { ScannedRun } from "@/lib/server/runs/scan";
import { runsToWarm, warmRuns } from "@/lib/server/warmup";
import { flushBinaryCache } from "@/lib/store/telemetry/binary-cache";
import { copyRunWithOldMtimes } from "@/lib/store/telemetry/testing";
import { callRoute, setupTestServer } from "@/lib/testing/api";
import { MILES_DEMO_RUN } from "@/lib/testing/fixtures";

const made: string[] = [];
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});
/** A test server whose runs root holds one run, `alpha` (a copy of miles-demo). */
async function serverWithRunAlpha() {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-recent-root-"));
  made.push(base);
  copyRunWithOldMtimes(MILES_DEMO_RUN, path.join(base, "alpha"));
  const server = await setupTestServer({ runsRoots: [base] });
  made.push(server.dataDir);
  return server;
}
function tmpDb() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-recent-"));
  made.push(dir);
  return openDatabase(dir);
}

describe("noteRunOpened / recentlyOpenedRuns", () => {
  it("orders runs by their last open, writes a run at most once a minute, and keeps the newest RECENT_KEEP", () => {
    const db = tmpDb();
    const t = 1_800_000_000_000;
    expect(noteRunOpened(db, "a", t)).toBe(true);
    expect(noteRunOpened(db, "b", t + 1_000)).toBe(true);
    expect(recentlyOpenedRuns(db)).toEqual(["b", "a"]);
    // Within a minute, a second open of "a" writes nothing (a polling tab costs no write per request).
    expect(noteRunOpened(db, "a", t + 2_000)).toBe(false);
    expect(recentlyOpenedRuns(db)).toEqual(["b", "a"]);
    expect(noteRunOpened(db, "a", t + NOTE_EVERY_MS)).toBe(true);
    expect(recentlyOpenedRuns(db)).toEqual(["a", "b"]);
    expect(recentlyOpenedRuns(db, 1)).toEqual(["a"]);
    for (let i = 0; i < RECENT_KEEP + 5; i++) noteRunOpened(db, `r${i}`, t + NOTE_EVERY_MS + 10 + i);
    const kept = recentlyOpenedRuns(db);
    expect(kept).toHaveLength(RECENT_KEEP);
    expect(kept[0]).toBe(`r${RECENT_KEEP + 4}`);
    expect(kept).not.toContain("a");
    expect((db.prepare("SELECT COUNT(*) AS n FROM run_opens").get() as { n: number }).n).toBe(RECENT_KEEP);
  });

  it("never throws: a database that cannot be written only loses the note", () => {
    const db = tmpDb();
    db.exec("DROP TABLE run_opens");
    expect(noteRunOpened(db, "a")).toBe(false);
    db.close();
    expect(noteRunOpened(db, "b")).toBe(false);
  });
});

describe("runsToWarm", () => {
  const run = (id: string) => ({ id }) as ScannedRun;
  const registry = (ids: string[]) => ({
    list: () => ids.map(run),
    find: (id: string) => (ids.includes(id) ? run(id) : null),
  });

  it("takes the runs opened last first, skips runs that are gone, and fills up with the newest runs", () => {
    const reg = registry(["new1", "new2", "old1", "old2"]);
    expect(runsToWarm(reg, ["old2", "gone", "old1"], 2).map((r) => r.id)).toEqual(["old2", "old1"]);
    expect(runsToWarm(reg, ["old2"], 2).map((r) => r.id)).toEqual(["old2", "new1"]);
    expect(runsToWarm(reg, [], 2).map((r) => r.id)).toEqual(["new1", "new2"]);
    expect(runsToWarm(reg, ["new1", "new1"], 3).map((r) => r.id)).toEqual(["new1", "new2", "old1"]);
    expect(runsToWarm(registry([]), ["x"], 2)).toEqual([]);
  });
});

describe("opens recorded by the request path", () => {
  it("notes a run when a signed-in request resolves it, and not for anonymous, unknown-run or run-less requests", async () => {
    const server = await serverWithRunAlpha();
    expect(recentlyOpenedRuns(getDb())).toEqual([]);
    expect((await callRoute(metaGET, "/api/meta?run=alpha", { token: null })).status).toBe(401);
    expect((await callRoute(metaGET, "/api/meta?run=nope", { token: server.token })).status).toBe(404);
    expect((await callRoute(runsGET, "/api/runs", { token: server.token })).status).toBe(200);
    // a read the run's restriction refuses did not open it
    restrictRun(getDb(), "alpha", []);
    const refused = await callRoute(trajectoriesGET, "/api/rollout/1/trajectories?run=alpha", { token: server.token, params: { rolloutId: "1" } });
    expect(refused.status).toBe(403);
    expect(recentlyOpenedRuns(getDb())).toEqual([]);
    expect((await callRoute(metaGET, "/api/meta?run=alpha", { token: server.token })).status).toBe(200);
    expect(recentlyOpenedRuns(getDb())).toEqual(["alpha"]);
  });
});

describe("warmRuns", () => {
  it("opens the runs to warm, loads their newest steps' summaries from the cache (building none) and the newest one's trajectory events", async () => {
    const server = await serverWithRunAlpha();
    const summaries = () => {
      const dirs = fs.existsSync(path.join(server.dataDir, "cache")) ? fs.readdirSync(path.join(server.dataDir, "cache")) : [];
      return dirs.flatMap((d) => (fs.existsSync(path.join(server.dataDir, "cache", d, "dumps")) ? fs.readdirSync(path.join(server.dataDir, "cache", d, "dumps")) : []));
    };
    expect(await warmRuns()).toBe(1);
    // an empty data dir: nothing is built at start (that is the first request's or prewarm's job)
    expect(summaries().filter((f) => f.endsWith(".summary.parquet"))).toEqual([]);
    const ctx = await getRunOrThrow("alpha");
    const trajectoryBytesRead = async () => (await ctx.store.trajectories.files()).reduce((a, f) => a + f.offset, 0);
    expect(await trajectoryBytesRead()).toBe(0);
    await ctx.dumps.summary(2, false);
    expect(await ctx.dumps.warmFromCache()).toEqual([2]);
    // with step 2's summary in the cache, a warm-up also reads the trajectory events its view asks
    expect(await warmRuns()).toBe(1);
    expect(await trajectoryBytesRead()).toBe(fs.statSync(path.join(ctx.store.dir, "trajectories", "19700112_13.jsonl")).size);
    // warming is not opening: nothing is noted as opened by a person
    expect(recentlyOpenedRuns(getDb())).toEqual([]);
  });

  it("adopts the timeline's newest window from the data dir's cache after a restart, and parses none of it before", async () => {
    await serverWithRunAlpha();
    const resident = async (ctx: Awaited<ReturnType<typeof getRunOrThrow>>) => {
      const count = async (s: { files(): Promise<readonly { block: unknown }[]> }) => (await s.files()).filter((f) => f.block !== null).length;
      return { gpu: await count(ctx.store.gpuUtil), phases: await count(ctx.store.phases), engine: await count(ctx.store.engine) };
    };
    expect(await warmRuns()).toBe(1);
    const first = await getRunOrThrow("alpha");
    // an empty data dir: the warm-up parsed no partition of the window (the header's own scan may read engine names)
    expect((await resident(first)).gpu).toBe(0);
    expect((await resident(first)).phases).toBe(0);
    // the first queries parse the hour and the cache keeps it
    await Promise.all([first.store.gpuUtil.window(null, null), first.store.phases.window(null, null), first.store.engine.window(null, null)]);
    await flushBinaryCache();
    // a restart: the process's run contexts are gone, the data dir stays
    (globalThis as { __rlboardRuns?: Map<string, unknown> }).__rlboardRuns!.delete("alpha");
    expect(await warmRuns()).toBe(1);
    const second = await getRunOrThrow("alpha");
    expect(second).not.toBe(first);
    expect(await resident(second)).toEqual({ gpu: 1, phases: 1, engine: 1 });
  });

  it("answers a run's header only when its engine names are kept or within the scan bound", async () => {
    await serverWithRunAlpha();
    const ctx = await getRunOrThrow("alpha");
    const engine = async () => {
      const files = await ctx.store.engine.files();
      return { read: files.reduce((a, f) => a + f.offset, 0), size: files.reduce((a, f) => a + f.size, 0) };
    };
    expect((await engine()).size).toBeGreaterThan(0);
    // a bound below the run's engine JSON and nothing kept: the engine partitions stay unread
    expect(await warmRuns(undefined, (await engine()).size - 1)).toBe(1);
    expect((await engine()).read).toBe(0);
    // within the bound: the header is answered, which reads every engine partition for its names
    expect(await warmRuns(undefined, (await engine()).size)).toBe(1);
    expect((await engine()).read).toBe((await engine()).size);
  });
});
