import "server-only";
/**
 * `GET /api/export?run=…` (docs/export.md "From the UI"): the offline report of a run as
 * a download. withApi has already refused users who may not read a restricted run's
 * trajectories (the same guard as every trajectory route); here the export is audited —
 * one `trajectory_audit` row per sample whose conversation or tokens the file carries,
 * the same rows an open of that sample in the UI writes (lib/server/auth/run-access.ts).
 */
import { reportOptions, type GetExportQuery } from "@/lib/contracts/report";
import { exportRun, type ExportRun } from "@/lib/export";
import type { AuthUser } from "@/lib/server/auth/request-auth";
import { recordTrajectoryView } from "@/lib/server/auth/run-access";
import { getDb } from "@/lib/server/db";

/** A file name made of the run id's safe characters. */
export function exportFileName(runId: string, ext: "html" | "json"): string {
  const base = runId.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^[._]+/, "").slice(0, 100) || "run";
  return `${base}-report.${ext}`;
}

export async function exportForUser(run: ExportRun, user: AuthUser, q: GetExportQuery): Promise<Response> {
  const { report, json, html } = await exportRun(run, reportOptions(q));
  const db = getDb();
  const tx = db.transaction(() => {
    for (const [step, samples] of Object.entries(report.samples))
      for (const s of samples) {
        const where = { user_name: user.name, run_id: run.id, step: Number(step), sample: s.sample_index };
        if (s.messages) recordTrajectoryView(db, { ...where, kind: "messages" });
        if (s.tokens) recordTrajectoryView(db, { ...where, kind: "tokens" });
      }
  });
  tx();
  const body = q.format === "json" ? json : html;
  return new Response(body, {
    headers: {
      "content-type": q.format === "json" ? "application/json; charset=utf-8" : "text/html; charset=utf-8",
      "content-disposition": `attachment; filename="${exportFileName(run.id, q.format)}"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}
