/**
 * Host telemetry records (docs/formats.md §4.12): `dashboard/host/{YYYYMMDD_HH}.jsonl`,
 * one line per node per sample, cumulative counters only (rates are derived by readers).
 * Written by the collector's /proc sampler (collector/sources/host-sampler.ts), read by
 * lib/health/host.ts; both go through the schemas and the JSONL codec here.
 */
import { z } from "zod";
import { parseJsonlText, serializeJsonl } from "./jsonl";
import { HOST_STREAM, DASHBOARD_DIR } from "./streams";

/** The host stream's directory relative to the run directory. */
export const HOST_DIR = `${DASHBOARD_DIR}/${HOST_STREAM}`;

const Count = z.number().finite().min(0);

export const HostProc = z.object({
  pid: z.number().int(),
  name: z.string(),
  /** user + system jiffies (cumulative) */
  cpu_jiffies: Count,
  rss_kb: Count,
  threads: Count,
  voluntary_ctxt_switches: Count,
  nonvoluntary_ctxt_switches: Count,
  fds: Count,
  /** soft RLIMIT_NOFILE; null = unlimited */
  fd_limit: Count.nullable(),
  /** the role a producer registered the pid with (`POST /v1/procs`, `--host-pid-file`); absent for pattern matches */
  role: z.string().optional(),
});
export type HostProc = z.output<typeof HostProc>;

/** A process sampled on the previous tick that is gone now (or whose pid was reused). */
export const HostExit = z.object({ pid: z.number().int(), name: z.string(), role: z.string().optional() });
export type HostExit = z.output<typeof HostExit>;

export const HostSample = z.object({
  ts: z.number().finite(),
  node: z.string(),
  ncpu: z.number().int().min(0),
  /** /proc/stat `cpu` line: user, nice, system, idle, iowait, irq, softirq, steal (jiffies, cumulative) */
  cpu: z.array(Count),
  mem_total_kb: Count,
  mem_available_kb: Count,
  procs: z.array(HostProc),
  /** processes of the previous record that exited since (absent when none) */
  exited: z.array(HostExit).optional(),
});
export type HostSample = z.output<typeof HostSample>;

export function serializeHostSamples(samples: readonly HostSample[]): string {
  return serializeJsonl(samples);
}

/** The records of one partition file's text (lib/store/format/jsonl.ts rules: torn last line and off-schema lines skipped). */
export function parseHostText(text: string): HostSample[] {
  return parseJsonlText(text, HostSample).records;
}
