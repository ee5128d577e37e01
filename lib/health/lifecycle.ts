/**
 * Run lifecycle (docs/api.md 9.5.2): when the run started, became ready, took its first
 * train step, last made progress and was last active — and what state it is in, with the
 * cause and the evidence. Facts come from the telemetry store, the stall watchdog
 * (lib/advisory, docs/api.md 10.1), the log signals and file mtimes; the judgement is a
 * pure function of them (`judgeLifecycle`).
 */
import type { Evidence, Lifecycle, LogSignal, RunState } from "@/lib/contracts/health";
import { stallAdvisories, type Advisory } from "@/lib/advisory";
import { ruleOf } from "@/lib/store/logs/signals";
import { filesStamp, OPEN_T1, type MetricStore } from "@/lib/store/telemetry";
import { phaseSource } from "@/lib/timeline/phases";

/** A run with no activity for this long is no longer `running` (ended/killed/stalled/finished). */
export const ACTIVE_WINDOW_S = 300;
/** Signals that mean a process died (a crash after the last progress ⇒ `crashed`). */
export const FATAL_SIGNALS = ["crash", "oom", "nccl_error", "ray_actor_died"] as const;
/** Phase whose first close means the run is ready (the first batch of rollout data exists). */
export const READY_PHASE = "rollout";
/** Phase whose first close is the first train step. */
export const STEP_PHASE = "actor_train";
/**
 * A fatal line that records a kill rather than a crash: SIGKILL (signal 9), an exit code
 * of 137 (128 + 9) or −9, the kernel's / shell's "Killed". Such a run is `killed`.
 */
export const KILL_RECORD = /\bSIGKILL\b|\b[Ss]ignal 9\b|\b(?:[Cc]ode|[Ss]tatus|exitcode)\s*[:=]?\s*(?:137|-9)\b|^\s*Killed\b|\bKilled process\b/;
/** The step key the end marker reads (docs/formats.md §4.1). */
export const STEP_KEY = "rollout/step";

export interface LifecycleFacts {
  startTs: number | null;
  readyTs: number | null;
  firstStepTs: number | null;
  lastProgressTs: number | null;
  lastActivityTs: number | null;
  /** Last rollout step in metrics.jsonl and the run's `num_rollout` argument. */
  lastStep: { step: number; ts: number } | null;
  numRollout: number | null;
  stall: Advisory[];
}

const minOrNull = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));
const maxOrNull = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));

/** Facts from the telemetry store (`logModified`: the newest log mtime, unix s). */
export async function lifecycleFacts(store: MetricStore, logModified: number | null): Promise<LifecycleFacts> {
  const meta = store.meta();
  const range = await store.timeRange();
  const metrics = await store.metrics();
  const start = meta?.start_ts ?? -Infinity;
  // Every phase partition of the run: kept across restarts for a closed run (#20: the
  // run list judges a 1024-GPU day's 8 M phase rows otherwise on every start).
  const phaseFacts = (await store.phases.hasData())
    ? await store.keptMemo("lifecycle.phases", `${filesStamp(await store.phases.files())}|${range?.[1]}|${start}`, async () => {
        const f = { readyTs: null as number | null, firstStepTs: null as number | null, lastProgressTs: null as number | null, stall: [] as Advisory[] };
        const source = await phaseSource(store, null);
        for (const b of source.blocks) {
          const ready = b.strings.lookup(READY_PHASE);
          const step = b.strings.lookup(STEP_PHASE);
          for (let i = 0; i < b.n; i++) {
            const t1 = b.t1[i]!;
            if (t1 === OPEN_T1) continue;
            f.lastProgressTs = maxOrNull(f.lastProgressTs, t1);
            const name = b.name[i];
            if (name === ready) f.readyTs = minOrNull(f.readyTs, t1);
            else if (name === step) f.firstStepTs = minOrNull(f.firstStepTs, t1);
          }
        }
        if (range) f.stall = stallAdvisories(source, range[1], start);
        return f;
      })
    : null;
  const readyTs = phaseFacts?.readyTs ?? null;
  const firstStepTs = phaseFacts?.firstStepTs ?? null;
  let lastProgressTs = phaseFacts?.lastProgressTs ?? null;
  const stall = phaseFacts?.stall ?? [];
  let lastStep: LifecycleFacts["lastStep"] = null;
  let firstMetricsTs: number | null = null;
  for (const r of metrics) {
    firstMetricsTs = minOrNull(firstMetricsTs, r.ts);
    lastProgressTs = maxOrNull(lastProgressTs, r.ts);
    if (r.step_key === STEP_KEY && typeof r.step === "number" && (!lastStep || r.step >= lastStep.step)) lastStep = { step: r.step, ts: r.ts };
  }
  const nr = meta?.args?.num_rollout;
  return {
    startTs: meta?.start_ts ?? range?.[0] ?? null,
    readyTs,
    firstStepTs: firstStepTs ?? firstMetricsTs,
    lastProgressTs,
    lastActivityTs: maxOrNull(range?.[1] ?? null, logModified),
    lastStep,
    numRollout: typeof nr === "number" && Number.isFinite(nr) && nr > 0 ? nr : null,
    stall,
  };
}

/**
 * The newest training step a run logged (the run list's "Last step", docs/api.md 9.5.4):
 * the largest `rollout/step` in metrics.jsonl, else the largest step of any step key,
 * else — a run without metrics — its newest rollout dump.
 */
