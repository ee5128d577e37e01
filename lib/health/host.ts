/**
 * Host telemetry, read side (docs/formats.md §4.12, docs/api.md 9.5.6): the collector's
 * `dashboard/host/{YYYYMMDD_HH}.jsonl` records hold cumulative counters; rates and
 * percentages are derived here from consecutive records of the same node (and pid), so the
 * sampling cadence is never baked into the data.
 *
 * Advisory (docs/api.md 10.5): a process at ≥ 95 % of one core whose involuntary context
 * switches keep rising (it wants more CPU than it gets), or fd headroom below 10 %.
 */
import type { GetHostResponse } from "@/lib/contracts/health";
import { HOST_DIR, HOUR_FILE_RE, HOUR_S, hourStartOfKey, parseHostText, type HostProc, type HostSample } from "@/lib/store/format";
import type { RunFs } from "@/lib/store/safe-fs";
import { checkMaxPoints, checkWindow } from "@/lib/timeline/window";

export { HOST_DIR };
export const CORE_SATURATED_PCT = 95;
export const FD_HEADROOM_MIN = 0.1;
/** Involuntary switches per second that count as "rising" while a core is saturated. */
export const NIVCSW_RISING_PER_S = 1;

/** The on-disk records (lib/store/format/host.ts). */
export type HostProcRecord = HostProc;
export type HostRecord = HostSample;
export interface HostPoint {
  ts: number;
  cpu_pct: number | null;
  mem_used_pct: number | null;
}
export interface ProcPoint {
  ts: number;
  /** % of one core since the previous record (can exceed 100 for multi-threaded processes) */
  cpu_core_pct: number | null;
  rss_kb: number;
  nonvoluntary_per_s: number | null;
  fds: number;
  fd_limit: number | null;
  /** 1 − fds / fd_limit; null when unlimited */
  fd_headroom: number | null;
}
export interface HostNode {
  node: string;
  ncpu: number;
  mem_total_kb: number;
  series: HostPoint[];
  /** `role`: as registered by a producer; `exited`: ts of the record that reported its exit */
  procs: { pid: number; name: string; role?: string; exited?: number; points: ProcPoint[] }[];
}

