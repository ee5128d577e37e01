import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import type { LogSignal } from "@/lib/contracts/health";
import { ACTIVE_WINDOW_S, judgeLifecycle, KILL_RECORD, lifecycleFacts, quietFor, type LifecycleFacts } from "@/lib/health/lifecycle";
import { openMetricStore } from "@/lib/store/telemetry";
import { flushBinaryCache } from "@/lib/store/telemetry/binary-cache";
import { phase, RunBuilder } from "@/lib/store/telemetry/testing";
import { LOG_SIGNALS } from "@/lib/store/logs/signals";

const base: LifecycleFacts = {
  startTs: 1000,
  readyTs: 1650,
  firstStepTs: 1900,
  lastProgressTs: 5000,
  lastActivityTs: 5100,
  lastStep: { step: 10, ts: 5000 },
  numRollout: 100,
  stall: [],
};
const none: LogSignal[] = LOG_SIGNALS.map((signal) => ({ signal, severity: "critical", count: 0, first_ts: null, last_ts: null, samples: [] }));
const withSignal = (signal: string, ts: number, text = "boom"): LogSignal[] =>
  none.map((s) => (s.signal === signal ? { ...s, count: 1, first_ts: ts, last_ts: ts, samples: [{ file: "logs/a.log", line: 7, text }] } : s));

describe("judgeLifecycle", () => {
  test("durations: start → ready 650 s (GPUs held, serving nothing), → first step, readiness gap", () => {
    const l = judgeLifecycle(base, none, 5100);
    expect(l).toMatchObject({ time_to_ready_s: 650, time_to_first_step_s: 900, readiness_gap_s: 250, state: "running", cause: "active 0 s ago" });
  });

  test("running until ACTIVE_WINDOW_S of quiet, then ended — not killed: nothing records a kill", () => {
    expect(judgeLifecycle(base, none, 5100 + ACTIVE_WINDOW_S).state).toBe("running");
    const l = judgeLifecycle(base, none, 5101 + ACTIVE_WINDOW_S);
    expect(l.state).toBe("ended");
    expect(l.cause).toBe("ended 5 min ago without an exit record: no end marker (num_rollout), no crash or kill line after the last progress");
    expect(l.evidence.at(-1)).toMatchObject({ kind: "telemetry", ts: 5100 });
    // a dump-only run (no metrics, no num_rollout) quiet for hours
    const dumps = judgeLifecycle({ ...base, lastStep: null, numRollout: null, lastProgressTs: null }, none, 5100 + 3 * 3600);
    expect(dumps.state).toBe("ended");
    expect(dumps.cause).toMatch(/^ended 3 h ago without an exit record/);
  });

  test("a kill on record (SIGKILL, exit 137) after the last progress: killed, the line as cause", () => {
    const l = judgeLifecycle(base, withSignal("crash", 5050, "torch.distributed.elastic: exitcode  : -9 (pid: 5513)"), 9000);
    expect(l.state).toBe("killed");
    expect(l.cause).toBe("killed, after the last progress: torch.distributed.elastic: exitcode  : -9 (pid: 5513)");
    expect(judgeLifecycle(base, withSignal("crash", 5050, "worker exited with code 137"), 9000).state).toBe("killed");
    // an ordinary non-zero exit stays a crash
    expect(judgeLifecycle(base, withSignal("crash", 5050, "worker exited with code 1"), 9000).state).toBe("crashed");
    expect(judgeLifecycle(base, withSignal("crash", 5050, "exitcode  : -11 (pid: 5513)"), 9000).state).toBe("crashed");
  });

  test("kill record and quiet-time wording", () => {
    for (const t of ["Killed", "  Killed python train.py", "received SIGKILL", "terminated by signal 9", "exited with code 137", "exitcode : -9", "Out of memory: Killed process 4242 (python)"]) expect(KILL_RECORD.test(t), t).toBe(true);
    for (const t of ["exitcode : -11", "exited with code 1", "code 1370", "killed the engine restart loop", "signal 90"]) expect(KILL_RECORD.test(t), t).toBe(false);
    expect([quietFor(42), quietFor(301), quietFor(3 * 3600), quietFor(3 * 86400)]).toEqual(["42 s", "5 min", "3 h", "3 d"]);
  });

  test("a fatal signal before the last progress does not count; at or after it, crashed", () => {
    expect(judgeLifecycle(base, withSignal("oom", 4999), 5100).state).toBe("running");
    const l = judgeLifecycle(base, withSignal("oom", 5050), 5100);
    expect(l.state).toBe("crashed");
    expect(l.cause).toBe("out of memory (CUDA allocator, torch OutOfMemoryError or the kernel OOM killer), after the last progress");
    expect(l.evidence).toContainEqual({ kind: "signal", text: "boom", ts: 5050, file: "logs/a.log", line: 7 });
  });

  test("warnings (nan_inf, kv timeouts, engine restarts) never make a run crashed", () => {
    for (const s of ["nan_inf", "kv_transfer_timeout", "engine_error"]) expect(judgeLifecycle(base, withSignal(s, 5050), 5100).state).toBe("running");
  });

  test("the stall watchdog: stalled, its message as cause", () => {
    const l = judgeLifecycle({ ...base, stall: [{ level: "critical", message: "Phase 'rollout' has been open for 2h" }] }, none, 5100);
    expect(l).toMatchObject({ state: "stalled", cause: "Phase 'rollout' has been open for 2h" });
    expect(l.evidence[0]).toMatchObject({ kind: "advisory" });
  });

  test("the end marker wins over everything", () => {
    const l = judgeLifecycle({ ...base, lastStep: { step: 99, ts: 9000 } }, withSignal("crash", 9999), 99999);
    expect(l).toMatchObject({ state: "finished", cause: "rollout step 99 of num_rollout 100 was logged" });
  });

  test("a crash with no progress at all", () => {
    const l = judgeLifecycle({ ...base, readyTs: null, firstStepTs: null, lastProgressTs: null, lastStep: null }, withSignal("nccl_error", 1200), 1300);
    expect(l.state).toBe("crashed");
    expect(l.cause).toMatch(/before any progress$/);
    expect(l.time_to_ready_s).toBeNull();
  });
});

describe("lifecycleFacts", () => {
  test("a restarted server reads the phase facts it kept, not the phase partitions", async () => {
    const b = new RunBuilder()
      .meta({ start_ts: 0, args: {} })
      .phases(phase("train_wait", 0, 10), phase("train_wait", 100, 110), phase("train_wait", 200, 210), phase("train_wait", 300, -1))
      .gpu({ ts: 9000, node: "n1", gpu: 0, util: 0, mem_mb: 0, power_w: 0 });
    const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-lifecycle-"));
    try {
      const open = () => openMetricStore(b.runDir, { follow: false, statIntervalMs: 0, cacheDir });
      const first = await lifecycleFacts(open(), null);
      expect(first.lastProgressTs).toBe(210);
      expect(first.stall).toHaveLength(1);
      await flushBinaryCache();
      const restarted = open();
      expect(await lifecycleFacts(restarted, null)).toEqual(first);
      expect((await restarted.phases.files()).every((f) => f.block === null)).toBe(true);
      expect(await lifecycleFacts(openMetricStore(b.runDir, { follow: false, statIntervalMs: 0 }), null)).toEqual(first);
    } finally {
      fs.rmSync(cacheDir, { recursive: true, force: true });
      fs.rmSync(b.runDir, { recursive: true, force: true });
    }
  });
});
