import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFleetRun, type FleetRunOptions } from "./fleet";

// A streamed fleet run (written step by step, for runs too long to simulate whole) holds the
// same schedule as the unstreamed one of the same seed: only the noise draws differ. 8 nodes:
// the stall at the end wedges engine 6.
const base: Omit<FleetRunOptions, "name"> = { endTs: 1_764_000_000, hours: 1, seed: 7, nodes: 8, scrapeIntervalS: 2, stall: true };
let root: string;
const dirs = { whole: "", streamed: "", again: "" };

function lines(runDir: string, stream: string): string[] {
  const d = path.join(runDir, "dashboard", stream);
  const flat = `${d}.jsonl`; // metrics, topology: one file, not hourly partitions
  if (fs.existsSync(flat)) return fs.readFileSync(flat, "utf8").split("\n").filter(Boolean);
  return fs
    .readdirSync(d)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .flatMap((f) => fs.readFileSync(path.join(d, f), "utf8").split("\n").filter(Boolean));
}

function treeHash(dir: string): string {
  const h = crypto.createHash("sha256");
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, e.name);
      const rel = path.relative(dir, p);
      if (e.isDirectory()) walk(p);
      else if (rel.includes(`index${path.sep}phases`)) {
        // a phase hour index (docs/formats.md §4.16) carries its hour file's mtime: the rest must repeat
        const { mtimeMs: _t, ...rest } = JSON.parse(fs.readFileSync(p, "utf8")) as { mtimeMs: number };
        h.update(rel).update(JSON.stringify(rest));
      } else h.update(rel).update(fs.readFileSync(p));
    }
  };
  walk(dir);
  return h.digest("hex");
}

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-fleet-"));
  for (const k of Object.keys(dirs) as (keyof typeof dirs)[]) dirs[k] = path.join(root, k);
  await writeFleetRun(dirs.whole, { ...base, name: "f" });
  const progress: number[] = [];
  await writeFleetRun(dirs.streamed, { ...base, name: "f", stream: true, onProgress: (f) => progress.push(f) });
  await writeFleetRun(dirs.again, { ...base, name: "f", stream: true });
  // Streaming writes as it goes: progress is reported per step, never backwards.
  expect(progress.length).toBeGreaterThan(10);
  expect(progress.every((f, i) => i === 0 || f >= progress[i - 1]!)).toBe(true);
  expect(progress.at(-1)).toBe(1);
}, 60_000);

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe("writeFleetRun stream", () => {
  it("writes the same bytes on every run of the same seed", () => {
    expect(treeHash(dirs.streamed)).toBe(treeHash(dirs.again));
    // closed: every phase hour has its index
    const dash = path.join(dirs.streamed, "dashboard");
    expect(fs.readdirSync(path.join(dash, "index", "phases")).sort()).toEqual(fs.readdirSync(path.join(dash, "phases")).map((n) => n.replace(".jsonl", ".json")).sort());
  });

  it("keeps every phase, open marker and metrics record of the whole-run simulation", () => {
    for (const stream of ["phases", "metrics", "topology"]) {
      const whole = lines(dirs.whole, stream);
      expect(whole.length).toBeGreaterThan(stream === "topology" ? 0 : 30);
      // Arrival order of phase closings depends on the delay draws; the records do not.
      expect([...lines(dirs.streamed, stream)].sort()).toEqual([...whole].sort());
    }
    const open = lines(dirs.streamed, "phases").filter((l) => (JSON.parse(l) as { t1: number }).t1 === -1);
    expect(open.length).toBeGreaterThan(0);
  });

  it("samples every GPU every second and integrates the same engine counters", () => {
    const key = (l: string) => {
      const r = JSON.parse(l) as { ts: number; node: string; gpu: number };
      return `${r.node}:${r.gpu}@${Math.floor(r.ts)}`;
    };
    const whole = lines(dirs.whole, "gpu_util");
    expect(whole.length).toBeGreaterThan(64 * 3000);
    expect(lines(dirs.streamed, "gpu_util").map(key).sort()).toEqual(whole.map(key).sort());
    const counter = (dir: string) =>
      lines(dir, "engine_series")
        .map((l) => JSON.parse(l) as { metric: string; value: number })
        .filter((r) => r.metric === "sglang_num_requests_total" || r.metric === "sglang_num_aborted_requests_total")
        .map((r) => `${r.metric}=${r.value}`);
    const w = counter(dirs.whole);
    expect(new Set(w).size).toBeGreaterThan(50);
    expect(counter(dirs.streamed)).toEqual(w);
  });
});
