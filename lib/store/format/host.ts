/**
 * Host telemetry records (docs/formats.md §4.12): `dashboard/host/{YYYYMMDD_HH}.jsonl`,
 * one line per node per sample, cumulative counters only (rates are derived by readers).
 * Written by the collector's /proc sampler (collector/sources/host-sampler.ts), read by
 * lib/health/host.ts; both use these types and the partition helpers of partition.ts.
 */
import { HOST_STREAM, DASHBOARD_DIR } from "./streams";

/** The host stream's directory relative to the run directory. */
export const HOST_DIR = `${DASHBOARD_DIR}/${HOST_STREAM}`;

export interface HostProc {
  pid: number;
  name: string;
  /** user + system jiffies (cumulative) */
  cpu_jiffies: number;
  rss_kb: number;
  threads: number;
  voluntary_ctxt_switches: number;
  nonvoluntary_ctxt_switches: number;
  fds: number;
  /** soft RLIMIT_NOFILE; null = unlimited */
  fd_limit: number | null;
}

export interface HostSample {
  ts: number;
  node: string;
  ncpu: number;
  /** /proc/stat `cpu` line: user, nice, system, idle, iowait, irq, softirq, steal (jiffies, cumulative) */
  cpu: number[];
  mem_total_kb: number;
  mem_available_kb: number;
  procs: HostProc[];
}
