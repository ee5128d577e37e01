/**
 * Demo host telemetry (docs/formats.md §4.12) for one node of a demo run: what the
 * collector's `--host-telemetry` sampler writes with the job's processes registered by
 * the producers (`POST /v1/procs`, roles). Cumulative counters, one record per 10 s from
 * the run's start (meta.json `start_ts`) to `endTs`, in hourly partitions under
 * `dashboard/host/`. Deterministic for a seed.
 *
 * The shape: four trainer ranks that alternate between ~95 % of a core (train steps) and
 * ~30 % (waiting on rollout), two SGLang schedulers near a full core with a slowly growing
 * RSS, and the rollout manager whose open fds climb towards — but stay above 10 % of — its
 * RLIMIT_NOFILE of 4096, so the panel has headroom to show and no advisory fires.
 */
import fs from "node:fs";
import path from "node:path";
import { HOST_DIR, hourKey, type HostProc, type HostSample } from "@/lib/store/format";
import { Rng } from "./prng";

export const HOST_DEMO_INTERVAL_S = 10;
const NCPU = 96;
const MEM_TOTAL_KB = 1024 * 1048576; // 1 TiB
const HZ = 100; // USER_HZ: jiffies per second

interface ProcSpec {
  pid: number;
  name: string;
  role: string;
  threads: number;
  rssGb: number;
  fdLimit: number | null;
  /** % of one core at time `t` seconds into the run */
  core: (t: number, rng: Rng) => number;
  fds: (t: number) => number;
}

function procs(durationS: number): ProcSpec[] {
  const train = (rank: number): ProcSpec => ({
    pid: 4101 + rank,
    name: "python3",
    role: "trainer",
    threads: 68,
    rssGb: 38 + rank,
    fdLimit: 1_048_576,
    core: (t, rng) => (Math.floor(t / 120) % 2 === 0 ? 93 : 30) + rng.float(-3, 3),
    fds: () => 410 + 12 * rank,
  });
  const sched = (i: number): ProcSpec => ({
    pid: 4201 + i,
    name: "sglang::scheduler",
    role: "rollout",
    threads: 41,
    rssGb: 22,
    fdLimit: 65_536,
    core: (_t, rng) => 88 + rng.float(-6, 6),
    fds: () => 290 + i,
  });
  return [
    train(0),
    train(1),
    train(2),
    train(3),
    sched(0),
    sched(1),
    {
      pid: 4000,
      name: "ray::RolloutManager",
      role: "rollout_manager",
      threads: 24,
      rssGb: 6,
      fdLimit: 4096,
      core: (_t, rng) => 12 + rng.float(-2, 2),
      // climbing steadily over the run, ending at 80 % of the limit (20 % headroom)
      fds: (t) => Math.round(600 + (2677 * Math.min(t, durationS)) / Math.max(durationS, 1)),
    },
  ];
}

/** Write `dashboard/host/` for `node` of the run in `runDir` (its meta.json gives the start). */
export function writeDemoHost(runDir: string, node: string, endTs: number, seed: number): void {
  const meta = JSON.parse(fs.readFileSync(path.join(runDir, "dashboard", "meta.json"), "utf8")) as { start_ts: number };
  const start = Math.ceil(meta.start_ts);
  const specs = procs(endTs - start);
  const rng = new Rng(seed);
  const hostJiffies = [0, 0, 0, 0, 0, 0, 0, 0];
  const state = specs.map(() => ({ jiffies: 0, vol: 0, nonvol: 0 }));
  const files = new Map<string, string[]>();
  for (let ts = start; ts <= endTs; ts += HOST_DEMO_INTERVAL_S) {
    const t = ts - start;
    const busy = 0.35 + 0.1 * Math.sin(t / 600) + rng.float(-0.03, 0.03); // host CPU share
    const j = NCPU * HZ * HOST_DEMO_INTERVAL_S;
    hostJiffies[0]! += Math.round(j * busy * 0.85);
    hostJiffies[2]! += Math.round(j * busy * 0.15);
    hostJiffies[3]! += Math.round(j * (1 - busy));
    const list: HostProc[] = specs.map((p, i) => {
      const s = state[i]!;
      if (t > 0) {
        s.jiffies += Math.round((p.core(t, rng) / 100) * HZ * HOST_DEMO_INTERVAL_S);
        s.vol += rng.int(200, 400);
        s.nonvol += rng.int(0, 8); // no CPU starvation in this demo
      }
      return {
        pid: p.pid,
        name: p.name,
        cpu_jiffies: s.jiffies,
        rss_kb: Math.round((p.rssGb + 0.5 * Math.sin(t / 900 + i)) * 1048576),
        threads: p.threads,
        voluntary_ctxt_switches: s.vol,
        nonvoluntary_ctxt_switches: s.nonvol,
        fds: p.fds(t),
        fd_limit: p.fdLimit,
        role: p.role,
      };
    });
    const rec: HostSample = {
      ts,
      node,
      ncpu: NCPU,
      cpu: [...hostJiffies],
      mem_total_kb: MEM_TOTAL_KB,
      mem_available_kb: Math.round(MEM_TOTAL_KB * (0.58 - 0.04 * Math.sin(t / 1200))),
      procs: list,
    };
    const key = hourKey(ts);
    let lines = files.get(key);
    if (!lines) files.set(key, (lines = []));
    lines.push(JSON.stringify(rec));
  }
  const dir = path.join(runDir, HOST_DIR);
  fs.mkdirSync(dir, { recursive: true });
  for (const [key, lines] of files) fs.writeFileSync(path.join(dir, `${key}.jsonl`), lines.join("\n") + "\n");
}
