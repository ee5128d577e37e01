/**
 * The run index: scans the runs roots (or the single --dump-details run), mirrors the
 * result into the `runs` table, and answers lookups by id. Rescans at most every
 * SCAN_INTERVAL_S on access, or on demand. Lookups only ever return directories found by
 * the scan, so an id from a URL can never name a path outside the roots.
 *
 * A run is identified by its real directory: when symlinks make one directory reachable
 * under several ids (`ln -s secret-run alias`), only one id is listed — the one that is
 * not a symlink, else the first in sort order — so restrictions and the audit, which are
 * keyed by id, cannot be sidestepped through an alias.
 *
 * An id that is not in the index is looked up directly (the one path it names, a few stat
 * calls), so a run created a moment ago answers at once; a full rescan happens at most
 * once every MIN_RESCAN_MS whatever the traffic, so a flood of unknown ids costs one scan
 * per window. Lookups happen only after the request was authenticated (withApi, page-run.ts).
 */
import fs from "node:fs";
import path from "node:path";
import type { Db } from "@/lib/server/db";
import { decodeRunId } from "@/lib/server/runs/run-id";
import { describeRun, isInside, lookupRun, scanRoot, type ScannedRun } from "@/lib/server/runs/scan";

export const SCAN_INTERVAL_S = 10;
export const MIN_RESCAN_MS = 3_000;

export type RegistryMode = { kind: "single"; dir: string } | { kind: "multi"; roots: string[] };

export class RunRegistry {
  private lastScanMs = 0;
  private runs = new Map<string, ScannedRun>();

  constructor(
    private readonly db: Db,
    readonly mode: RegistryMode,
  ) {}

  scan(nowMs = Date.now()): ScannedRun[] {
    let found: ScannedRun[];
    if (this.mode.kind === "single") {
      const dir = this.mode.dir;
      found = [describeRun(path.dirname(dir), path.basename(dir), nowMs)];
    } else {
      const seen = new Set<string>();
      found = [];
      for (const root of this.mode.roots) {
        for (const run of scanRoot(root, nowMs)) {
          // Two roots holding the same relative path: the first root wins (documented).
          if (seen.has(run.id)) continue;
          seen.add(run.id);
          found.push(run);
        }
      }
    }
    found = uniqueByRealDir(found);
    this.runs = new Map(found.map((r) => [r.id, r]));
    this.lastScanMs = nowMs;
    this.persist(found, nowMs / 1000);
    return found;
  }

  private persist(found: ScannedRun[], nowS: number): void {
    const upsert = this.db.prepare(
      `INSERT INTO runs (id, root, rel_path, name, first_ts, last_ts, steps, has_timeline, has_dumps, has_trajectories, live, seen_at)
       VALUES (@id, @root, @relPath, @name, @firstTs, @lastTs, @steps, @hasTimeline, @hasDumps, @hasTrajectories, @live, @seenAt)
       ON CONFLICT(id) DO UPDATE SET root=excluded.root, rel_path=excluded.rel_path, name=excluded.name,
         first_ts=excluded.first_ts, last_ts=excluded.last_ts, steps=excluded.steps, has_timeline=excluded.has_timeline,
         has_dumps=excluded.has_dumps, has_trajectories=excluded.has_trajectories, live=excluded.live, seen_at=excluded.seen_at`,
    );
    this.db.transaction(() => {
      for (const r of found) {
        upsert.run({
          ...r,
          hasTimeline: r.hasTimeline ? 1 : 0,
          hasDumps: r.hasDumps ? 1 : 0,
          hasTrajectories: r.hasTrajectories ? 1 : 0,
          live: r.live ? 1 : 0,
          seenAt: nowS,
        });
      }
      // Runs that disappeared from disk leave the index.
      this.db.prepare("DELETE FROM runs WHERE seen_at < ?").run(nowS);
    })();
  }

  list(opts: { refresh?: boolean } = {}): ScannedRun[] {
    this.ensureFresh(opts.refresh ?? false);
    return [...this.runs.values()].sort((a, b) => (b.lastTs ?? 0) - (a.lastTs ?? 0) || a.id.localeCompare(b.id));
  }

  /** The run with this id, re-validated against the roots; null when unknown. */
  find(id: string): ScannedRun | null {
    this.ensureFresh(false);
    let run = this.runs.get(id) ?? this.lookupNew(id);
    if (!run && Date.now() - this.lastScanMs >= MIN_RESCAN_MS) {
      // A symlinked run created since the last scan is found by a (throttled) full scan.
      this.ensureFresh(true);
      run = this.runs.get(id) ?? null;
    }
    if (!run) return null;
    let real: string;
    try {
      real = fs.realpathSync(run.dir);
    } catch {
      return null;
    }
    // The directory may have been swapped for a symlink since the scan.
    return isInside(run.root, real) && real === run.realDir ? run : null;
  }

  /**
   * A run created since the last scan answers at once: its id names one path per root,
   * checked with a few stat calls (lookupRun), never a rescan of every root.
   */
  private lookupNew(id: string): ScannedRun | null {
    if (this.mode.kind !== "multi") return null;
    const rel = decodeRunId(id);
    if (rel === null) return null;
    for (const root of this.mode.roots) {
      const run = lookupRun(root, rel);
      if (!run || run.id !== id) continue;
      if ([...this.runs.values()].some((r) => r.realDir === run.realDir)) return null;
      this.runs.set(run.id, run);
      return run;
    }
    return null;
  }

  /** The single run of --dump-details mode, or null in multi-run mode. */
  single(): ScannedRun | null {
    if (this.mode.kind !== "single") return null;
    return this.list()[0] ?? null;
  }

  private ensureFresh(force: boolean): void {
    const now = Date.now();
    if (force || now - this.lastScanMs > SCAN_INTERVAL_S * 1000) this.scan(now);
  }
}

/** One entry per real directory: the non-symlinked path wins, else the first id. */
function uniqueByRealDir(found: ScannedRun[]): ScannedRun[] {
  const byReal = new Map<string, ScannedRun>();
  const order = [...found].sort((a, b) => Number(b.dir === b.realDir) - Number(a.dir === a.realDir) || a.id.localeCompare(b.id));
  for (const run of order) if (!byReal.has(run.realDir)) byReal.set(run.realDir, run);
  return found.filter((r) => byReal.get(r.realDir) === r);
}
