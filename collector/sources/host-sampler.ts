/**
 * Host telemetry (`--host-telemetry`, docs/formats.md §4.12): what no framework publishes —
 * host CPU, memory and, per job process, CPU time, RSS, involuntary context switches and
 * open file descriptors against RLIMIT_NOFILE. Read from /proc only, one record per tick
 * appended to `dashboard/host/{YYYYMMDD_HH}.jsonl` (hourly partitions like gpu_util).
 *
 * Counters are written cumulative (jiffies, context switches) so the cadence is never
 * baked in: readers derive percentages and rates from consecutive records
 * (lib/health/host.ts). A process's CPU share of one core needs no clock tick rate:
 * Δ(its jiffies) / (Δ(host jiffies) / ncpu). Context switches are summed over the
 * process's threads (`/proc/PID/status` alone counts only the main thread, and a
 * trainer's busy threads are often others).
 *
 * Processes (docs/collector.md "Host telemetry"): the union of
 *   - the pids producers register — `POST /v1/procs {"pids":[…],"role":"…"}` (a
 *     ProcRegistry) or the lines of `--host-pid-file FILE` (re-read every tick), and
 *   - those whose command line matches `--host-procs PATTERN` (a regex; default python,
 *     sglang and ray workers) and that this user may read,
 * registered ones first, at most MAX_PROCS. A process sampled on the previous tick that
 * is gone (or whose pid now belongs to a process with another start time) is listed once
 * in the record's `exited`, and a registered one is dropped from the registry.
 */
import fs from "node:fs";
import path from "node:path";
import { HOST_STREAM, hourKey, serializeHostSamples, type HostExit, type HostProc, type HostSample } from "@/lib/store/format";
import type { Logger } from "../log";

export const DEFAULT_HOST_PROCS = /python|sglang|ray::/;
export const MAX_PROCS = 64;
/** Records buffered while appends fail (then the oldest are dropped). */
export const MAX_PENDING = 3600;
/** Registered pids kept at most (POST /v1/procs answers 400 beyond it). */
export const MAX_REGISTERED = 256;
/** Threads whose context switches are summed per process (the rest are left out). */
export const MAX_THREADS = 512;
/** Roles are short names (`trainer`, `rollout`, `router`, …). */
export const ROLE_RE = /^[A-Za-z][A-Za-z0-9_.-]{0,31}$/;

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

