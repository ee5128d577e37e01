/**
 * Server side of `GET /api/compare` and the compare page (docs/api.md "GET /api/compare"):
 * parse `runs=`, resolve every id through the run registry like `?run=` (404 naming the
 * unknown id), refuse runs the user may not read, then build the report.
 *
 * "May not read" for compare: the run is restricted (`users restrict`) and the user is
 * neither an admin nor listed for it — the trajectory rule (run-access.ts). A comparison
 * puts one run's numbers next to another's, so restricted runs are compare-able only by
 * those who may read them.
 */
import { badRequest, forbidden } from "@/lib/contracts/errors";
import { compareRuns, MAX_COMPARE_RUNS, MIN_COMPARE_RUNS, type CompareReport } from "@/lib/compare/report";
import type { Role } from "@/lib/server/auth/users";
import { canReadTrajectories } from "@/lib/server/auth/run-access";
import { getDb } from "@/lib/server/db";
import { getRunOrThrow, resolveRun } from "@/lib/server/runs/context";

/** `A,B,…` → ids (400 for fewer than 2, more than 8, empty items or repeats). */
export function parseCompareRuns(runs: string): string[] {
  if (runs.trim() === "") throw badRequest(`runs: required, ${MIN_COMPARE_RUNS} to ${MAX_COMPARE_RUNS} comma-separated run ids`);
  const ids = runs.split(",").map((s) => s.trim());
  if (ids.some((s) => s === "")) throw badRequest("runs: must be 2–8 comma-separated run ids without empty items");
  if (ids.length < MIN_COMPARE_RUNS || ids.length > MAX_COMPARE_RUNS)
    throw badRequest(`runs: lists ${ids.length} run(s); compare takes ${MIN_COMPARE_RUNS} to ${MAX_COMPARE_RUNS}`);
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) throw badRequest(`runs: '${id}' is listed twice`);
    seen.add(id);
  }
  return ids;
}

export async function getCompare(runs: string, user: { name: string; role: Role }): Promise<CompareReport> {
  const ids = parseCompareRuns(runs);
  const scanned = ids.map((id) => resolveRun(id));
  const db = getDb();
  for (const r of scanned)
    if (!canReadTrajectories(db, r.id, user))
      throw forbidden(`run '${r.id}' is restricted: ask an admin to add '${user.name}' to it before comparing it`);
  const ctxs = await Promise.all(scanned.map((r) => getRunOrThrow(r.id)));
  return compareRuns(ctxs.map((c, i) => ({ id: c.id, name: c.name, store: c.store, dumps: c.dumps, hasTrajectories: scanned[i]!.hasTrajectories })));
}
