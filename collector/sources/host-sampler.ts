/**
 * Host telemetry (`--host-telemetry`, docs/formats.md §4.12): what no framework publishes —
 * host CPU, memory and, per job process, CPU time, RSS, involuntary context switches and
 * open file descriptors against RLIMIT_NOFILE. Read from /proc only, one record per tick
 * appended to `dashboard/host/{YYYYMMDD_HH}.jsonl` (hourly partitions like gpu_util).
 *
 * Counters are written cumulative (jiffies, context switches) so the cadence is never
 * baked in: readers derive percentages and rates from consecutive records
 * (lib/health/host.ts). A process's CPU share of one core needs no clock tick rate:
 * Δ(its jiffies) / (Δ(host jiffies) / ncpu).
 *
 * Processes: those whose command line matches `--host-procs PATTERN` (a regex; default
 * python, sglang and ray workers) and that this user may read, at most MAX_PROCS (lowest
 * pids first). A process that exits between listing and reading is left out of that tick.
 */
import fs from "node:fs";
import path from "node:path";
import { HOST_STREAM, hourKey, type HostProc, type HostSample } from "@/lib/store/format";
import type { Logger } from "../log";

export const DEFAULT_HOST_PROCS = /python|sglang|ray::/;
export const MAX_PROCS = 64;
/** Records buffered while appends fail (then the oldest are dropped). */
export const MAX_PENDING = 3600;

// The record types are the format's (lib/store/format/host.ts).
export type { HostProc, HostSample } from "@/lib/store/format";

function readText(p: string): string | null {
  try {
    return fs.readFileSync(p, "utf8");
  } catch {
    return null;
  }
}

/** `/proc/stat` → the aggregate `cpu` jiffies (8 fields) and the number of `cpuN` lines. */
export function parseProcStat(text: string): { cpu: number[]; ncpu: number } {
  let cpu: number[] = [];
  let ncpu = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("cpu ")) cpu = line.trim().split(/\s+/).slice(1, 9).map(Number);
    else if (/^cpu\d+ /.test(line)) ncpu++;
  }
  while (cpu.length < 8) cpu.push(0);
  return { cpu, ncpu: Math.max(ncpu, 1) };
}

export function parseMeminfo(text: string): { total: number; available: number } {
  const get = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? NaN);
  const total = get("MemTotal");
  let available = get("MemAvailable");
  if (!Number.isFinite(available)) available = get("MemFree") + (get("Cached") || 0) + (get("Buffers") || 0);
  return { total, available };
}

/** `/proc/PID/stat` → comm, utime + stime (fields 14, 15), threads (field 20). */
export function parsePidStat(text: string): { name: string; cpu: number; threads: number } | null {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const rest = text.slice(close + 2).split(" "); // rest[0] = field 3 (state)
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  const threads = Number(rest[17]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return null;
  return { name: text.slice(open + 1, close), cpu: utime + stime, threads: Number.isFinite(threads) ? threads : 0 };
}

export function parsePidStatus(text: string): { rss: number; vol: number; nonvol: number } {
  const get = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? 0);
  return { rss: get("VmRSS"), vol: get("voluntary_ctxt_switches"), nonvol: get("nonvoluntary_ctxt_switches") };
}

/** `/proc/PID/limits` → the soft "Max open files" (null = unlimited or unreadable). */
export function parseFdLimit(text: string): number | null {
  const m = /^Max open files\s+(\S+)/m.exec(text);
  if (!m || m[1] === "unlimited") return null;
  const n = Number(m[1]);
  return Number.isFinite(n) ? n : null;
}

function readProc(procRoot: string, pid: number): HostProc | null {
  const dir = path.join(procRoot, String(pid));
  const stat = readText(path.join(dir, "stat"));
  const status = readText(path.join(dir, "status"));
  if (stat === null || status === null) return null;
  const st = parsePidStat(stat);
  if (!st) return null;
  let fds: number;
  try {
    fds = fs.readdirSync(path.join(dir, "fd")).length;
  } catch {
    return null; // another user's process: not ours to report
  }
  const s = parsePidStatus(status);
  const limits = readText(path.join(dir, "limits"));
  return {
    pid,
    name: st.name,
    cpu_jiffies: st.cpu,
    rss_kb: s.rss,
    threads: st.threads,
    voluntary_ctxt_switches: s.vol,
    nonvoluntary_ctxt_switches: s.nonvol,
    fds,
    fd_limit: limits === null ? null : parseFdLimit(limits),
  };
}

