/**
 * Log signals (docs/api.md 9.5 "Run health"): one table of data — signal → the regexes that
 * count a log line for it. Every pattern is case-insensitive and tested against one line
 * (no newline). A line may count for several signals (an SGLang scheduler exception that
 * carries a traceback is both `engine_error` and `crash`), but at most once per signal.
 *
 * Tested on real-looking lines from each framework in signals.test.ts; a new framework's
 * message is one more row here plus one more sample line there.
 */

import { LOG_SIGNAL_NAMES } from "@/lib/contracts/health";

export const LOG_SIGNALS = LOG_SIGNAL_NAMES;
export type LogSignalName = (typeof LOG_SIGNALS)[number];

export type SignalSeverity = "critical" | "warning";

export interface SignalRule {
  signal: LogSignalName;
  severity: SignalSeverity;
  /** What a match means, for people (run_status, alerts). */
  meaning: string;
  patterns: readonly RegExp[];
}

export const SIGNAL_TABLE: readonly SignalRule[] = [
  {
    signal: "crash",
    severity: "critical",
    meaning: "a process crashed (Python traceback, segfault, core dump or a non-zero exit)",
    patterns: [
      /Traceback \(most recent call last\)/,
      /Segmentation fault|\bSIGSEGV\b|Fatal Python error/,
      /\bcore dumped\b/,
      /\b(?:exited|exits|terminated|failed|finished) with (?:exit )?(?:code|status)[ :=]*-?[1-9]\d*/,
      /returned non-zero exit status -?[1-9]\d*/,
      /\bChildFailedError\b|\bexitcode\s*:\s*-?[1-9]\d*/,
    ],
  },
  {
    signal: "oom",
    severity: "critical",
    meaning: "out of memory (CUDA allocator, torch OutOfMemoryError or the kernel OOM killer)",
    patterns: [
      /CUDA out of memory|CUDA error: out of memory/,
      /\bOutOfMemoryError\b/,
      /invoked oom-killer|Out of memory: Killed process|\boom-kill:|Memory cgroup out of memory|\bOOMKilled\b/,
    ],
  },
  {
    signal: "nccl_error",
    severity: "critical",
    meaning: "an NCCL error or a collective that timed out in the watchdog",
    patterns: [
      /\bNCCL error\b|\bnccl(?:Internal|System|Unhandled ?Cuda|Invalid(?:Usage|Argument)|Remote)Error\b/,
      /Watchdog caught collective operation timeout|\bWorkNCCL\(.*\) ran for \d+ milliseconds before timing out/,
      /NCCL communicator was aborted|\bDistBackendError\b|ProcessGroupNCCL.*(?:timeout|timed out|abort)/,
    ],
  },
  {
    signal: "ray_actor_died",
    severity: "critical",
    meaning: "a Ray actor died (its worker process exited or its node was lost)",
    patterns: [/\bActorDiedError\b|\bRayActorError\b/, /The actor (?:died|is dead)|actor died unexpectedly/],
  },
  {
    signal: "engine_error",
    severity: "critical",
    meaning: "an SGLang engine failed (a scheduler/manager exception) or was restarted",
    patterns: [
      /\b(?:Scheduler|TokenizerManager|DetokenizerManager|DataParallelController) hit an exception/,
      /Received sigquit from a child process/,
      /\b(?:restart(?:ing|ed)?|relaunch(?:ing|ed)?|recreat(?:ing|ed)) (?:the |an |\d+ )?(?:sglang |rollout |inference )?engines?\b/,
    ],
  },
  {
    signal: "kv_transfer_timeout",
    severity: "warning",
    meaning: "a prefill→decode KV cache transfer timed out (disaggregated serving)",
    patterns: [
      /\bKVTransferError\b.*(?:time|timed) ?out|KV ?(?:cache )?transfer\b.*\b(?:timeout|timed out)/,
      /\bKVPoll\.\w+\b.*\b(?:timeout|timed out)|\b(?:timeout|timed out)\b.*\bKVPoll\.\w+/,
    ],
  },
  {
    signal: "nan_inf",
    severity: "warning",
    meaning: "a NaN/Inf loss or gradient norm",
    patterns: [
      /\b(?:loss|grad[_ ]?norm)\b[^\n]{0,48}?[=:]?\s*[-+]?\b(?:nan|inf|infinity)\b/,
      /\b(?:nan|inf|non-finite|nonfinite)\b (?:detected )?(?:in |at )?(?:the )?(?:local |global )?(?:loss|grad(?:ient)?s?(?: norm)?)\b/,
      /\bDetected (?:NaN|Inf)\b|\bskipp(?:ing|ed) (?:this )?(?:step|update|iteration) (?:because of|due to) (?:nan|inf)/,
    ],
  },
];

