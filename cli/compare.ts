/**
 * `npm run compare -- DIR_A DIR_B [DIR …] [--json]`: the compare report (docs/api.md
 * "GET /api/compare") for runs that are only directories — CI, a cluster login node. No
 * server and no data dir: caches go to a temp dir removed on exit. DIR_A is the baseline.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { compareRuns, MAX_COMPARE_RUNS, MIN_COMPARE_RUNS, type CompareRun } from "@/lib/compare/report";
import { reportText } from "@/lib/compare/text";
import { jsonSafeStringify } from "@/lib/api/json";
import { openDumpReader, type DumpReader } from "@/lib/store/dumps";
import { openMetricStore } from "@/lib/store/telemetry";
import { fail, parseCli } from "./common";

const HELP = `usage: npm run compare -- DIR_A DIR_B [DIR ...] [--json] [--movers N]
  Compare ${MIN_COMPARE_RUNS}-${MAX_COMPARE_RUNS} run directories (DIR_A is the baseline): verdict, config delta,
  KPI table, availability change, movers. --json prints the GET /api/compare body.`;

function hasJsonl(dir: string): boolean {
  try {
    return fs.readdirSync(dir).some((f) => f.endsWith(".jsonl"));
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseCli(
    process.argv.slice(2),
    { json: { type: "boolean" }, movers: { type: "string" }, help: { type: "boolean", short: "h" } },
    true,
  );
  if (values.help) {
    process.stdout.write(HELP + "\n");
    return;
  }
  if (positionals.length < MIN_COMPARE_RUNS || positionals.length > MAX_COMPARE_RUNS)
    fail(`compare takes ${MIN_COMPARE_RUNS} to ${MAX_COMPARE_RUNS} run directories, got ${positionals.length}\n${HELP}`, 2);
  const moversLimit = values.movers === undefined ? 20 : Number(values.movers);
  if (!Number.isInteger(moversLimit) || moversLimit < 0) fail(`--movers must be a non-negative integer`, 2);
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-compare-"));
  const ids = new Map<string, number>();
  const readers: DumpReader[] = [];
  const runs: CompareRun[] = positionals.map((p, i) => {
    const dir = path.resolve(p);
    let st: fs.Stats;
    try {
      st = fs.statSync(dir);
    } catch {
      fail(`no such run directory: ${p}`);
    }
    if (!st.isDirectory()) fail(`not a directory: ${p}`);
    const real = fs.realpathSync(dir);
    let id = path.basename(real);
    const seen = ids.get(id) ?? 0;
    ids.set(id, seen + 1);
    if (seen) id = `${id}#${seen + 1}`;
    const store = openMetricStore(real, { follow: false, cacheDir: path.join(cache, String(i), "telemetry") });
    const dumps = openDumpReader(real, { cacheDir: path.join(cache, String(i), "dumps") });
    readers.push(dumps);
    return {
      id,
      name: store.meta()?.run_name ?? id,
      store,
      dumps,
      hasTrajectories: hasJsonl(path.join(real, "trajectory")) || hasJsonl(path.join(real, "dashboard", "trajectories")),
    };
  });
  try {
    const report = await compareRuns(runs);
    process.stdout.write(values.json ? jsonSafeStringify(report) + "\n" : reportText(report, { moversLimit }));
  } finally {
    for (const d of readers) await d.close();
    fs.rmSync(cache, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => fail(err instanceof Error ? err.message : String(err)));
