import "server-only";
/**
 * The only way pages and layouts reach run data. Each function checks the session first
 * (requirePageUser: signature, expiry, user, generation), so no server component reads a
 * run before its own request was authenticated — Next renders a layout and its page side
 * by side, and an RSC payload carries whatever any of them read.
 */
import { notFound } from "next/navigation";
import { ApiError } from "@/lib/contracts/errors";
import type { GetRunsResponse } from "@/lib/contracts/runs";
import { listRunsJudging } from "@/lib/server/runs/list-runs";
import { getDb } from "@/lib/server/db";
import { getRunOrThrow, resolveRun, type RunContext } from "@/lib/server/runs/context";
import { noteRunOpened } from "@/lib/server/runs/recent";
import type { ScannedRun } from "@/lib/server/runs/scan";
import { requirePageUser, type PageUser } from "@/lib/server/session";

function runPath(runId: string): string {
  return `/runs/${encodeURIComponent(runId)}`;
}

/** For run pages: the run behind the `[runId]` segment, or Next's 404 page. */
export async function getPageRunOrNotFound(runId: string): Promise<ScannedRun> {
  let id: string;
  try {
    id = decodeURIComponent(runId);
  } catch {
    notFound();
  }
  await requirePageUser(runPath(id));
  let run: ScannedRun;
  try {
    run = resolveRun(id);
  } catch (err) {
    if (ApiError.is(err) && (err.code === "not_found" || err.code === "bad_request")) notFound();
    throw err;
  }
  noteRunOpened(getDb(), run.id);
  return run;
}

export async function getPageRunContext(runId: string): Promise<RunContext> {
  const run = await getPageRunOrNotFound(runId);
  return getRunOrThrow(run.id);
}

/** The run list for a page, after the session check. */
export async function getPageRuns(next = "/"): Promise<{ user: PageUser; runs: GetRunsResponse }> {
  const user = await requirePageUser(next);
  return { user, runs: listRunsJudging() };
}