const flags = "i";
/** The table's patterns compiled once: per signal one case-insensitive alternation. */
export const COMPILED: readonly { rule: SignalRule; re: RegExp }[] = SIGNAL_TABLE.map((rule) => ({
  rule,
  re: new RegExp(rule.patterns.map((p) => `(?:${p.source})`).join("|"), flags),
}));

/** Any pattern of the table — the prefilter run over whole chunks (global, multiline). */
export const ANY_SIGNAL = new RegExp(
  SIGNAL_TABLE.flatMap((r) => r.patterns.map((p) => `(?:${p.source})`)).join("|"),
  "gim",
);

/** The signals one line counts for (in table order). */
export function classifyLine(line: string): LogSignalName[] {
  const out: LogSignalName[] = [];
  for (const { rule, re } of COMPILED) if (re.test(line)) out.push(rule.signal);
  return out;
}

export function ruleOf(signal: LogSignalName): SignalRule {
  return SIGNAL_TABLE.find((r) => r.signal === signal)!;
}

const MONTHS: Record<string, number> = { jan: 0, feb: 1, mar: 2, apr: 3, may: 4, jun: 5, jul: 6, aug: 7, sep: 8, oct: 9, nov: 10, dec: 11 };
const ISO = /(\d{4})[-/](\d{2})[-/](\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?\s*(Z|UTC|[+-]\d{2}:?\d{2})?/;
const GLOG = /^[IWEF](\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?/;
const SYSLOG = /^(?:\[)?(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2})/i;

function frac(s: string | undefined): number {
  return s ? Number(`0.${s}`) : 0;
}

/**
 * Unix seconds of the timestamp a log line starts with or carries, or null. Read as UTC
 * unless the stamp names a zone: `2026-12-01 22:03:04,123`, `2026-12-01T22:03:04.5Z`,
 * `[2026-12-01 22:03:04 +01:00]`, glog `I1201 22:03:04.123456` and syslog
 * `Dec  1 22:03:04` (no year: the year of `refTs`, the file's mtime).
 */
export function parseLineTs(line: string, refTs: number): number | null {
  const head = line.length > 200 ? line.slice(0, 200) : line;
  let m = ISO.exec(head);
  if (m) {
    const [, y, mo, d, h, mi, s, f, z] = m;
    let t = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s!) / 1000 + frac(f);
    if (z && z !== "Z" && z.toUpperCase() !== "UTC") {
      const sign = z[0] === "-" ? -1 : 1;
      const digits = z.slice(1).replace(":", "");
      t -= sign * (Number(digits.slice(0, 2)) * 3600 + Number(digits.slice(2)) * 60);
    }
    return Number.isFinite(t) ? t : null;
  }
  const year = new Date(refTs * 1000).getUTCFullYear();
  m = GLOG.exec(head);
  if (m) {
    const [, mo, d, h, mi, s, f] = m;
    return Date.UTC(year, +mo! - 1, +d!, +h!, +mi!, +s!) / 1000 + frac(f);
  }
  m = SYSLOG.exec(head);
  if (m) {
    const [, mon, d, h, mi, s] = m;
    return Date.UTC(year, MONTHS[mon!.toLowerCase()] ?? 0, +d!, +h!, +mi!, +s!) / 1000;
  }
  return null;
}
