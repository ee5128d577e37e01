/**
 * The run list's state cell data (docs/api.md 9.5.4, issue #15 defect 7): one state from
 * the lifecycle, the worst alarm across lifecycle, advisories and log signals, a count,
 * and the last logged step (metrics, else the newest dump).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import type { GetRunStatusResponse, LogSignal } from "@/lib/contracts/health";
import { lastLoggedStep } from "@/lib/health/lifecycle";
import { cachedRunHealth, refreshRunHealth, summarize } from "@/lib/health/server";
import { openMetricStore } from "@/lib/store/telemetry";
import { RunWriter } from "@/lib/store/writer/run-writer";

const quiet: LogSignal[] = [{ signal: "oom", severity: "critical", count: 0, first_ts: null, last_ts: null, samples: [] }];
const status = (state: GetRunStatusResponse["lifecycle"]["state"], cause: string, signals: LogSignal[] = quiet) =>
  ({ lifecycle: { state, cause }, log_signals: signals }) as unknown as GetRunStatusResponse;
const stall = { level: "critical" as const, message: "Phase 'rollout' has been open for 34min on 1 rank(s), 9x its median duration (3.8min): the pipeline is stalled, not slow." };
const zeroStd = { level: "warning" as const, message: "2/4 groups in rollout 3 have zero reward std: they contribute zero policy gradient." };
const hint = { level: "info" as const, message: "Peak engine concurrency stayed low" };

describe("summarize", () => {
  test("a stalled run: the cause is the alarm; its stall advisories are not counted twice, other alarms are", () => {
    const s = summarize(status("stalled", stall.message), [stall, { ...stall, message: "Phase 'train_wait' has been open…" }, zeroStd], 41);
    expect(s).toEqual({ state: "stalled", alarm: { level: "critical", text: stall.message }, alarms: 2, last_step: 41 });
  });

  test("a dump-only run: the worst advisory is the alarm; tuning hints are not alarms", () => {
    expect(summarize(status("killed", "quiet"), [hint, zeroStd], 3)).toEqual({ state: "killed", alarm: { level: "warning", text: zeroStd.message }, alarms: 1, last_step: 3 });
    expect(summarize(status("running", "active"), [hint], null)).toEqual({ state: "running", alarm: null, alarms: 0, last_step: null });
  });

  test("a critical log signal outranks a warning advisory; a critical advisory outranks a warning signal", () => {
    const oom: LogSignal = { signal: "oom", severity: "critical", count: 2, first_ts: 1, last_ts: 2, samples: [] };
    const nan: LogSignal = { signal: "nan_inf", severity: "warning", count: 3, first_ts: 1, last_ts: 2, samples: [] };
    expect(summarize(status("running", "a"), [zeroStd], 1).alarm).toEqual({ level: "warning", text: zeroStd.message });
    expect(summarize(status("running", "a", [oom]), [zeroStd], 1)).toMatchObject({ alarm: { level: "critical", text: "oom ×2" }, alarms: 2 });
    expect(summarize(status("running", "a", [nan]), [{ level: "critical", message: "boom" }], 1).alarm).toEqual({ level: "critical", text: "boom" });
  });
});

describe("lastLoggedStep", () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  const noDumps = { listRolloutIds: async () => ({ train: [] as number[] }) };

  test("the newest rollout/step of metrics.jsonl, not the dump count; the newest dump without metrics", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-laststep-"));
    dirs.push(dir);
    const w = await RunWriter.open({ dashDir: path.join(dir, "dashboard"), meta: { run_name: "x", start_ts: 100, args: {} } });
    for (let step = 0; step <= 70; step++) w.add("metrics", [{ ts: 100 + step, step_key: "rollout/step", step, metrics: { "rollout/step": step } }]);
    w.add("metrics", [{ ts: 200, step_key: "train/step", step: 141, metrics: { "train/step": 141 } }]);
    await w.flush();
    const store = openMetricStore(dir, { follow: false });
    expect(await lastLoggedStep(store, { listRolloutIds: async () => ({ train: [0, 1, 7] }) })).toBe(70);
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-laststep-"));
    dirs.push(empty);
    const none = openMetricStore(empty, { follow: false });
    expect(await lastLoggedStep(none, { listRolloutIds: async () => ({ train: [0, 1, 3] }) })).toBe(3);
    expect(await lastLoggedStep(none, noDumps)).toBeNull();
  });
});

describe("refreshRunHealth", () => {
  test("waits for judgments at most its budget; a slow one lands in the cache when it finishes", async () => {
    let release!: () => void;
    const slow = new Promise<void>((r) => (release = r));
    const judged = { state: "finished" as const, alarm: null, alarms: 0, last_step: 7 };
    const judge = async (id: string) => {
      if (id === "slow-run") await slow;
      return judged;
    };
    const t = performance.now();
    await refreshRunHealth([{ id: "fast-run", key: "1" }, { id: "slow-run", key: "1" }], 150, judge);
    const waited = performance.now() - t;
    expect(waited).toBeGreaterThanOrEqual(140);
    expect(waited).toBeLessThan(1000);
    expect(cachedRunHealth("fast-run")).toEqual(judged);
    expect(cachedRunHealth("slow-run")).toBeNull();
    release();
    await new Promise((r) => setTimeout(r, 10));
    expect(cachedRunHealth("slow-run")).toEqual(judged);
  });
});
