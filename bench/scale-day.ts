/**
 * The 1024-GPU day of issue #20 ("Scale"), served: the production server over real HTTP on
 * 127.0.0.1 against the run `bench/scale.ts` writes for 128 nodes × 8 GPUs × 24 h
 * (88 M gpu_util rows, 128 engines). Every "first request" is the first request of its
 * kind after a fresh server start, one start per query, so no query rides on another's
 * reads:
 *
 *  - run open: `/api/meta` + `/api/timeline/topology` + `/api/runs`, one after the other;
 *  - the fleet overview (`timeline/fleet`, 600 buckets: what the timeline asks for above
 *    FLEET_THRESHOLD lanes) and the util heatmap (1200 buckets) of the newest and of the
 *    oldest 4 h of the day, with the binary partition cache in the data dir;
 *  - the same newest window with an empty data dir (no binary cache; a fresh one per query);
 *  - the advisory of the newest 4 h;
 *  - a pan of the fleet view across the whole day (4 h windows, 15 min apart, newest to
 *    oldest): the server tree's RSS sampled every 100 ms, its peak; once while the cache of
 *    the hours not yet asked is filled, and once with the cache.
 *
 * Before the counted rounds, one uncounted start asks each measured query once, so the
 * data dir holds what a server that has served them keeps (binary columns, kept plans and
 * whole-run scans), as the served rows' round 0 does (bench/http.ts).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { serverEnvVars, startNextServer, type RunningServer } from "@/cli/server-process";
import { freePort } from "@/lib/testing/net";
import { GetRunsResponse } from "@/lib/contracts/runs";
import { benchUserToken, timed, treeRssMb } from "./http";

export const SCALE_DAY = { nodes: 128, hours: 24 } as const;

/** Issue #20's targets for the 1024-GPU day. */
export const SCALE_TARGETS = { openMs: 1000, viewCachedMs: 500, viewUncachedMs: 2000, advisoryMs: 1000, panRssMb: 1536, browserHeapMb: 1024 } as const;

const WINDOW_S = 4 * 3600;
const PAN_STEP_S = 900;
const JUDGED_WAIT_MS = 15 * 60_000;

export interface ScaleDayFigures {
  open: number[];
  fleetNew: number[];
  fleetOld: number[];
  heatNew: number[];
  heatOld: number[];
  advisory: number[];
  fleetNoCache: number[];
  heatNoCache: number[];
  /** Peak server RSS during the pan that fills the cache, and during a pan with it. */
  panRssFillMb: number;
  panRssMb: number;
  /** Each window's fleet request during the cached pan. */
  panMs: number[];
  panWindows: number;
}

/** Poll `/api/runs` until every run has a judged state (bounded: JUDGED_WAIT_MS). */
async function untilJudged(base: string, token: string): Promise<void> {
  const deadline = performance.now() + JUDGED_WAIT_MS;
  while (performance.now() < deadline) {
    const res = await fetch(`${base}/api/runs`, { headers: { authorization: `Bearer ${token}` } });
    if (!res.ok) throw new Error(`/api/runs answered ${res.status}`);
    const { runs } = GetRunsResponse.parse(await res.json());
    if (runs.length > 0 && runs.every((r) => r.state !== null)) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`the run list's judgment did not land within ${JUDGED_WAIT_MS / 1000} s`);
}

/**
 * `keepDataDir`: the data dir of the cached rounds (else a temporary one), left in place
 * with its caches for the browser figures (bench/browser.ts `benchScaleBrowser`).
 */
