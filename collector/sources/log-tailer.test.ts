import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { parseCollectorArgs } from "../env";
import { captureLog } from "../testing/capture-log";
import { LogTailer, type LogSignalRecord } from "./log-tailer";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-tailer-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("collector --logs GLOB", () => {
  test("flags", () => {
    expect(parseCollectorArgs(["--dump-details", dir, "--logs", "/var/log/job/*.out", "--logs", "/tmp/x.log", "--logs-interval", "3"], {})).toMatchObject({
      logs: ["/var/log/job/*.out", "/tmp/x.log"],
      logsIntervalS: 3,
    });
    expect(parseCollectorArgs(["--dump-details", dir], {})).toMatchObject({ logs: [], logsIntervalS: 10 });
    expect(() => parseCollectorArgs(["--gpu-only", "--push", "http://h:7789", "--logs", "/x/*.log"], {})).toThrow(/--logs needs --dump-details/);
  });

  test("new matching lines become one bounded record per signal per tick under dashboard/log_signals/", async () => {
    const logs = path.join(dir, "node-logs");
    fs.mkdirSync(path.join(logs, "w0"), { recursive: true });
    const f = path.join(logs, "w0", "worker.err");
    fs.writeFileSync(f, "[2026-12-01 22:00:00] start\n" + "[2026-12-01 22:00:01] Segmentation fault\n".repeat(5));
    const dash = path.join(dir, "run", "dashboard");
    const clock = [Date.UTC(2026, 11, 1, 22, 0, 10) / 1000, Date.UTC(2026, 11, 1, 22, 0, 20) / 1000, Date.UTC(2026, 11, 1, 22, 0, 30) / 1000];
    let i = 0;
    const t = new LogTailer({ globs: [path.join(logs, "**", "*.err")], dashDir: dash, node: "10.0.0.7", intervalS: 3600, log: captureLog(), now: () => clock[i++]! });
    const first = await t.tick();
    expect(first).toEqual([
      {
        ts: clock[0],
        node: "10.0.0.7",
        signal: "crash",
        count: 5,
        first_ts: Date.UTC(2026, 11, 1, 22, 0, 1) / 1000,
        last_ts: Date.UTC(2026, 11, 1, 22, 0, 1) / 1000,
        samples: [4, 5, 6].map((line) => ({ file: "w0/worker.err", line, text: "[2026-12-01 22:00:01] Segmentation fault" })),
      },
    ]);
    expect(await t.tick()).toEqual([]); // nothing new: nothing written
    fs.appendFileSync(f, "[2026-12-01 22:00:25] torch.OutOfMemoryError: CUDA out of memory.\n");
    const third = await t.tick();
    expect(third.map((r) => [r.signal, r.count])).toEqual([["oom", 1]]);
    await t.stop();
    const lines = fs.readFileSync(path.join(dash, "log_signals", "20261201_22.jsonl"), "utf8").trim().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as LogSignalRecord).signal)).toEqual(["crash", "oom"]);
  });
});