/** The pids whose command line matches `pattern` (or exactly `pids` when given). */
export function matchingPids(procRoot: string, pattern: RegExp, maxProcs = MAX_PROCS): number[] {
  let names: string[];
  try {
    names = fs.readdirSync(procRoot);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const n of names.filter((x) => /^\d+$/.test(x)).map(Number).sort((a, b) => a - b)) {
    if (out.length >= maxProcs) break;
    const cmd = readText(path.join(procRoot, String(n), "cmdline"));
    if (cmd === null || cmd === "") continue;
    if (pattern.test(cmd.replace(/\0/g, " "))) out.push(n);
  }
  return out;
}

/** One host record from /proc (`pids`: explicit processes, else those matching `pattern`). */
export function readHostSample(opts: { procRoot?: string; node: string; ts: number; pattern?: RegExp; pids?: readonly number[] }): HostSample {
  const procRoot = opts.procRoot ?? "/proc";
  const { cpu, ncpu } = parseProcStat(readText(path.join(procRoot, "stat")) ?? "");
  const mem = parseMeminfo(readText(path.join(procRoot, "meminfo")) ?? "");
  const pids = opts.pids ?? matchingPids(procRoot, opts.pattern ?? DEFAULT_HOST_PROCS);
  const procs: HostProc[] = [];
  for (const pid of pids.slice(0, MAX_PROCS)) {
    const p = readProc(procRoot, pid);
    if (p) procs.push(p);
  }
  return {
    ts: opts.ts,
    node: opts.node,
    ncpu,
    cpu,
    mem_total_kb: Number.isFinite(mem.total) ? mem.total : 0,
    mem_available_kb: Number.isFinite(mem.available) ? mem.available : 0,
    procs,
  };
}

export interface HostSamplerOptions {
  dashDir: string;
  node: string;
  intervalS: number;
  pattern?: RegExp;
  procRoot?: string;
  log: Logger;
  now?: () => number;
}

/** Samples every `intervalS` and appends to `dashboard/host/`; a failing append keeps a bounded backlog. */
export class HostSampler {
  private timer: NodeJS.Timeout | null = null;
  private pending: string[] = [];
  private writing: Promise<void> = Promise.resolve();
  private warned = false;
  dropped = 0;

  constructor(private readonly opts: HostSamplerOptions) {}

  start(): void {
    if (this.timer) return;
    void this.tick();
    this.timer = setInterval(() => void this.tick(), Math.max(0.1, this.opts.intervalS) * 1000);
    this.timer.unref();
  }

  /** Take one sample and append it (and any backlog). */
  tick(): Promise<void> {
    const now = this.opts.now ?? (() => Date.now() / 1000);
    const sample = readHostSample({ procRoot: this.opts.procRoot, node: this.opts.node, ts: now(), pattern: this.opts.pattern });
    this.pending.push(`${JSON.stringify(sample)}\n`);
    if (this.pending.length > MAX_PENDING) {
      this.dropped += this.pending.length - MAX_PENDING;
      this.pending.splice(0, this.pending.length - MAX_PENDING);
    }
    this.writing = this.writing.then(() => this.flush());
    return this.writing;
  }

  private async flush(): Promise<void> {
    while (this.pending.length) {
      const line = this.pending[0]!;
      const ts = (JSON.parse(line) as HostSample).ts;
      const file = path.join(this.opts.dashDir, HOST_STREAM, `${hourKey(ts)}.jsonl`);
      try {
        await fs.promises.mkdir(path.dirname(file), { recursive: true });
        await fs.promises.appendFile(file, line);
        this.pending.shift();
        this.warned = false;
      } catch (err) {
        if (!this.warned) this.opts.log.warn(`host telemetry: cannot append to ${file}: ${(err as Error).message}; keeping up to ${MAX_PENDING} samples`);
        this.warned = true;
        return;
      }
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.writing;
  }
}
