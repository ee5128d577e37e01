import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compareRuns } from "@/lib/compare/report";
import { openDumpReader } from "@/lib/store/dumps";
import { openMetricStore } from "@/lib/store/telemetry";
import { RunBuilder } from "@/lib/store/telemetry/testing";
import { ABLATION_KEY, ABLATION_RUN, writeAblationRun } from "./ablation";
import { QWEN_RUN, qwenArgs } from "./qwen";

describe("demo ablation run", () => {
  it("differs from the Qwen demo's args in exactly one key, and is finished", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-ablation-"));
    const now = 1_760_000_000;
    const end = await writeAblationRun(root, now, 7);
    expect(end).toBeLessThan(now - 3600);
    const base = new RunBuilder(path.join(root, QWEN_RUN)).meta({ run_name: QWEN_RUN, start_ts: 0, args: qwenArgs() });
    const open = (dir: string, id: string) => ({ id, name: id, store: openMetricStore(dir, { follow: false }), dumps: openDumpReader(dir) });
    const r = await compareRuns([open(base.runDir, QWEN_RUN), open(path.join(root, ABLATION_RUN), ABLATION_RUN)]);
    expect(r.verdict).toMatchObject({ kind: "single", keys: [ABLATION_KEY] });
    expect(r.config_delta.find((d) => d.key === ABLATION_KEY)!.values).toEqual([0.85, 0.9]);
    const m = await openMetricStore(path.join(root, ABLATION_RUN), { follow: false }).metrics();
    expect(m.map((x) => x.step)).toEqual(Array.from({ length: 16 }, (_, i) => i));
    fs.rmSync(root, { recursive: true, force: true });
  });
});
