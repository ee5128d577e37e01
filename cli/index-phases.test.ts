/**
 * `npm run index-phases` as an operator types it: a real process over a real run directory.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openMetricStore } from "@/lib/store/telemetry";
import { makeTmpDir, phase, RunBuilder } from "@/lib/store/telemetry/testing";
import { REPO_ROOT } from "@/lib/testing/fixtures";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function indexPhases(...args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", path.join(REPO_ROOT, "cli", "index-phases.ts"), ...args], { cwd: REPO_ROOT, encoding: "utf8" });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

const H = 3600;
const T0 = 1_000_000 * H;

describe("npm run index-phases", () => {
  it("indexes a run written without one, says so, and finds it current the second time", async () => {
    const o = { node: "10.0.0.1", gpus: [0], rank: 0 };
    const b = new RunBuilder().phases(phase("train", T0 + 10, -1, o), phase("train", T0 + 10, T0 + H + 20, o), phase("x", T0 + 2 * H + 1, T0 + 2 * H + 2, o));
    dirs.push(b.runDir);
    const first = indexPhases(b.runDir);
    expect(first.err).toBe("");
    expect(first.code).toBe(0);
    expect(first.out).toMatch(new RegExp(`^${b.runDir}: indexed 3 of 3 phase hours, 0 already current \\(\\d+\\.\\d s\\)\\n$`));
    expect(fs.readdirSync(path.join(b.dash, "index/phases"))).toHaveLength(3);
    expect(fs.existsSync(path.join(b.dash, ".collector.lock"))).toBe(false);
    // a server reads the facts from the index: no hour parsed
    const store = openMetricStore(b.runDir, { follow: false, statIntervalMs: 0 });
    const facts = (await store.phaseHourFacts(await store.phases.files()))!;
    expect(facts.map((f) => f.open.length)).toEqual([1, 0, 0]); // hour 0's marker closes in hour 1
    expect((await store.phases.files()).every((f) => f.block === null)).toBe(true);

    expect(indexPhases(b.runDir).out).toContain("indexed 0 of 3 phase hours, 3 already current");
    b.phases(phase("y", T0 + 2 * H + 5, T0 + 2 * H + 6, o)); // the last hour grows
    expect(indexPhases(b.runDir).out).toContain("indexed 1 of 3 phase hours, 2 already current");
  });

  it("refuses a run a collector is writing, and a directory that is not a run", () => {
    const b = new RunBuilder().phases(phase("a", T0 + 1, T0 + 2));
    dirs.push(b.runDir);
    fs.writeFileSync(path.join(b.dash, ".collector.lock"), `${process.pid}\n`); // this process is alive
    const locked = indexPhases(b.runDir);
    expect(locked.code).toBe(1);
    expect(locked.err).toContain(`another collector (pid ${process.pid}) is writing`);
    expect(locked.err).toContain("it keeps the index itself");
    expect(fs.existsSync(path.join(b.dash, "index"))).toBe(false);
    expect(fs.readFileSync(path.join(b.dash, ".collector.lock"), "utf8")).toBe(`${process.pid}\n`);

    const empty = makeTmpDir();
    dirs.push(empty);
    const none = indexPhases(empty);
    expect(none.code).toBe(1);
    expect(none.err).toContain("no dashboard/phases/ here");
    expect(indexPhases().code).toBe(2);
  });
});
