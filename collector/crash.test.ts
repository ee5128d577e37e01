/**
 * SIGKILL mid-run: the lock goes stale and a file may end in a torn line.
 * A crash cannot be timed to land inside write(2) deterministically, so the
 * torn tail it would leave is appended by hand after the kill. Contract: a
 * reader (complete lines only) loses nothing but the partial line, and the
 * restarted collector truncates the torn tail before appending, so no line
 * is ever glued onto garbage.
 */
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePyJson } from "@/lib/store/format";
import { STREAM_SCHEMAS } from "@/lib/store/format";
import { spawnCollector, waitFor } from "./testing/child-collector";
import { completeLines, postJson } from "./testing/http";

let dump: string;
beforeAll(() => {
  dump = mkdtempSync(join(tmpdir(), "rlb-crash-"));
});
afterAll(() => rmSync(dump, { recursive: true, force: true }));

// Fixed 2025 timestamps (their hour file is named below): no clock-skew check.
const ARGS = () => ["--dump-details", dump, "--gpu-source", "none", "--flush-interval", "0.2", "--max-clock-skew", "0"];
const metric = (i: number) => ({ ts: 1755000000 + i, step_key: "train/step", step: i, metrics: { "train/loss": 1 / (i + 1), "train/step": i } });
const phase = (i: number) => ({ name: "actor_train", t0: 1755000000 + i, t1: 1755000000.5 + i, node: "10.0.0.2", gpus: [3], rank: 3, role: "train" });

describe("crash recovery", () => {
  it("after SIGKILL and a torn last line, readers and the next collector lose only the partial line", async () => {
    const dash = join(dump, "dashboard");
    const metricsFile = join(dash, "metrics.jsonl");
    const phasesFile = join(dash, "phases/20250812_12.jsonl");

    const first = await spawnCollector(ARGS());
    await postJson(`${first.url}/v1/metrics`, { records: Array.from({ length: 100 }, (_, i) => metric(i)) });
    await postJson(`${first.url}/v1/phases`, { records: Array.from({ length: 100 }, (_, i) => phase(i)) });
    await waitFor(() => existsSync(phasesFile) && completeLines(readFileSync(phasesFile, "utf8")).length === 100, 10_000, "first flush");
    first.proc.kill("SIGKILL");
    expect((await first.exited).signal).toBe("SIGKILL");
    expect(existsSync(join(dash, ".collector.lock"))).toBe(true); // stale

    appendFileSync(metricsFile, '{"ts":1755000100.0,"step_key":"train/st');
    appendFileSync(phasesFile, '{"name":"actor_tr');
    // A reader sees every complete line and nothing of the torn one.
    expect(completeLines(readFileSync(metricsFile, "utf8"))).toHaveLength(100);

    const second = await spawnCollector(ARGS());
    expect(second.stderr()).toMatch(/took over a stale lock of pid \d+/);
    await postJson(`${second.url}/v1/metrics`, { records: Array.from({ length: 50 }, (_, i) => metric(100 + i)) });
    await postJson(`${second.url}/v1/phases`, { records: [phase(100)] });
    second.proc.kill("SIGTERM");
    expect((await second.exited).code).toBe(0);
    expect(second.stderr()).toMatch(/metrics\.jsonl: discarded a torn last line \(39 bytes/);
    expect(second.stderr()).toMatch(/phases\/20250812_12\.jsonl: discarded a torn last line \(17 bytes/);

    for (const [file, schema, n] of [
      [metricsFile, STREAM_SCHEMAS.metrics, 150],
      [phasesFile, STREAM_SCHEMAS.phases, 101],
    ] as const) {
      const text = readFileSync(file, "utf8");
      expect(text.endsWith("\n")).toBe(true);
      const lines = completeLines(text);
      expect(lines).toHaveLength(n);
      for (const l of lines) expect(schema.safeParse(parsePyJson(l)).success, l).toBe(true);
    }
    const steps = completeLines(readFileSync(metricsFile, "utf8")).map((l) => (JSON.parse(l) as { step: number }).step);
    expect(steps).toEqual(Array.from({ length: 150 }, (_, i) => i));
  });
});