export async function lastLoggedStep(store: MetricStore, dumps: { listRolloutIds(): Promise<{ train: number[] }> }): Promise<number | null> {
  let rollout: number | null = null;
  let any: number | null = null;
  for (const r of await store.metrics()) {
    if (typeof r.step !== "number" || !Number.isFinite(r.step)) continue;
    any = maxOrNull(any, r.step);
    if (r.step_key === STEP_KEY) rollout = maxOrNull(rollout, r.step);
  }
  if (rollout !== null || any !== null) return rollout ?? any;
  const { train } = await dumps.listRolloutIds();
  return train.length ? Math.max(...train) : null;
}

function signalEvidence(s: LogSignal): Evidence[] {
  const out: Evidence[] = [];
  const last = s.samples[s.samples.length - 1];
  out.push({
    kind: "signal",
    text: `${s.signal}: ${s.count} line(s), last at ${s.last_ts === null ? "?" : new Date(s.last_ts * 1000).toISOString()}`,
    ts: s.last_ts,
    ...(last ? { file: last.file, line: last.line } : {}),
  });
  for (const x of s.samples) out.push({ kind: "signal", text: x.text, ts: s.last_ts, file: x.file, line: x.line });
  return out;
}

const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : a - b);

/** "42 s", "7 min", "3 h", "2 d": how long a run has been quiet. */
export function quietFor(s: number): string {
  if (s < 90) return `${Math.max(0, Math.round(s))} s`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

/**
 * The state rules, first match wins (docs/api.md 9.5.2):
 *  1. `finished` — the last rollout step reached `num_rollout − 1` (the end marker);
 *  2. `crashed` — a fatal signal (crash, oom, nccl_error, ray_actor_died) at or after the
 *     last progress (closed phase or metrics record), or with no progress at all;
 *  3. `stalled` — the stall watchdog fires (docs/api.md 10.1);
 *  4. `running` — any activity (telemetry or log write) in the last ACTIVE_WINDOW_S;
 *  5. `ended` — none of these: quiet, no end marker, no crash after the last progress.
 *     Nothing says how it ended (a dump-only or slime run's files just stop; so do a
 *     `scancel` and a lost node), so the state claims no more than that.
 * A fatal signal whose lines record a kill (KILL_RECORD: SIGKILL, exit 137) is `killed`
 * instead of `crashed` (rule 2).
 */
export function judgeLifecycle(f: LifecycleFacts, signals: readonly LogSignal[], now: number): Lifecycle {
  const evidence: Evidence[] = [];
  let state: RunState;
  let cause: string;
  const fatal = signals
    .filter((s) => (FATAL_SIGNALS as readonly string[]).includes(s.signal) && s.count > 0 && s.last_ts !== null)
    .filter((s) => f.lastProgressTs === null || s.last_ts! >= f.lastProgressTs)
    .sort((a, b) => b.last_ts! - a.last_ts!);
  const idle = f.lastActivityTs === null ? null : now - f.lastActivityTs;
  if (f.lastStep && f.numRollout !== null && f.lastStep.step >= f.numRollout - 1) {
    state = "finished";
    cause = `rollout step ${f.lastStep.step} of num_rollout ${f.numRollout} was logged`;
    evidence.push({ kind: "end_marker", text: cause, ts: f.lastStep.ts });
  } else if (fatal.length) {
    const top = fatal[0]!;
    const kill = fatal.flatMap((s) => s.samples).find((x) => KILL_RECORD.test(x.text));
    const when = f.lastProgressTs === null ? " before any progress" : ", after the last progress";
    if (kill) {
      state = "killed";
      cause = `killed${when}: ${kill.text.trim().slice(0, 120)}`;
    } else {
      state = "crashed";
      cause = `${ruleOf(top.signal).meaning}${when}`;
    }
    for (const s of fatal) evidence.push(...signalEvidence(s));
  } else if (f.stall.length) {
    state = "stalled";
    cause = f.stall[0]!.message;
    for (const a of f.stall) evidence.push({ kind: "advisory", text: a.message, ts: f.lastActivityTs });
  } else if (idle !== null && idle <= ACTIVE_WINDOW_S) {
    state = "running";
    cause = `active ${Math.max(0, Math.round(idle))} s ago`;
  } else {
    state = "ended";
    cause =
      f.lastActivityTs === null
        ? "no telemetry and no logs: nothing says the run ever started"
        : `ended ${quietFor(idle!)} ago without an exit record: no end marker (num_rollout), no crash or kill line after the last progress`;
  }
  if (state !== "running" && state !== "finished" || evidence.length === 0) {
    evidence.push({
      kind: "telemetry",
      text:
        `last progress ${f.lastProgressTs === null ? "never" : new Date(f.lastProgressTs * 1000).toISOString()}, ` +
        `last activity ${f.lastActivityTs === null ? "never" : new Date(f.lastActivityTs * 1000).toISOString()}`,
      ts: f.lastActivityTs,
    });
  }
  return {
    start_ts: f.startTs,
    ready_ts: f.readyTs,
    time_to_ready_s: diff(f.readyTs, f.startTs),
    first_step_ts: f.firstStepTs,
    time_to_first_step_s: diff(f.firstStepTs, f.startTs),
    readiness_gap_s: diff(f.firstStepTs, f.readyTs),
    last_progress_ts: f.lastProgressTs,
    last_activity_ts: f.lastActivityTs,
    state,
    cause,
    evidence,
  };
}
