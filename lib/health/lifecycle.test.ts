import { describe, expect, test } from "vitest";
import type { LogSignal } from "@/lib/contracts/health";
import { ACTIVE_WINDOW_S, judgeLifecycle, type LifecycleFacts } from "@/lib/health/lifecycle";
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
const withSignal = (signal: string, ts: number): LogSignal[] =>
  none.map((s) => (s.signal === signal ? { ...s, count: 1, first_ts: ts, last_ts: ts, samples: [{ file: "logs/a.log", line: 7, text: "boom" }] } : s));

describe("judgeLifecycle", () => {
  test("durations: start → ready 650 s (GPUs held, serving nothing), → first step, readiness gap", () => {
    const l = judgeLifecycle(base, none, 5100);
    expect(l).toMatchObject({ time_to_ready_s: 650, time_to_first_step_s: 900, readiness_gap_s: 250, state: "running", cause: "active 0 s ago" });
  });

  test("running until ACTIVE_WINDOW_S of quiet, then killed", () => {
    expect(judgeLifecycle(base, none, 5100 + ACTIVE_WINDOW_S).state).toBe("running");
    const l = judgeLifecycle(base, none, 5101 + ACTIVE_WINDOW_S);
    expect(l.state).toBe("killed");
    expect(l.evidence.at(-1)).toMatchObject({ kind: "telemetry", ts: 5100 });
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
