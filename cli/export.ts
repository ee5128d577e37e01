/**
 * `npm run export -- --dump-details DIR --out report.html [--json report.json] [--steps A-B]
 * [--samples-per-step N] [--max-lanes N]`: the offline report of a run directory
 * (docs/export.md) — one self-contained HTML file and, with --json, the same data as one
 * versioned JSON object. No server and no data dir (caches go to a temp dir).
 */
import fs from "node:fs";
import path from "node:path";
import { EXPORT_LIMITS, ExportQuery, reportOptions } from "@/lib/contracts/report";
import { exportRunDir } from "@/lib/export";
import { fail, parseCli } from "./common";

const HELP = `usage: npm run export -- --dump-details DIR --out report.html [--json report.json]
                          [--steps A-B] [--samples-per-step N] [--max-lanes N]
  Write the run's offline report: one HTML file that opens from file:// with no network,
  and (--json) its data as one "rlboard.report/1" object.
  --steps A-B            train steps to export (inclusive; default: all, at most the latest ${EXPORT_LIMITS.steps})
  --samples-per-step N   samples per step with conversation and tokens (0-${EXPORT_LIMITS.samples_per_step}, default 4:
                         best, worst, median, most drifting)
  --max-lanes N          GPU lanes drawn one by one (1-${EXPORT_LIMITS.max_lanes}, default 64); more: the fleet overview
  --cache-dir DIR        keep the readers' caches here (a later export of the run is faster); default: a temp dir`;

async function main(): Promise<void> {
  const { values } = parseCli(process.argv.slice(2), {
    "dump-details": { type: "string" },
    out: { type: "string" },
    json: { type: "string" },
    steps: { type: "string" },
    "samples-per-step": { type: "string" },
    "max-lanes": { type: "string" },
    "cache-dir": { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    process.stdout.write(HELP + "\n");
    return;
  }
  const dir = values["dump-details"];
  if (!dir) fail(`--dump-details DIR is required\n${HELP}`, 2);
  if (!values.out && !values.json) fail(`--out FILE (and/or --json FILE) is required\n${HELP}`, 2);
  const q = ExportQuery.safeParse({
    ...(values.steps !== undefined ? { steps: values.steps } : {}),
    ...(values["samples-per-step"] !== undefined ? { samples_per_step: values["samples-per-step"] } : {}),
    ...(values["max-lanes"] !== undefined ? { max_lanes: values["max-lanes"] } : {}),
  });
  if (!q.success) fail(q.error.issues.map((i) => i.message).join("; "), 2);
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch {
    fail(`no such run directory: ${dir}`);
  }
  if (!st.isDirectory()) fail(`not a directory: ${dir}`);
  const t = performance.now();
  const { report, json, html } = await exportRunDir(dir, reportOptions(q.data), values["cache-dir"] ? { cacheDir: values["cache-dir"] } : {});
  const written: string[] = [];
  if (values.out) {
    fs.mkdirSync(path.dirname(path.resolve(values.out)), { recursive: true });
    fs.writeFileSync(values.out, html);
    written.push(`${values.out} (${(Buffer.byteLength(html) / 1e6).toFixed(2)} MB)`);
  }
  if (values.json) {
    fs.mkdirSync(path.dirname(path.resolve(values.json)), { recursive: true });
    fs.writeFileSync(values.json, json + "\n");
    written.push(`${values.json} (${(Buffer.byteLength(json) / 1e6).toFixed(2)} MB)`);
  }
  const steps = Object.keys(report.rollout).length;
  process.stderr.write(`rlboard: exported ${report.run.name}: ${steps} step${steps === 1 ? "" : "s"} in ${((performance.now() - t) / 1000).toFixed(1)} s → ${written.join(", ")}\n`);
  for (const i of report.incomplete) process.stderr.write(`rlboard: incomplete: ${i.what}: ${i.reason}\n`);
}

main().catch((err: unknown) => fail(err instanceof Error ? err.message : String(err)));
