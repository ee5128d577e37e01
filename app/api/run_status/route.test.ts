import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { GetRunStatusResponse, LOG_SIGNAL_NAMES, RUN_INPUT_KEYS, RUN_INPUTS } from "@/lib/contracts/health";
import { phase, RunBuilder } from "@/lib/store/telemetry/testing";
import { callJson, setupTestServer, type TestServer } from "@/lib/testing/api";
import { GetRunsResponse } from "@/lib/contracts/runs";
import { GET as runsGET } from "../runs/route";
import { GET } from "./route";

let root: string;
let outside: string;
let server: TestServer;
const T = Date.UTC(2026, 11, 1, 20, 0, 0) / 1000; // start of the runs below

function write(p: string, text: string, mtime?: number): void {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
  if (mtime !== undefined) fs.utimesSync(p, mtime, mtime);
}
const iso = (ts: number) => new Date(ts * 1000).toISOString().replace("T", " ").slice(0, 19);

beforeAll(async () => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-runstatus-")));
  outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-outside-")));

  // crashed: progress until T+600, then a traceback and a CUDA OOM in a nested worker log
  const crashed = new RunBuilder(path.join(root, "crashed"))
    .meta({ run_name: "crashed", start_ts: T, args: { num_rollout: 100 } })
    .phases(phase("rollout", T + 100, T + 300, { gpus: [], rank: -1, role: "rollout_manager" }), phase("actor_train", T + 320, T + 600, { gpus: [0] }))
    .metrics({ ts: T + 600, step_key: "rollout/step", step: 0, metrics: { "train/loss": 0.5 } });
  void crashed;
  write(
    path.join(root, "crashed", "logs", "node0", "worker-3.err"),
    [
      `[${iso(T + 590)}] step 0 done`,
      `[${iso(T + 700)}] Traceback (most recent call last):`,
      '  File "miles/backends/megatron_utils/actor.py", line 311, in train',
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.06 GiB is free.",
      "",
    ].join("\n"),
  );
  write(path.join(root, "crashed", "logs", "driver.log"), `[${iso(T + 10)}] ray.init done\nNCCL INFO Channel 00/24 : 0 1\n`);
  write(path.join(root, "crashed", "logs", "notes.txt"), "Traceback (most recent call last):\n"); // not a log name
  // a link leaving the run directory is never followed
  write(path.join(outside, "secret.log"), "Segmentation fault\nSegmentation fault\n");
  fs.symlinkSync(path.join(outside, "secret.log"), path.join(root, "crashed", "logs", "escape.log"));
  fs.symlinkSync(outside, path.join(root, "crashed", "logs", "escape-dir"));

  // finished: the last step is num_rollout − 1
  new RunBuilder(path.join(root, "finished"))
    .meta({ run_name: "finished", start_ts: T, args: { num_rollout: 2 } })
    .phases(phase("rollout", T + 50, T + 80, { gpus: [], rank: -1, role: "rollout_manager" }), phase("actor_train", T + 90, T + 120, { gpus: [0] }))
    .metrics(
      { ts: T + 130, step_key: "rollout/step", step: 0, metrics: {} },
      { ts: T + 260, step_key: "rollout/step", step: 1, metrics: {} },
    );

  // killed: quiet for hours, no crash line, no end marker; its Slurm log lives outside
  new RunBuilder(path.join(root, "killed"))
    .meta({ run_name: "killed", start_ts: T, args: { num_rollout: 100 } })
    .metrics({ ts: T + 400, step_key: "rollout/step", step: 3, metrics: {} });
  write(path.join(outside, "slurm", "job-42", "slurm-42.out"), `[${iso(T + 300)}] grad_norm: nan, skipping this step\n`, T + 420);

  // empty: a bare directory with only a dump
  fs.mkdirSync(path.join(root, "empty", "rollout_data"), { recursive: true });
  fs.writeFileSync(path.join(root, "empty", "rollout_data", "0.pt"), "");

  server = await setupTestServer({ runsRoots: [root], runLogs: { killed: [path.join(outside, "slurm", "*", "*.out")] } });
});

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

async function status(run: string) {
  const { status: code, body } = await callJson(GET, `/api/run_status?run=${run}`, { token: server.token });
  expect(code).toBe(200);
  return GetRunStatusResponse.parse(body);
}

