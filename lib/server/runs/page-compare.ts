import "server-only";
/**
 * The compare page's data (README "Comparing runs"): the session check first
 * (requirePageUser, like page-run.ts), then the same report `GET /api/compare` answers,
 * with the API's errors (bad `runs`, unknown or restricted run) as a message for the page.
 */
import { ApiError } from "@/lib/contracts/errors";
import type { CompareReport } from "@/lib/compare/report";
import { getCompare } from "@/lib/server/runs/compare";
import { runArgs, type ArgCell } from "@/lib/server/runs/run-args";
import { getRunOrThrow, resolveRun } from "@/lib/server/runs/context";
import { getPageRunOrNotFound } from "@/lib/server/runs/page-run";
import type { ScannedRun } from "@/lib/server/runs/scan";
import { wandbUrl } from "@/lib/timeline/meta";
import { requirePageUser, type PageUser } from "@/lib/server/session";

export interface PageCompare {
  user: PageUser;
  report: CompareReport | null;
  error: { status: number; message: string } | null;
  /** Any of the runs written to in the last minute (the page then refetches). */
  live: boolean;
}

export async function getPageCompare(runs: string, view: string, x: string): Promise<PageCompare> {
  const qs = new URLSearchParams({ runs, ...(view ? { view } : {}), ...(x ? { x } : {}) });
  const user = await requirePageUser(`/compare?${qs.toString()}`);
  try {
    const report = await getCompare(runs, user);
    const live = report.runs.some((r) => {
      try {
        return resolveRun(r.id).live;
      } catch {
        return false;
      }
    });
    return { user, report: JSON.parse(JSON.stringify(report)) as CompareReport, error: null, live };
  } catch (err) {
    if (ApiError.is(err)) return { user, report: null, error: { status: err.status, message: err.message }, live: false };
    throw err;
  }
}

/**
 * For the run header (app/(dashboard)/runs/[runId]/layout.tsx): the run (session checked
 * first by getPageRunOrNotFound), its args snapshot as dotted paths and the wandb link
 * that `/api/meta` also returns.
 */
export async function getPageRunHeader(runId: string): Promise<{ run: ScannedRun; args: Record<string, ArgCell> | null; wandbUrl: string | null }> {
  const run = await getPageRunOrNotFound(runId);
  const ctx = await getRunOrThrow(run.id);
  const meta = ctx.store.meta();
  return { run, args: runArgs(run.realDir), wandbUrl: meta ? wandbUrl(meta.args) : null };
}