/** `/proc/PID/stat` → comm, utime + stime (fields 14, 15), threads (field 20), starttime (field 22). */
export function parsePidStat(text: string): { name: string; cpu: number; threads: number; start: number } | null {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const rest = text.slice(close + 2).split(" "); // rest[0] = field 3 (state)
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  const threads = Number(rest[17]);
  const start = Number(rest[19]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return null;
  return { name: text.slice(open + 1, close), cpu: utime + stime, threads: Number.isFinite(threads) ? threads : 0, start: Number.isFinite(start) ? start : 0 };
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

/** Voluntary and involuntary switches summed over the process's threads (the main thread's alone when tasks are unreadable). */
function threadSwitches(dir: string, leader: { vol: number; nonvol: number }): { vol: number; nonvol: number } {
  let tids: string[];
  try {
    tids = fs.readdirSync(path.join(dir, "task"));
  } catch {
    return leader;
  }
  let vol = 0;
  let nonvol = 0;
  let seen = 0;
  for (const tid of tids.slice(0, MAX_THREADS)) {
    const t = readText(path.join(dir, "task", tid, "status"));
    if (t === null) continue; // a thread that exited meanwhile
    const s = parsePidStatus(t);
    vol += s.vol;
    nonvol += s.nonvol;
    seen++;
  }
  return seen ? { vol, nonvol } : leader;
}

/** One process from /proc (null: gone, or not ours to read); `start` is its starttime. */
function readProc(procRoot: string, pid: number, role?: string): (HostProc & { start: number }) | null {
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
  const sw = threadSwitches(dir, s);
  const limits = readText(path.join(dir, "limits"));
  return {
    pid,
    name: st.name,
    cpu_jiffies: st.cpu,
    rss_kb: s.rss,
    threads: st.threads,
    voluntary_ctxt_switches: sw.vol,
    nonvoluntary_ctxt_switches: sw.nonvol,
    fds,
    fd_limit: limits === null ? null : parseFdLimit(limits),
    ...(role === undefined ? {} : { role }),
    start: st.start,
  };
}

/** starttime of a live pid, null when it does not exist. */
function startTime(procRoot: string, pid: number): number | null {
  const stat = readText(path.join(procRoot, String(pid), "stat"));
  return stat === null ? null : (parsePidStat(stat)?.start ?? null);
}

/** The pids whose command line matches `pattern`. */
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

export class RegistrationError extends Error {}

/**
 * Pids registered by producers (`POST /v1/procs`, `--host-pid-file`), each with its role
 * and starttime, so a pid the kernel reuses for another process is not sampled as ours.
 */
export class ProcRegistry {
  private readonly procs = new Map<number, { role: string | undefined; start: number }>();

  constructor(
    private readonly procRoot = "/proc",
    readonly max = MAX_REGISTERED,
  ) {}

  /**
   * Register live pids (a pid already registered takes the new role); pids that do not
   * exist on this node are answered as `missing` and not kept. Throws RegistrationError
   * when the registry would exceed `max`.
   */
  register(pids: readonly number[], role?: string): { registered: number[]; missing: number[] } {
    const live: [number, number][] = [];
    const missing: number[] = [];
    for (const pid of new Set(pids)) {
      const start = startTime(this.procRoot, pid);
      if (start === null) missing.push(pid);
      else live.push([pid, start]);
    }
    const added = live.filter(([pid]) => !this.procs.has(pid)).length;
    if (this.procs.size + added > this.max) throw new RegistrationError(`at most ${this.max} registered pids (${this.procs.size} now, ${added} new)`);
    for (const [pid, start] of live) this.procs.set(pid, { role, start });
    return { registered: live.map(([pid]) => pid), missing };
  }

  get size(): number {
    return this.procs.size;
  }

  /** Registered pids in registration order, with role and starttime. */
  entries(): { pid: number; role: string | undefined; start: number }[] {
    return [...this.procs].map(([pid, v]) => ({ pid, ...v }));
  }

  drop(pid: number): void {
    this.procs.delete(pid);
  }
}

/** `--host-pid-file` lines: `PID [ROLE]`; blank lines and `#` comments ignored, bad lines skipped. */
export function parsePidFile(text: string): { pid: number; role: string | undefined }[] {
  const out: { pid: number; role: string | undefined }[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.replace(/#.*/, "").trim();
    if (!line) continue;
    const [p, role] = line.split(/\s+/);
    const pid = Number(p);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    out.push({ pid, role: role !== undefined && ROLE_RE.test(role) ? role : undefined });
  }
  return out;
}

type Seen = Map<number, { name: string; role: string | undefined; start: number }>;

/**
 * One host record from /proc. Processes: `pids` exactly when given, else the registered
 * ones (`registered`, first) and those matching `pattern`. `prev` (the processes of the
 * previous record, updated in place) turns a vanished process into an `exited` entry;
 * vanished registered pids are dropped from `registered`.
 */
export function readHostSample(opts: {
  procRoot?: string;
  node: string;
  ts: number;
  pattern?: RegExp | null;
  pids?: readonly number[];
  registered?: ProcRegistry;
  prev?: Seen;
}): HostSample {
  const procRoot = opts.procRoot ?? "/proc";
  const { cpu, ncpu } = parseProcStat(readText(path.join(procRoot, "stat")) ?? "");
  const mem = parseMeminfo(readText(path.join(procRoot, "meminfo")) ?? "");
  const wanted: { pid: number; role: string | undefined; start: number | null }[] = [];
  if (opts.pids) wanted.push(...opts.pids.map((pid) => ({ pid, role: undefined, start: null })));
  else {
    const reg = opts.registered?.entries() ?? [];
    wanted.push(...reg);
    const regSet = new Set(reg.map((r) => r.pid));
    const pattern = opts.pattern === undefined ? DEFAULT_HOST_PROCS : opts.pattern;
    if (pattern) for (const pid of matchingPids(procRoot, pattern)) if (!regSet.has(pid)) wanted.push({ pid, role: undefined, start: null });
  }
  const procs: HostProc[] = [];
  const seen: Seen = new Map();
  for (const w of wanted) {
    if (procs.length >= MAX_PROCS) break;
    const p = readProc(procRoot, w.pid, w.role);
    if (!p || (w.start !== null && p.start !== w.start)) {
      // a registered pid that exited (or now belongs to another process)
      if (w.start !== null) opts.registered?.drop(w.pid);
      continue;
    }
    const { start, ...rec } = p;
    procs.push(rec);
    seen.set(rec.pid, { name: rec.name, role: w.role, start });
  }
  const exited: HostExit[] = [];
  if (opts.prev) {
    for (const [pid, was] of opts.prev) {
      if (seen.has(pid)) continue;
      const now = startTime(procRoot, pid);
      if (now === was.start) continue; // alive, just not sampled this tick (cap, pattern)
      exited.push({ pid, name: was.name, ...(was.role === undefined ? {} : { role: was.role }) });
    }
    // keep alive-but-unsampled ones so their exit is still noticed later
    for (const [pid, was] of opts.prev) if (!seen.has(pid) && !exited.some((e) => e.pid === pid)) seen.set(pid, was);
    opts.prev.clear();
    for (const [pid, v] of seen) opts.prev.set(pid, v);
  }
  return {
    ts: opts.ts,
    node: opts.node,
    ncpu,
    cpu,
    mem_total_kb: Number.isFinite(mem.total) ? mem.total : 0,
    mem_available_kb: Number.isFinite(mem.available) ? mem.available : 0,
    procs,
    ...(exited.length ? { exited } : {}),
  };
}

export interface HostSamplerOptions {
  dashDir: string;
  node: string;
  intervalS: number;
  /** null: registered pids only */
  pattern?: RegExp | null;
  /** `--host-pid-file`: re-read every tick, its live pids registered */
  pidFile?: string;
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
  private pidFileWarned = false;
  private readonly prev: Seen = new Map();
  /** The pids producers registered (POST /v1/procs goes here). */
  readonly registry: ProcRegistry;
  dropped = 0;

  constructor(private readonly opts: HostSamplerOptions) {
    this.registry = new ProcRegistry(opts.procRoot ?? "/proc");
  }

  start(): void {
    if (this.timer) return;
    void this.tick();
    this.timer = setInterval(() => void this.tick(), Math.max(0.1, this.opts.intervalS) * 1000);
    this.timer.unref();
  }

  private readPidFile(): void {
    const file = this.opts.pidFile;
    if (!file) return;
    let text: string;
    try {
      text = fs.readFileSync(file, "utf8");
      this.pidFileWarned = false;
    } catch (err) {
      if (!this.pidFileWarned && (err as NodeJS.ErrnoException).code !== "ENOENT") this.opts.log.warn(`host telemetry: cannot read --host-pid-file ${file}: ${(err as Error).message}`);
      this.pidFileWarned = true;
      return;
    }
    const known = new Map(this.registry.entries().map((e) => [e.pid, e.role]));
    for (const { pid, role } of parsePidFile(text)) {
      if (known.has(pid) && known.get(pid) === role) continue;
      try {
        this.registry.register([pid], role);
      } catch {
        break; // registry full: the rest of the file waits for room
      }
    }
  }

  /** Take one sample and append it (and any backlog). */
  tick(): Promise<void> {
    const now = this.opts.now ?? (() => Date.now() / 1000);
    this.readPidFile();
    const sample = readHostSample({
      procRoot: this.opts.procRoot,
      node: this.opts.node,
      ts: now(),
      pattern: this.opts.pattern,
      registered: this.registry,
      prev: this.prev,
    });
    this.pending.push(serializeHostSamples([sample]));
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
