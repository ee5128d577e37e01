/**
 * The numeric arrays of large answers must be "packed" in V8's sense: JSON.stringify writes
 * those on its fast path, and a holey one (made by `new Array(n)`, however it is filled)
 * costs ~2× for doubles and ~4× for small integers (#20; `packedNumbers` in
 * lib/timeline/downsample.ts).
 * Nothing in the output shows the difference, so a child Node with `--allow-natives-syntax`
 * asks V8 itself (%HasHoleyElements) about the arrays each producer returns; a holey array
 * built on purpose shows that the question can answer yes.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeTmpDir } from "@/lib/store/telemetry/testing";

const ROOT = path.resolve(import.meta.dirname, "../..");
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

const SCRIPT = `
import { RunBuilder } from "@/lib/store/telemetry/testing";
import { openMetricStore } from "@/lib/store/telemetry";
import { gpuSeries } from "@/lib/timeline/gpu";
import { engineSeries } from "@/lib/timeline/engine";
import { fleet } from "@/lib/timeline/heatmap";
import { pickNumbers } from "@/lib/timeline/downsample";
const holey = new Function("a", "return %HasHoleyElements(a)") as (a: unknown[]) => boolean;
const rows = Array.from({ length: 4000 }, (_, i) => ({ ts: 100 + Math.floor(i / 4) + 0.25, node: "n" + (i % 2), gpu: i % 4, util: (i * 7) % 101, mem_mb: 1000 + i, power_w: 100 + (i % 300) }));
const eng = Array.from({ length: 3000 }, (_, i) => ({ ts: 100 + i * 0.5, addr: "http://e:1", metric: "sglang_num_running_reqs", value: i % 17 }));
const b = new RunBuilder(process.argv[2]).gpu(...rows).engine(...eng);
const store = openMetricStore(b.runDir, { follow: false, statIntervalMs: 0 });
const out: Record<string, boolean> = {};
const control = new Array<number>(3);
for (let i = 0; i < 3; i++) control[i] = i + 0.5;
out.control = holey(control);
for (const [maxPoints, tag] of [[4000, "all"], [100, "downsampled"]] as const) {
  const lanes = await gpuSeries(store, null, null, maxPoints, null);
  for (const [k, s] of Object.entries(lanes)) for (const [f, a] of Object.entries(s)) out[\`gpu \${tag} \${k} \${f}\`] = holey(a as unknown[]);
  for (const s of await engineSeries(store, "sglang_num_running_reqs", null, null, maxPoints, false)) {
    out[\`engine \${tag} ts\`] = holey(s.ts);
    out[\`engine \${tag} value\`] = holey(s.value);
  }
}
const f = await fleet(store, 100, 1100, 50);
for (const [k, a] of Object.entries(f.band)) out["fleet band " + k] = holey(a as unknown[]);
out["pickNumbers all"] = holey(pickNumbers(new Float64Array([1.5, 2.5, 3.5]), null));
out["pickNumbers idx"] = holey(pickNumbers(new Float64Array([1.5, 2.5, 3.5]), [0, 2]));
process.stdout.write(JSON.stringify(out));
`;

describe("answers' numeric arrays are packed (JSON.stringify's fast path)", () => {
  it("gpu lanes, engine series and the fleet band; a holey control shows as holey", () => {
    const dir = makeTmpDir("rlboard-packed-");
    dirs.push(dir);
    const script = path.join(dir, "probe.mts");
    fs.writeFileSync(script, SCRIPT);
    const stdout = execFileSync(process.execPath, ["--allow-natives-syntax", "--import", "tsx", script, path.join(dir, "run")], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
    });
    const out = JSON.parse(stdout) as Record<string, boolean>;
    expect(out.control).toBe(true);
    const checked = Object.entries(out).filter(([k]) => k !== "control");
    // 4 lanes (gpu i % 4 on node i % 2) × 4 fields × 2 sizes + 4 engine arrays + 4 band arrays + 2 pickNumbers
    expect(checked.length).toBe(4 * 4 * 2 + 4 + 4 + 2);
    expect(checked.filter(([, v]) => v).map(([k]) => k)).toEqual([]);
  });
});