export async function benchScaleDay(o: { runsRoot: string; runName: string; range: [number, number]; rounds: number; keepDataDir?: string; log: (s: string) => void }): Promise<ScaleDayFigures> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-bench-scale-"));
  const port = await freePort();
  const run = encodeURIComponent(o.runName);
  const [start, end] = o.range;
  const win = (t1: number) => `t0=${t1 - WINDOW_S}&t1=${t1}`;
  const fleet = (t1: number) => `/api/timeline/fleet?run=${run}&${win(t1)}&x_buckets=600`;
  const heat = (t1: number) => `/api/timeline/heatmap?run=${run}&${win(t1)}&metric=util&x_buckets=1200`;
  const oldest = start + WINDOW_S;
  const out: ScaleDayFigures = {
    open: [],
    fleetNew: [],
    fleetOld: [],
    heatNew: [],
    heatOld: [],
    advisory: [],
    fleetNoCache: [],
    heatNoCache: [],
    panRssFillMb: 0,
    panRssMb: 0,
    panMs: [],
    panWindows: 0,
  };
  let server: RunningServer | null = null;
  const boot = async (dataDir: string) => {
    server = await startNextServer({ port, host: "127.0.0.1", quiet: true, env: serverEnvVars({ dataDir, runsRoots: [o.runsRoot] }), timeoutMs: 120_000 });
    return server;
  };
  const stop = async () => {
    await server?.stop();
    server = null;
  };
  /** The first request of `paths` (one after the other) after a fresh start, ms in all. */
  const first = async (dataDir: string, token: string, paths: string[], settle: { ms: number; judged?: boolean } = { ms: 0 }) => {
    const s = await boot(dataDir);
    let ms = 0;
    for (const p of paths) ms += await timed(s.url + p, token, true);
    // The run list's judgment goes on in the background past its budget; on an empty data
    // dir it reads every engine partition, and what it keeps (abort-storm counts) is
    // what a server that has listed the runs once holds: wait until the run is judged.
    if (settle.judged) await untilJudged(s.url, token);
    // let work the answers started in the background (cache writes) finish
    if (settle.ms) await new Promise((r) => setTimeout(r, settle.ms));
    await stop();
    return ms;
  };
  const pan = async (dataDir: string, token: string, times: number[] | null) => {
    const s = await boot(dataDir);
    let peak = treeRssMb(s.child.pid!);
    const poll = setInterval(() => (peak = Math.max(peak, treeRssMb(s.child.pid!))), 100);
    let n = 0;
    try {
      for (let t1 = end; t1 - WINDOW_S >= start - PAN_STEP_S; t1 -= PAN_STEP_S) {
        const ms = await timed(s.url + fleet(t1), token);
        times?.push(ms);
        n++;
      }
    } finally {
      clearInterval(poll);
      peak = Math.max(peak, treeRssMb(s.child.pid!));
      await stop();
    }
    out.panWindows = n;
    return peak;
  };
  try {
    for (let r = 1; r <= o.rounds; r++) {
      // One empty data dir per query: the heatmap must not read the binary columns the
      // fleet request's server wrote (until 2026-12-05 it did).
      for (const [q, times] of [[fleet(end), out.fleetNoCache], [heat(end), out.heatNoCache]] as const) {
        const dir = path.join(work, `nocache-${r}`);
        times.push(await first(dir, await benchUserToken(dir), [q]));
        fs.rmSync(dir, { recursive: true, force: true });
      }
      o.log(`scale day: no-cache round ${r}/${o.rounds} done`);
    }
    const dataDir = o.keepDataDir ?? path.join(work, "data");
    if (o.keepDataDir) fs.rmSync(dataDir, { recursive: true, force: true }); // no caches from an earlier bench
    const token = await benchUserToken(dataDir);
    // Uncounted: fill the data dir's caches for the measured queries, as a server that has
    // served them once has (the served rows' round 0 does the same, bench/http.ts).
    await first(dataDir, token, [`/api/meta?run=${run}`, "/api/runs", fleet(end), heat(end), fleet(oldest), heat(oldest), `/api/advisory?run=${run}&${win(end)}`], { ms: 10_000, judged: true });
    out.panRssFillMb = await pan(dataDir, token, null);
    o.log(`scale day: the pan that fills the cache peaked at ${out.panRssFillMb.toFixed(0)} MB`);
    for (let r = 1; r <= o.rounds; r++) {
      out.open.push(await first(dataDir, token, [`/api/meta?run=${run}`, `/api/timeline/topology?run=${run}`, "/api/runs"]));
      out.fleetNew.push(await first(dataDir, token, [fleet(end)]));
      out.heatNew.push(await first(dataDir, token, [heat(end)]));
      out.fleetOld.push(await first(dataDir, token, [fleet(oldest)]));
      out.heatOld.push(await first(dataDir, token, [heat(oldest)]));
      out.advisory.push(await first(dataDir, token, [`/api/advisory?run=${run}&${win(end)}`]));
      o.log(`scale day: cached round ${r}/${o.rounds} done`);
    }
    out.panRssMb = await pan(dataDir, token, out.panMs);
  } finally {
    await stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
  return out;
}
