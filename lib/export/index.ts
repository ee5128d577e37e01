/**
 * Offline export (docs/export.md): a run → the report JSON and the self-contained HTML.
 * `exportRun` serves the route (the server's RunContext) and `exportRunDir` the CLI and
 * the bench (a run that is only a directory: readers opened on it with caches in a temp
 * dir removed afterwards, the way `npm run compare` opens runs).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Report, ReportOptions } from "@/lib/contracts/report";
import { buildReport, type ExportRun } from "@/lib/export/collect";
import { joinReportJson, renderReportHtml, reportJsonParts } from "@/lib/export/html";
import { openDumpReader } from "@/lib/store/dumps";
import { openMetricStore } from "@/lib/store/telemetry";

export { buildReport, pickSamples, type ExportRun } from "@/lib/export/collect";
export { readInlineReport, renderReportHtml, REPORT_CSP } from "@/lib/export/html";

export interface ExportResult {
  report: Report;
  json: string;
  html: string;
}

export async function exportRun(run: ExportRun, options: ReportOptions, now?: Date): Promise<ExportResult> {
  const report = await buildReport(run, options, now);
  const parts = reportJsonParts(report);
  return { report, json: joinReportJson(parts), html: await renderReportHtml(parts, report.run.name) };
}

/** Settings of a run opened from its directory (the server's defaults: docs/deploy.md). */
export const DIR_SETTINGS = { follow: false, lowMfuThreshold: 0.15, useUtilizationOverview: false } as const;

/**
 * Export a run directory (no server, no data dir). The readers' caches go to `cacheDir`
 * when given (kept: a later export of the same run reads the binary columns instead of
 * re-parsing its JSONL), else to a temp dir removed afterwards. Throws when `dir` is not a directory.
 */
export async function exportRunDir(dir: string, options: ReportOptions, opts: { now?: Date; cacheDir?: string } = {}): Promise<ExportResult> {
  const real = fs.realpathSync(dir);
  if (!fs.statSync(real).isDirectory()) throw new Error(`not a directory: ${dir}`);
  const keep = opts.cacheDir !== undefined;
  // a runtime path (the operator's cache dir), not a build input: not traced (#15 defect 12)
  const cache = keep ? path.resolve(/* turbopackIgnore: true */ opts.cacheDir!) : fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-export-"));
  const store = openMetricStore(real, { follow: false, cacheDir: path.join(cache, "telemetry") });
  const dumps = openDumpReader(real, { cacheDir: path.join(cache, "dumps") });
  try {
    const id = path.basename(real);
    return await exportRun({ id, name: store.meta()?.run_name ?? id, dir: real, store, dumps, settings: { ...DIR_SETTINGS } }, options, opts.now);
  } finally {
    await dumps.close();
    if (!keep) fs.rmSync(cache, { recursive: true, force: true });
  }
}
