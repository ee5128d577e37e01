/**
 * `npm run compare` as CI runs it: a real process over run directories only (no server,
 * no data dir).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { GetCompareResponse } from "@/lib/contracts/compare";
import { RunBuilder } from "@/lib/store/telemetry/testing";
import { REPO_ROOT } from "@/lib/testing/fixtures";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-cli-compare-"));
const ARGS = { lr: 1e-6, rollout_batch_size: 32, optim: { beta2: 0.98 }, wandb_group: "a" };

function write(name: string, args: Record<string, unknown> | null, stepTime: number): string {
  const b = new RunBuilder(path.join(root, name));
  if (args) b.meta({ run_name: `Run ${name}`, start_ts: 1000, args });
  b.metrics(
    ...Array.from({ length: 6 }, (_, i) => ({
      ts: 1000 + i,
      step_key: "rollout/step",
      step: i,
      metrics: { "perf/step_time": stepTime + (i % 3), "rollout/raw_reward": 0.25 + 0.01 * i, "rollout/step": i },
    })),
  );
  return b.runDir;
}

function compare(args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", path.join(REPO_ROOT, "cli", "compare.ts"), ...args], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    env: { ...process.env, RLBOARD_DATA_DIR: path.join(root, "must-not-exist") },
  });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

let base: string, one: string, many: string, same: string, none: string;
beforeAll(() => {
  base = write("base", ARGS, 100);
  one = write("one", { ...ARGS, lr: 2e-6, wandb_group: "b" }, 80);
  many = write("many", { ...ARGS, lr: 2e-6, optim: { beta2: 0.95 } }, 100);
  same = write("same", { ...ARGS, wandb_group: "c" }, 100);
  none = write("none", null, 100);
});

describe("npm run compare", () => {
  it("prints the text report: verdict naming the one key, config delta, KPIs with Δ and %", () => {
    const r = compare([base, one]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("compare 2 runs, baseline 'base'");
    expect(r.out).toContain("verdict: single: only 'lr' differs");
    expect(r.out).toMatch(/^ {2}lr\s+0\.000001\s+0\.000002$/m);
    expect(r.out).toMatch(/wandb_group \(run name\)\s+a\s+b/);
    expect(r.out).toMatch(/Step time \(s\) \[perf\/step_time\]\s+median\s+101\s+81 \(-20, -19\.8%\)/);
    expect(r.out).toMatch(/movers[^\n]*\n.*\n {2}perf\/step_time\s+-13\.49/);
    expect(fs.existsSync(path.join(root, "must-not-exist"))).toBe(false);
  });

  it("--json prints the API body; several keys, none, and a run without args", () => {
    const r = compare([base, many, "--json"]);
    expect(r.code).toBe(0);
    const body = GetCompareResponse.parse(JSON.parse(r.out));
    expect(body.verdict).toMatchObject({ kind: "multiple", keys: ["lr", "optim.beta2"] });
    expect(body.runs.map((x) => x.name)).toEqual(["Run base", "Run many"]);
    expect(GetCompareResponse.parse(JSON.parse(compare([base, same, "--json"]).out)).verdict.kind).toBe("identical");
    const u = compare([none, base]);
    expect(u.code).toBe(0);
    expect(u.out).toContain("verdict: unknown: one run has no args snapshot");
  });

  it("exit 2 for fewer than 2 directories, 1 for a missing one", () => {
    const few = compare([base]);
    expect(few.code).toBe(2);
    expect(few.err).toContain("compare takes 2 to 8 run directories, got 1");
    const missing = compare([base, path.join(root, "nope")]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("no such run directory");
  });
});
