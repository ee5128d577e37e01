import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { deriveHost, hostAdvisories, readHostRecords, type HostRecord } from "@/lib/health/host";
import { RunFs } from "@/lib/store/safe-fs";
import { HostSampler, parseFdLimit, parsePidStat, readHostSample } from "./host-sampler";
import { parseCollectorArgs } from "../env";
import { captureLog } from "../testing/capture-log";

let burner: ChildProcess;
const FDS = 200;

beforeAll(async () => {
  // a real process on this machine's /proc: opens FDS descriptors, then burns one core
  burner = spawn(
    process.execPath,
    [
      "-e",
      `const fs=require("fs");for(let i=0;i<${FDS};i++)fs.openSync("/dev/null","r");process.stdout.write("ready\\n");for(;;){}`,
      "rlboard-host-burner",
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve) => burner.stdout!.once("data", () => resolve()));
});

afterAll(() => {
  burner.kill("SIGKILL");
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("host sampler over the real /proc", () => {
  test("parsers", () => {
    expect(parsePidStat("42 (python3 -m a) R 1 42 42 0 -1 4194304 100 0 0 0 350 50 0 0 20 0 7 0 1000 2000 300")).toEqual({
      name: "python3 -m a",
      cpu: 400,
      threads: 7,
      start: 1000,
    });
    expect(parseFdLimit("Limit Soft Limit Hard Limit Units\nMax open files            1024                 1048576              files\n")).toBe(1024);
    expect(parseFdLimit("Max open files            unlimited            unlimited            files\n")).toBeNull();
  });

  test("a CPU-burning child with open fds: ~100 % of a core, its fds against RLIMIT_NOFILE, switch counters", async () => {
    const pid = burner.pid!;
    const a = readHostSample({ node: "n1", ts: Date.now() / 1000, pids: [pid] });
    await sleep(1000);
    const b = readHostSample({ node: "n1", ts: Date.now() / 1000, pids: [pid] });
    expect(a.ncpu).toBe(os.cpus().length);
    expect(a.mem_total_kb).toBeGreaterThan(0);
    expect(b.cpu.reduce((x, y) => x + y, 0)).toBeGreaterThan(a.cpu.reduce((x, y) => x + y, 0));
    const [pa, pb] = [a.procs[0]!, b.procs[0]!];
    expect(pb.pid).toBe(pid);
    expect(pb.name).toBe("node");
    expect(pb.fds).toBeGreaterThanOrEqual(FDS);
    const limit = Number(/^Max open files\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/limits`, "utf8"))![1]);
    expect(pb.fd_limit).toBe(limit);
    expect(pb.rss_kb).toBeGreaterThan(1000);
    expect(pb.cpu_jiffies).toBeGreaterThan(pa.cpu_jiffies);
    expect(pb.nonvoluntary_ctxt_switches).toBeGreaterThanOrEqual(pa.nonvoluntary_ctxt_switches);
    const [node] = deriveHost([a, b] as HostRecord[]);
    const core = node!.procs[0]!.points[1]!.cpu_core_pct!;
    // a busy loop gets what a shared machine leaves it; the derived share must match the
    // process's own jiffies over wall time (USER_HZ = 100 on Linux)
    const wall = ((pb.cpu_jiffies - pa.cpu_jiffies) / (b.ts - a.ts)); // jiffies/s at USER_HZ 100 = % of a core
    expect(core).toBeGreaterThan(10);
    expect(Math.abs(core - wall)).toBeLessThan(15);
    expect(node!.series[1]!.cpu_pct).toBeGreaterThan(0);
    expect(node!.procs[0]!.points[1]!.fd_headroom).toBeCloseTo(1 - pb.fds / limit, 9);
  });

  test("the pattern picks processes by command line", () => {
    const s = readHostSample({ node: "n1", ts: 1, pattern: /rlboard-host-burner/ });
    expect(s.procs.map((p) => p.pid)).toEqual([burner.pid]);
  });

  test("the sampler appends hourly partitions under dashboard/host/ that the read side parses", async () => {
    const run = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-host-"));
    const dash = path.join(run, "dashboard");
    const clock = [Date.UTC(2026, 11, 1, 21, 59, 59) / 1000, Date.UTC(2026, 11, 1, 22, 0, 1) / 1000];
    let i = 0;
    const logger = captureLog();
    const s = new HostSampler({ dashDir: dash, node: "n1", intervalS: 3600, pattern: /rlboard-host-burner/, log: logger, now: () => clock[i++]! });
    await s.tick();
    await s.tick();
    await s.stop();
    expect(fs.readdirSync(path.join(dash, "host")).sort()).toEqual(["20261201_21.jsonl", "20261201_22.jsonl"]);
    const recs = await readHostRecords(new RunFs(run), null, null);
    expect(recs.map((r) => r.ts)).toEqual(clock);
    expect(recs[1]!.procs[0]!.pid).toBe(burner.pid);
    fs.rmSync(run, { recursive: true, force: true });
  });
});

describe("host advisories", () => {
  const rec = (ts: number, jiffies: number, nivcsw: number, fds: number, hostTotal: number): HostRecord => ({
    ts,
    node: "n1",
    ncpu: 4,
    cpu: [hostTotal, 0, 0, 0, 0, 0, 0, 0],
    mem_total_kb: 100,
    mem_available_kb: 50,
    procs: [{ pid: 7, name: "python", cpu_jiffies: jiffies, rss_kb: 1, threads: 1, voluntary_ctxt_switches: 0, nonvoluntary_ctxt_switches: nivcsw, fds, fd_limit: 1024 }],
  });
  test("100 % of a core with rising involuntary switches, and fd headroom < 10 %", () => {
    // 4 cores, 400 host jiffies per second: 100 jiffies per core-second
    const recs = [0, 1, 2, 3].map((k) => rec(k, 100 * k, 50 * k, 950, 400 * k));
    const adv = hostAdvisories(deriveHost(recs));
    expect(adv.map((a) => a.message)).toEqual([
      "n1: process python (pid 7) sits at 100% of a core with 50 involuntary context switches/s: it is CPU-starved (too few cores for the job's processes, or a busy-polling loop); GPUs behind it wait on the host.",
      'n1: process python (pid 7) has 950 of 1024 file descriptors open (7% headroom): raise RLIMIT_NOFILE (ulimit -n) before it fails with "Too many open files".',
    ]);
  });
  test("a busy process whose switches do not rise, and enough fds: nothing", () => {
    const recs = [0, 1, 2, 3].map((k) => rec(k, 100 * k, 0, 100, 400 * k));
    expect(hostAdvisories(deriveHost(recs))).toEqual([]);
  });
});

describe("collector flags", () => {
  test("--host-telemetry [--host-interval S] [--host-procs REGEX]", () => {
    const c = parseCollectorArgs(["--dump-details", "/tmp/run", "--host-telemetry", "--host-interval", "2", "--host-procs", "python|vllm"], {});
    expect(c).toMatchObject({ hostTelemetry: true, hostIntervalS: 2, hostProcs: "python|vllm" });
    expect(parseCollectorArgs(["--dump-details", "/tmp/run"], {})).toMatchObject({ hostTelemetry: false, hostIntervalS: 5 });
    expect(() => parseCollectorArgs(["--gpu-only", "--push", "http://h:7789", "--host-telemetry"], {})).toThrow(/--host-telemetry needs --dump-details/);
    expect(() => parseCollectorArgs(["--dump-details", "/tmp/run", "--host-telemetry", "--host-procs", "("], {})).toThrow(/--host-procs must be a valid regular expression/);
  });
});
