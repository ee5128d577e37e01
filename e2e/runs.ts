/**
 * Runs a test made under the runs root are removed with `removeRuns`: the folders go, then
 * the server rescans once (`/api/runs?refresh=true`) and it fails if one is still listed. Without the
 * rescan the run list keeps them for up to a scan interval (lib/server/runs/registry.ts)
 * and drops them in the next spec's page, under its measurements (a row vanishing moves
 * every row below it — e2e/layout-stability.spec.ts saw exactly that).
 */
import fs from "node:fs";
import path from "node:path";
import { E2E } from "./env";

export async function removeRuns(...names: string[]): Promise<void> {
  for (const name of names) fs.rmSync(path.join(E2E.runsRoot, name), { recursive: true, force: true });
  const res = await fetch(new URL("/api/runs?refresh=true", E2E.baseURL), { headers: { Authorization: `Bearer ${E2E.token}` } });
  if (!res.ok) throw new Error(`GET /api/runs?refresh=true → ${res.status}`);
  const listed = ((await res.json()) as { runs: { id: string }[] }).runs.map((r) => r.id).filter((id) => names.includes(id));
  if (listed.length) throw new Error(`removed runs still listed after a rescan: ${listed.join(", ")}`);
}
