/**
 * RunContext: everything a route needs to answer for one run — its directory, its
 * telemetry store and its dump reader — resolved from `?run=` (multi-run mode) or implied
 * (single-run mode). Stores are opened once per run and kept for the life of the process
 * (they hold their own bounded caches); caches go to the data dir, never the run dir.
 */
import crypto from "node:crypto";
import path from "node:path";
import { z } from "zod";
import { serverEnv } from "@/lib/env";
import { badRequest, notFound } from "@/lib/contracts/errors";
import { getDb } from "@/lib/server/db";
import { RunRegistry } from "@/lib/server/runs/registry";
import type { ScannedRun } from "@/lib/server/runs/scan";
import { openMetricStore, type MetricStore } from "@/lib/store/telemetry";
import { openDumpReader, type DumpReader } from "@/lib/store/dumps";

export interface RunSettings {
  follow: boolean;
  lowMfuThreshold: number;
  useUtilizationOverview: boolean;
}

export interface RunContext {
  id: string;
  dir: string;
  name: string;
  settings: RunSettings;
  store: MetricStore;
  dumps: DumpReader;
}

export const RunIdParam = z
  .string()
  .min(1, "run must not be empty")
  .max(1024, "run id too long")
  .regex(/^[^/\\\0]+$/, "run id must not contain '/' (use the id from /api/runs)");

const g = globalThis as unknown as {
  __rlboardRegistry?: { key: string; registry: RunRegistry };
  __rlboardRuns?: Map<string, RunContext>;
};

export function getRegistry(): RunRegistry {
  const env = serverEnv();
  const key = JSON.stringify([env.dataDir, env.dumpDetails, env.runsRoots]);
  if (!g.__rlboardRegistry || g.__rlboardRegistry.key !== key) {
    const mode = env.dumpDetails
      ? ({ kind: "single", dir: env.dumpDetails } as const)
      : ({ kind: "multi", roots: env.runsRoots } as const);
    g.__rlboardRegistry = { key, registry: new RunRegistry(getDb(), mode) };
    g.__rlboardRuns = new Map();
  }
  return g.__rlboardRegistry.registry;
}

/** Per-run cache folder under the data dir (hash keeps odd run ids out of file names). */
export function runCacheDir(run: ScannedRun): string {
  const h = crypto.createHash("sha256").update(run.realDir).digest("hex").slice(0, 16);
  return path.join(serverEnv().dataDir, "cache", h);
}

export function resolveRun(runId: string | undefined): ScannedRun {
  const registry = getRegistry();
  if (runId === undefined || runId === "") {
    const single = registry.single();
    if (single) return single;
    throw badRequest("run: required in multi-run mode (ids are listed by GET /api/runs)");
  }
  const id = RunIdParam.safeParse(runId);
  if (!id.success) throw badRequest(`run: ${id.error.issues[0]?.message ?? "invalid"}`);
  const run = registry.find(id.data);
  if (!run) throw notFound(`unknown run '${runId}' (ids are listed by GET /api/runs)`);
  return run;
}

export async function getRunOrThrow(runId: string | undefined): Promise<RunContext> {
  const run = resolveRun(runId);
  const runs = g.__rlboardRuns!;
  let ctx = runs.get(run.id);
  if (!ctx || ctx.dir !== run.realDir) {
    // A run whose directory moved gets fresh readers; the old one's file handles go now.
    void ctx?.dumps.close();
    const env = serverEnv();
    const cacheDir = runCacheDir(run);
    ctx = {
      id: run.id,
      dir: run.realDir,
      name: run.name,
      settings: {
        follow: env.follow,
        lowMfuThreshold: env.lowMfuThreshold,
        useUtilizationOverview: env.useUtilizationOverview,
      },
      store: openMetricStore(run.realDir, { follow: env.follow, cacheDir: path.join(cacheDir, "telemetry") }),
      dumps: openDumpReader(run.realDir, { cacheDir: path.join(cacheDir, "dumps"), tensorLru: env.tensorLru }),
    };
    runs.set(run.id, ctx);
  }
  return ctx;
}
