import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { describeRun } from "@/lib/server/runs/scan";

const roots: string[] = [];
function runWithMeta(text: string): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-scan-"));
  roots.push(root);
  fs.mkdirSync(path.join(root, "r1", "dashboard"), { recursive: true });
  fs.writeFileSync(path.join(root, "r1", "dashboard", "meta.json"), text);
  return root;
}
afterEach(() => {
  for (const r of roots.splice(0)) fs.rmSync(r, { recursive: true, force: true });
});

describe("describeRun reads meta.json through the format's tolerant reader", () => {
  it("keeps NaN/Infinity inside strings as written and accepts bare NaN in args", () => {
    const root = runWithMeta('{\n "run_name": "NaN Infinity sweep",\n "start_ts": 1755000000.5,\n "args": {\n  "lr": NaN,\n  "clip": -Infinity\n },\n "schema_version": 1\n}');
    const run = describeRun(root, "r1");
    expect(run.name).toBe("NaN Infinity sweep");
    expect(run.firstTs).toBe(1755000000.5);
  });

  it("falls back to the folder name for a half-written file and ignores a NaN start", () => {
    expect(describeRun(runWithMeta('{\n "run_name": "half'), "r1").name).toBe("r1");
    const run = describeRun(runWithMeta('{"run_name": "x", "start_ts": NaN, "args": {}, "schema_version": 1}'), "r1");
    expect(run.name).toBe("x");
    expect(run.firstTs).not.toBeNaN();
  });
});