describe("GET /api/run_status", () => {
  test("401 without a token", async () => {
    expect((await callJson(GET, "/api/run_status?run=crashed")).status).toBe(401);
  });

  test("a crash after the last progress: crashed, with the log lines as evidence; links outside are not followed", async () => {
    const s = await status("crashed");
    expect(s.log_signals.map((x) => x.signal)).toEqual([...LOG_SIGNAL_NAMES]);
    const by = Object.fromEntries(s.log_signals.map((x) => [x.signal, x]));
    expect(by.crash).toMatchObject({
      count: 1, // escape.log's two segfaults and notes.txt are not read
      first_ts: T + 700,
      samples: [{ file: "logs/node0/worker-3.err", line: 2, text: `[${iso(T + 700)}] Traceback (most recent call last):` }],
    });
    expect(by.oom).toMatchObject({ count: 1, first_ts: T + 700, last_ts: T + 700, samples: [{ file: "logs/node0/worker-3.err", line: 4 }] });
    expect(by.nccl_error!.count).toBe(0);
    expect(s.lifecycle).toMatchObject({
      start_ts: T,
      ready_ts: T + 300,
      time_to_ready_s: 300,
      first_step_ts: T + 600,
      time_to_first_step_s: 600,
      readiness_gap_s: 300,
      last_progress_ts: T + 600,
      state: "crashed",
    });
    expect(s.lifecycle.cause).toContain("crashed");
    expect(s.lifecycle.evidence.some((e) => e.kind === "signal" && e.file === "logs/node0/worker-3.err" && e.text.includes("OutOfMemoryError"))).toBe(true);
    expect(JSON.stringify(s)).not.toContain(outside);
    expect(s.inputs.logs.present).toBe(true);
  });

  test("the end marker: finished", async () => {
    const s = await status("finished");
    expect(s.lifecycle).toMatchObject({ state: "finished", ready_ts: T + 80, first_step_ts: T + 120, time_to_ready_s: 80 });
    expect(s.lifecycle.evidence[0]).toMatchObject({ kind: "end_marker", ts: T + 260 });
    expect(s.log_signals.every((x) => x.count === 0)).toBe(true);
    expect(s.inputs.logs).toEqual({ present: false, ...RUN_INPUTS.logs });
    expect(s.alerts).toEqual({ configured: false, muted: false });
  });

  test("quiet without an end marker or kill record: ended; --run-logs files count, named relative to the glob", async () => {
    const s = await status("killed");
    expect(s.lifecycle.state).toBe("ended");
    expect(s.lifecycle.cause).toMatch(/^ended \d.* ago without an exit record: no end marker \(num_rollout\), no crash or kill line after the last progress$/);
    expect(s.lifecycle.last_activity_ts).toBe(T + 420); // the Slurm log's mtime
    expect(s.lifecycle.first_step_ts).toBe(T + 400); // no phases: the first metrics record
    const nan = s.log_signals.find((x) => x.signal === "nan_inf")!;
    expect(nan).toMatchObject({ count: 1, severity: "warning", first_ts: T + 300, samples: [{ file: "job-42/slurm-42.out", line: 1 }] });
    expect(JSON.stringify(s)).not.toContain(outside);
  });

  test("every input is reported present or missing, with what writes it", async () => {
    const s = await status("empty");
    expect(Object.keys(s.inputs).sort()).toEqual([...RUN_INPUT_KEYS].sort());
    expect(s.inputs.rollout_dumps.present).toBe(true);
    expect(s.inputs.dashboard).toEqual({ present: false, ...RUN_INPUTS.dashboard });
    expect(s.inputs.dashboard.written_by).toContain("--use-miles-dashboard");
    expect(s.lifecycle).toMatchObject({ state: "ended", start_ts: null, ready_ts: null, last_activity_ts: null });
    expect(s.lifecycle.cause).toContain("nothing says the run ever started");
  });

  test("a rescan reads only what a log gained", async () => {
    const p = path.join(root, "crashed", "logs", "node0", "worker-3.err");
    fs.appendFileSync(p, `[${iso(T + 800)}] NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n`);
    const s = await status("crashed");
    const by = Object.fromEntries(s.log_signals.map((x) => [x.signal, x]));
    expect(by.crash!.count).toBe(1); // not counted twice
    expect(by.nccl_error).toMatchObject({ count: 1, last_ts: T + 800, samples: [{ line: 5 }] });
  });

  test("signal records the collector forwarded from a node (--logs) are folded in, named node:file", async () => {
    const dash = path.join(root, "finished", "dashboard", "log_signals");
    fs.mkdirSync(dash, { recursive: true });
    const rec = (ts: number, count: number, line: number) =>
      JSON.stringify({ ts, node: "10.0.0.7", signal: "nan_inf", count, first_ts: ts - 5, last_ts: ts - 1, samples: [{ file: "w0/train.log", line, text: `loss: nan (${line})` }] });
    fs.writeFileSync(path.join(dash, "20261201_20.jsonl"), `${rec(T + 100, 2, 10)}\n${rec(T + 200, 1, 20)}\n{"torn`);
    const s = await status("finished");
    const nan = s.log_signals.find((x) => x.signal === "nan_inf")!;
    expect(nan).toEqual({
      signal: "nan_inf",
      severity: "warning",
      count: 3,
      first_ts: T + 95,
      last_ts: T + 199,
      samples: [
        { file: "10.0.0.7:w0/train.log", line: 10, text: "loss: nan (10)" },
        { file: "10.0.0.7:w0/train.log", line: 20, text: "loss: nan (20)" },
      ],
    });
    expect(s.lifecycle.state).toBe("finished");
    expect(s.inputs.logs.present).toBe(true);
  });

  test("GET /api/runs carries each run's state and worst alarm", async () => {
    const { status: code, body } = await callJson(runsGET, "/api/runs", { token: server.token });
    expect(code).toBe(200);
    const runs = Object.fromEntries(GetRunsResponse.parse(body).runs.map((r) => [r.id, r]));
    expect(runs.crashed).toMatchObject({ state: "crashed", alarm: { level: "critical" } });
    expect(runs.crashed!.alarm!.text).toContain("after the last progress");
    expect(runs.finished).toMatchObject({ state: "finished", alarm: { level: "warning", text: "nan_inf ×3" } });
    expect(runs.killed).toMatchObject({ state: "ended", alarm: { level: "warning", text: "nan_inf ×1" } });
    expect(runs.empty).toMatchObject({ state: "ended", alarm: null });
  });
});
