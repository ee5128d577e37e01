import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { LogScanner, MAX_SAMPLES, type LogSource } from "@/lib/store/logs/scanner";
import { LOG_SIGNALS } from "@/lib/store/logs/signals";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-logscan-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function source(name: string): LogSource {
  return { name, open: () => fs.promises.open(path.join(dir, name), "r") };
}

const NOISE = "[2026-12-01 22:00:00 TP0] Decode batch. #running-req: 12, #token: 40960, token usage: 0.31, gen throughput (token/s): 1234.5\n";

describe("LogScanner", () => {
  test("zero counts are kept for every signal", async () => {
    fs.writeFileSync(path.join(dir, "quiet.log"), NOISE.repeat(10));
    const s = new LogScanner();
    await s.scan([source("quiet.log")]);
    const r = s.result();
    expect(r.map((x) => x.signal)).toEqual([...LOG_SIGNALS]);
    for (const x of r) expect(x).toMatchObject({ count: 0, first_ts: null, last_ts: null, samples: [] });
  });

  test("counts, timestamps from the line (else the mtime), samples with file:line", async () => {
    const lines = [
      NOISE.trimEnd(),
      "[2026-12-01 22:03:04] Traceback (most recent call last):",
      '  File "train.py", line 3, in <module>',
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
      NOISE.trimEnd(),
      "[2026-12-01 22:05:00] Traceback (most recent call last):",
      "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
    ];
    const p = path.join(dir, "a.log");
    fs.writeFileSync(p, lines.join("\n") + "\n");
    const mtime = Date.UTC(2026, 11, 1, 23, 0, 0) / 1000;
    fs.utimesSync(p, mtime, mtime);
    const s = new LogScanner();
    await s.scan([source("a.log")]);
    const by = Object.fromEntries(s.result().map((x) => [x.signal, x]));
    expect(by.crash).toEqual({
      signal: "crash",
      count: 2,
      first_ts: Date.UTC(2026, 11, 1, 22, 3, 4) / 1000,
      last_ts: Date.UTC(2026, 11, 1, 22, 5, 0) / 1000,
      samples: [
        { file: "a.log", line: 2, text: lines[1] },
        { file: "a.log", line: 6, text: lines[5] },
      ],
    });
    // no stamp on the line: the nearest earlier stamped line's
    const at = Date.UTC(2026, 11, 1, 22, 3, 4) / 1000;
    expect(by.oom).toMatchObject({ count: 1, first_ts: at, last_ts: at, samples: [{ file: "a.log", line: 4, text: lines[3] }] });
    expect(by.ray_actor_died).toMatchObject({ count: 1, samples: [{ line: 7 }] });
    expect(by.nccl_error!.count).toBe(0);
    expect(s.lastModified).toBe(mtime);
  });

  test("a file without any stamp dates its matches by its mtime; the stamp carries over chunks", async () => {
    const p = path.join(dir, "nostamp.err");
    fs.writeFileSync(p, "starting\nSegmentation fault\n");
    const mtime = Date.UTC(2026, 11, 1, 21, 0, 0) / 1000;
    fs.utimesSync(p, mtime, mtime);
    const q = path.join(dir, "carry.log");
    fs.writeFileSync(q, `[2026-12-01 20:00:00] step 1\n${"x\n".repeat(3000)}Segmentation fault\n`);
    const s = new LogScanner(1024);
    await s.scan([source("nostamp.err"), source("carry.log")]);
    const crash = s.result()[0]!;
    expect(crash.count).toBe(2);
    expect(crash.first_ts).toBe(Date.UTC(2026, 11, 1, 20, 0, 0) / 1000);
    expect(crash.last_ts).toBe(mtime);
  });

  test("a rescan reads only what was appended; a partial last line waits for its newline", async () => {
    const p = path.join(dir, "grow.log");
    fs.writeFileSync(p, NOISE.repeat(100));
    const s = new LogScanner(4096);
    const first = await s.scan([source("grow.log")]);
    expect(first.bytesRead).toBe(NOISE.length * 100);
    fs.appendFileSync(p, "Segmentation fault (core dum");
    const second = await s.scan([source("grow.log")]);
    expect(second.bytesRead).toBe("Segmentation fault (core dum".length);
    expect(s.result()[0]!.count).toBe(0); // not a complete line yet
    fs.appendFileSync(p, "ped)\n");
    const third = await s.scan([source("grow.log")]);
    expect(third.bytesRead).toBe("Segmentation fault (core dumped)\n".length); // the partial line again, then the rest
    expect(s.result()[0]).toMatchObject({ count: 1, samples: [{ file: "grow.log", line: 101, text: "Segmentation fault (core dumped)" }] });
    const fourth = await s.scan([source("grow.log")]);
    expect(fourth.bytesRead).toBe(0);
  });

  test("a replaced (shorter) file is read again from byte 0", async () => {
    const p = path.join(dir, "rot.log");
    fs.writeFileSync(p, NOISE.repeat(5) + "NCCL error in: x\n");
    const s = new LogScanner();
    await s.scan([source("rot.log")]);
    fs.writeFileSync(p, "NCCL error in: y\n");
    await s.scan([source("rot.log")]);
    const nccl = s.result().find((x) => x.signal === "nccl_error")!;
    expect(nccl.count).toBe(2);
    expect(nccl.samples.map((x) => [x.line, x.text])).toEqual([
      [6, "NCCL error in: x"],
      [1, "NCCL error in: y"],
    ]);
  });

  test("a line longer than a chunk is judged on its first chunk and line numbers stay right", async () => {
    const p = path.join(dir, "long.log");
    fs.writeFileSync(p, `Traceback (most recent call last): ${"x".repeat(10_000)}\nok\nSegmentation fault\n`);
    const s = new LogScanner(1024);
    await s.scan([source("long.log")]);
    const crash = s.result()[0]!;
    expect(crash.count).toBe(2);
    expect(crash.samples.map((x) => x.line)).toEqual([1, 3]);
    expect(crash.samples[0]!.text.length).toBeLessThanOrEqual(401);
  });

  test("a multi-MB log is scanned in chunks; what is kept is O(signals), not O(file)", async () => {
    const p = path.join(dir, "big.log");
    const fd = fs.openSync(p, "w");
    const block = NOISE.repeat(1000); // ~130 kB
    let lines = 0;
    for (let i = 0; i < 64; i++) {
      fs.writeSync(fd, block);
      lines += 1000;
      fs.writeSync(fd, `[2026-12-01 22:${String(i % 60).padStart(2, "0")}:00] torch.OutOfMemoryError: CUDA out of memory (block ${i})\n`);
      lines++;
    }
    fs.closeSync(fd);
    const size = fs.statSync(p).size;
    expect(size).toBeGreaterThan(8_000_000);
    const s = new LogScanner(64 * 1024);
    const stats = await s.scan([source("big.log")]);
    expect(stats.bytesRead).toBe(size); // one pass, each byte once
    const oom = s.result().find((x) => x.signal === "oom")!;
    expect(oom.count).toBe(64);
    expect(oom.samples).toHaveLength(MAX_SAMPLES);
    expect(oom.samples.at(-1)!.line).toBe(lines);
    expect(oom.samples.at(-1)!.text).toContain("(block 63)");
    const kept = JSON.stringify(s.retained()).length;
    expect(kept).toBeLessThan(4096);
    // twice the file, same retained size (up to the digits of the counters)
    fs.appendFileSync(p, fs.readFileSync(p));
    await s.scan([source("big.log")]);
    expect(s.result().find((x) => x.signal === "oom")!.count).toBe(128);
    expect(Math.abs(JSON.stringify(s.retained()).length - kept)).toBeLessThan(64);
  });

  test("a file that cannot be opened is skipped, the others still count", async () => {
    fs.writeFileSync(path.join(dir, "b.log"), "Fatal Python error: Aborted\n");
    const s = new LogScanner();
    const stats = await s.scan([source("missing.log"), source("b.log")]);
    expect(stats.files).toBe(1);
    expect(s.result()[0]!.count).toBe(1);
  });
});
