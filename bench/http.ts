/**
 * The served side of the bench (docs/bench.md "Served queries"): the real production server
 * (`next start` over the built `.next`), real HTTP on 127.0.0.1, a bearer token, the bench
 * runs as its runs root. For each query of the table the Python dashboard was measured on:
 *
 *  - cold: the first request of that query after a fresh server start (the queries are sent
 *    one after the other in table order, `/api/meta` first, so its figure includes
 *    everything the first request of a process pays); the bench's own garbage is collected
 *    before each, outside the span (`timed`);
 *  - warm: the median of `WARM_N` repeats once it has been asked; windowed queries slide
 *    their window by 7 s each time (as a following dashboard does), so no answer memo can
 *    serve a repeat — parsed partitions and caches stay resident, the answer is recomputed.
 *
 * The server is restarted for each of N cold rounds; its on-disk caches (data dir) are kept,
 * as after a real restart. RSS is the server's after the last round.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { serverEnvVars, startNextServer, type RunningServer } from "@/cli/server-process";
import { addUser, createToken } from "@/lib/server/auth/users";
import { openDatabase } from "@/lib/server/db";
import { randomPasswordForTests } from "@/lib/testing/users";
import { freePort } from "@/lib/testing/net";

const WARM_N = 9;

export interface HttpQuery {
  name: string;
  path: string;
  /** The same query with its window moved back by `shift` seconds (null: not windowed). */
  shifted: ((shift: number) => string) | null;
  /** The Python dashboard's medians on the same machine and data (issue #20's table). */
  py: { cold: number; warm: number };
}

export interface HttpFigures {
  cold: Record<string, number[]>;
  warm: Record<string, number[]>;
  rssMb: number[];
}

export function httpQueries(o: { fleetRun: string; dumpRun: string; t0: number; t1: number }): HttpQuery[] {
  const f = encodeURIComponent(o.fleetRun);
  const d = encodeURIComponent(o.dumpRun);
  const w = `t0=${o.t0}&t1=${o.t1}`;
  const win = (name: string, p: (w: string) => string, py: HttpQuery["py"]): HttpQuery => ({
    name,
    path: p(w),
    shifted: (s) => p(`t0=${o.t0 - s}&t1=${o.t1 - s}`),
    py,
  });
  const plain = (name: string, p: string, py: HttpQuery["py"]): HttpQuery => ({ name, path: p, shifted: null, py });
  return [
    plain("/api/meta", `/api/meta?run=${f}`, { cold: 18, warm: 14 }),
    plain("/api/timeline/topology", `/api/timeline/topology?run=${f}`, { cold: 9, warm: 7 }),
    win("timeline/gpu 4 h, lanes=g:0-31", (w) => `/api/timeline/gpu?run=${f}&${w}&lanes=g:0-31&max_points=4000`, { cold: 1832, warm: 1048 }),
    win("timeline/outliers lowest_util 4 h", (w) => `/api/timeline/outliers?run=${f}&${w}&criterion=lowest_util`, { cold: 69, warm: 49 }),
    win("timeline/engine_series running_reqs 4 h", (w) => `/api/timeline/engine_series?run=${f}&${w}&metric=sglang_num_running_reqs&max_points=4000`, {
      cold: 104,
      warm: 55,
    }),
    win("timeline/heatmap util 4 h", (w) => `/api/timeline/heatmap?run=${f}&${w}&metric=util&x_buckets=1200`, { cold: 339, warm: 148 }),
    win("advisory 4 h", (w) => `/api/advisory?run=${f}&${w}`, { cold: 2317, warm: 259 }),
    plain("rollout/0/trajectories", `/api/rollout/0/trajectories?run=${d}`, { cold: 71, warm: 28 }),
    plain("rollout/0/summary", `/api/rollout/0/summary?run=${d}`, { cold: 2286, warm: 124 }),
    plain("rollout/0/sample/3/tokens 0–512", `/api/rollout/0/sample/3/tokens?run=${d}&start=0&end=512`, { cold: 8290, warm: 59 }),
  ];
}

