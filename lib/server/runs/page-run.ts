import "server-only";
import { notFound } from "next/navigation";
import { ApiError } from "@/lib/api/errors";
import { getRunOrThrow, resolveRun, type RunContext } from "@/lib/server/runs/context";
import type { ScannedRun } from "@/lib/server/runs/scan";

/** For run pages: the run behind the `[runId]` segment, or Next's 404 page. */
export function getPageRunOrNotFound(runId: string): ScannedRun {
  try {
    return resolveRun(decodeURIComponent(runId));
  } catch (err) {
    if (ApiError.is(err) && (err.code === "not_found" || err.code === "bad_request")) notFound();
    throw err;
  }
}

export async function getPageRunContext(runId: string): Promise<RunContext> {
  const run = getPageRunOrNotFound(runId);
  return getRunOrThrow(run.id);
}