/** Records of `dashboard/host/` whose hour overlaps [t0, t1] (null = open), in time order. */
export async function readHostRecords(runFs: RunFs, t0: number | null, t1: number | null): Promise<HostRecord[]> {
  const names = (await runFs.readdir(HOST_DIR)).filter((n) => HOUR_FILE_RE.test(n)).sort();
  const out: HostRecord[] = [];
  for (const n of names) {
    const hour = hourStartOfKey(n.slice(0, -".jsonl".length));
    if (hour === null || (t1 !== null && hour > t1) || (t0 !== null && hour + HOUR_S < t0)) continue;
    let text: string;
    try {
      text = (await runFs.readFile(`${HOST_DIR}/${n}`)).toString("utf8");
    } catch {
      continue;
    }
    for (const r of parseHostText(text)) if ((t0 === null || r.ts >= t0) && (t1 === null || r.ts <= t1)) out.push(r);
  }
  return out.sort((a, b) => a.ts - b.ts);
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** Per node: CPU and memory series and per-process points, derived from consecutive records. */
export function deriveHost(records: readonly HostRecord[]): HostNode[] {
  type Track = { pid: number; name: string; role?: string; exited?: number; points: ProcPoint[]; prev: HostProcRecord | null; prevHost: HostRecord | null };
  const nodes = new Map<string, { node: HostNode; prev: HostRecord | null; procs: Map<number, Track>; gone: Track[] }>();
  for (const r of records) {
    let n = nodes.get(r.node);
    if (!n) nodes.set(r.node, (n = { node: { node: r.node, ncpu: r.ncpu, mem_total_kb: r.mem_total_kb, series: [], procs: [] }, prev: null, procs: new Map(), gone: [] }));
    const prev = n.prev;
    let cpuPct: number | null = null;
    let hostJiffiesPerCore: number | null = null;
    if (prev) {
      const dTotal = sum(r.cpu) - sum(prev.cpu);
      const dIdle = (r.cpu[3] ?? 0) + (r.cpu[4] ?? 0) - ((prev.cpu[3] ?? 0) + (prev.cpu[4] ?? 0));
      if (dTotal > 0) {
        cpuPct = (100 * (dTotal - dIdle)) / dTotal;
        hostJiffiesPerCore = dTotal / Math.max(r.ncpu, 1);
      }
    }
    n.node.series.push({ ts: r.ts, cpu_pct: cpuPct, mem_used_pct: r.mem_total_kb > 0 ? (100 * (r.mem_total_kb - r.mem_available_kb)) / r.mem_total_kb : null });
    for (const p of r.procs) {
      let t = n.procs.get(p.pid);
      if (t && t.exited !== undefined) n.gone.push(t); // a reused pid is a new process
      if (!t || t.exited !== undefined) n.procs.set(p.pid, (t = { pid: p.pid, name: p.name, points: [], prev: null, prevHost: null }));
      if (p.role !== undefined) t.role = p.role;
      const pp = t.prev;
      const dt = t.prevHost ? r.ts - t.prevHost.ts : 0;
      let core: number | null = null;
      if (pp && t.prevHost === prev && hostJiffiesPerCore) core = (100 * (p.cpu_jiffies - pp.cpu_jiffies)) / hostJiffiesPerCore;
      t.points.push({
        ts: r.ts,
        cpu_core_pct: core,
        rss_kb: p.rss_kb,
        nonvoluntary_per_s: pp && dt > 0 ? (p.nonvoluntary_ctxt_switches - pp.nonvoluntary_ctxt_switches) / dt : null,
        fds: p.fds,
        fd_limit: p.fd_limit,
        fd_headroom: p.fd_limit ? 1 - p.fds / p.fd_limit : null,
      });
      t.prev = p;
      t.prevHost = r;
    }
    for (const e of r.exited ?? []) {
      const t = n.procs.get(e.pid);
      if (t && t.exited === undefined) t.exited = r.ts;
    }
    n.prev = r;
  }
  return [...nodes.values()]
    .sort((a, b) => (a.node.node < b.node.node ? -1 : 1))
    .map((n) => ({
      ...n.node,
      procs: [...n.gone, ...n.procs.values()].map(({ pid, name, role, exited, points }) => ({ pid, name, ...(role === undefined ? {} : { role }), ...(exited === undefined ? {} : { exited }), points })),
    }));
}

export interface HostAdvisory {
  level: "warning";
  message: string;
}

/**
 * 10.5 host rules over the newest data: a process whose last 3 points sit at ≥ 95 % of one
 * core with involuntary switches rising (≥ 1/s each), or whose last fd headroom is < 10 %.
 */
export function hostAdvisories(
  nodes: readonly HostNode[],
  limits: { corePct?: number; nivcswPerS?: number; fdHeadroom?: number } = {},
): HostAdvisory[] {
  const corePct = limits.corePct ?? CORE_SATURATED_PCT;
  const nivcswPerS = limits.nivcswPerS ?? NIVCSW_RISING_PER_S;
  const fdMin = limits.fdHeadroom ?? FD_HEADROOM_MIN;
  const out: HostAdvisory[] = [];
  for (const n of nodes)
    for (const p of n.procs) {
      if (p.exited !== undefined) continue; // gone: nothing to act on
      const last = p.points.slice(-3);
      if (
        last.length === 3 &&
        last.every((x) => x.cpu_core_pct !== null && x.cpu_core_pct >= corePct && x.nonvoluntary_per_s !== null && x.nonvoluntary_per_s >= nivcswPerS)
      ) {
        const pct = Math.round(sum(last.map((x) => x.cpu_core_pct!)) / 3);
        const sw = Math.round(sum(last.map((x) => x.nonvoluntary_per_s!)) / 3);
        out.push({
          level: "warning",
          message:
            `${n.node}: process ${p.name} (pid ${p.pid}) sits at ${pct}% of a core with ${sw} involuntary context switches/s: ` +
            `it is CPU-starved (too few cores for the job's processes, or a busy-polling loop); GPUs behind it wait on the host.`,
        });
      }
      const h = p.points.at(-1);
      if (h && h.fd_headroom !== null && h.fd_headroom < fdMin) {
        out.push({
          level: "warning",
          message:
            `${n.node}: process ${p.name} (pid ${p.pid}) has ${h.fds} of ${h.fd_limit} file descriptors open (${Math.max(0, Math.round(h.fd_headroom * 100))}% headroom): ` +
            `raise RLIMIT_NOFILE (ulimit -n) before it fails with "Too many open files".`,
        });
      }
    }
  return out;
}

/** Keep at most `n` points, evenly strided, always the last. */
function stride<T>(xs: readonly T[], n: number): T[] {
  if (xs.length <= n) return [...xs];
  const out: T[] = [];
  const step = (xs.length - 1) / (n - 1);
  for (let i = 0; i < n; i++) out.push(xs[Math.round(i * step)]!);
  return out;
}

/**
 * `GET /api/timeline/host` body: per node CPU/memory and the processes, over [t0, t1] (the
 * usual window rules) or, without a window, the newest hour of host data; the advisory
 * rules judge the newest points.
 */
export async function getHost(runFs: RunFs, q: { t0?: number | null; t1?: number | null; max_points: number }): Promise<GetHostResponse> {
  checkWindow(q.t0, q.t1);
  checkMaxPoints(q.max_points);
  let t0 = q.t0 ?? null;
  const t1 = q.t1 ?? null;
  let records: HostRecord[];
  if (t0 === null && t1 === null) {
    const names = (await runFs.readdir(HOST_DIR)).filter((n) => HOUR_FILE_RE.test(n)).sort();
    const newest = names.at(-1);
    if (!newest) return { nodes: [], advisories: [] };
    const hour = Date.UTC(+newest.slice(0, 4), +newest.slice(4, 6) - 1, +newest.slice(6, 8), +newest.slice(9, 11)) / 1000;
    records = await readHostRecords(runFs, hour - 3600, null);
    const last = records.at(-1)?.ts ?? hour;
    t0 = last - 3600;
    records = records.filter((r) => r.ts >= t0!);
  } else {
    records = await readHostRecords(runFs, t0, t1);
  }
  const nodes = deriveHost(records);
  const advisories = hostAdvisories(nodes);
  const n = q.max_points;
  return {
    nodes: nodes.map((x) => ({ ...x, series: stride(x.series, n), procs: x.procs.map((p) => ({ ...p, points: stride(p.points, n) })) })),
    advisories,
  };
}