/** Targets of issue #20: cold ≤ 0.25×, warm ≤ 0.10× the original; ≤ 20 ms where it needs < 50 ms. */
export function httpTarget(q: HttpQuery, kind: "cold" | "warm"): number {
  if (q.name === "/api/meta" && kind === "cold") return 50;
  const py = q.py[kind];
  if (py < 50) return 20;
  return py * (kind === "cold" ? 0.25 : 0.1);
}


/** VmRSS of a process and its children, MB. */
export function treeRssMb(pid: number): number {
  let kb = 0;
  const walk = (p: number) => {
    try {
      const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p}/status`, "utf8"));
      if (m) kb += Number(m[1]);
      for (const c of fs.readFileSync(`/proc/${p}/task/${p}/children`, "utf8").trim().split(/\s+/)) if (c) walk(Number(c));
    } catch {
      /* exited */
    }
  };
  walk(pid);
  return kb / 1024;
}

/** A server data dir at `dataDir` with one admin user; returns the user's bearer token. */
export async function benchUserToken(dataDir: string): Promise<string> {
  const db = openDatabase(dataDir);
  try {
    await addUser(db, "bench", randomPasswordForTests(), "admin");
    return createToken(db, "bench");
  } finally {
    db.close();
  }
}

/**
 * Request → last body byte, ms; a non-2xx answer throws.
 *
 * `collect`: the bench's own garbage is collected first, outside the timed span (`npm run
 * bench` runs under `--expose-gc`). The client holds what it received before (a 32-lane
 * GPU window is 3.5 MB), and as every round sends the same sequence, its mark-compacts
 * landed inside the same first requests each round — 24 ms of client GC inside one 55 ms
 * first engine_series, seen with GC observers on both sides (docs/bench.md "2026-12-06 f").
 * Only for first requests: before every warm repeat it made those slower (the tokens window
 * 5.2 → 8.8 ms; a full collection leaves the client's heap cold), and a warm figure is a
 * median of nine anyway.
 */
export async function timed(url: string, token: string, collect = false): Promise<number> {
  if (collect) (globalThis as { gc?: () => void }).gc?.();
  const t = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  const ms = performance.now() - t;
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return ms;
}

export async function benchHttp(o: {
  runsRoot: string;
  queries: HttpQuery[];
  rounds: number;
  log: (s: string) => void;
}): Promise<HttpFigures> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-bench-http-"));
  const dataDir = path.join(work, "data");
  const token = await benchUserToken(dataDir);
  const port = await freePort();
  const env = serverEnvVars({ dataDir, runsRoots: [o.runsRoot] });
  const out: HttpFigures = { cold: {}, warm: {}, rssMb: [] };
  for (const q of o.queries) {
    out.cold[q.name] = [];
    out.warm[q.name] = [];
  }
  let server: RunningServer | null = null;
  try {
    // Round 0 fills the data dir's caches (binary columns, dump summaries) and is not counted.
    for (let round = 0; round <= o.rounds; round++) {
      server = await startNextServer({ port, host: "127.0.0.1", quiet: true, env, timeoutMs: 120_000 });
      for (const q of o.queries) {
        const ms = await timed(server.url + q.path, token, true);
        if (round > 0) out.cold[q.name]!.push(ms);
      }
      if (round > 0) {
        for (const q of o.queries) {
          const ws: number[] = [];
          for (let i = 1; i <= WARM_N; i++) ws.push(await timed(server.url + (q.shifted ? q.shifted(7 * i) : q.path), token));
          ws.sort((a, b) => a - b);
          out.warm[q.name]!.push(ws[Math.floor(ws.length / 2)]!);
        }
        out.rssMb.push(treeRssMb(server.child.pid!));
      }
      await server.stop();
      server = null;
      o.log(`http: round ${round}/${o.rounds} done`);
    }
  } finally {
    await server?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
  return out;
}
