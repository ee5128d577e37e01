/**
 * The run scan: every directory below a runs root holding `dashboard/` or `rollout_data/`
 * is a run. Cheap by design (stat calls and one small meta.json read per run, cached by
 * mtime): the lab server rescans every 10 s. Symlinks are followed only when their target
 * stays inside the root, so nothing outside the registered roots is ever opened.
 */
import fs from "node:fs";
import path from "node:path";
import { encodeRunId } from "@/lib/server/runs/run-id";
import { DASHBOARD_DIR, META_FILE, parseRunHeader } from "@/lib/store/format";

export const LIVE_WINDOW_S = 60;
const MAX_DEPTH = 6;
/** Folders inside a run that never contain other runs; skipping them keeps the scan cheap. */
const RUN_CONTENT_DIRS = new Set(["dashboard", "rollout_data", "train_data", "trajectory", "dashboard_columns", "tokenizer", "processor", "events"]);

export interface ScannedRun {
  id: string;
  root: string;
  relPath: string;
  dir: string;
  /** `dir` with every symlink resolved: the run's identity, and what the readers open. */
  realDir: string;
  name: string;
  firstTs: number | null;
  lastTs: number | null;
  steps: number;
  hasTimeline: boolean;
  hasDumps: boolean;
  hasTrajectories: boolean;
  live: boolean;
}

/** True when `child` (a real path) is `root` or lies below it. */
export function isInside(root: string, child: string): boolean {
  const rel = path.relative(root, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

function statOrNull(p: string): fs.Stats | null {
  try {
    return fs.statSync(p);
  } catch {
    return null;
  }
}

function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

function listOrEmpty(p: string): string[] {
  try {
    return fs.readdirSync(p);
  } catch {
    return [];
  }
}

const metaCache = new Map<string, { mtimeMs: number; name: string | null; startTs: number | null }>();

function readMeta(dir: string): { name: string | null; startTs: number | null } {
  const file = path.join(dir, DASHBOARD_DIR, META_FILE);
  const st = statOrNull(file);
  if (!st) return { name: null, startTs: null };
  const hit = metaCache.get(file);
  if (hit && hit.mtimeMs === st.mtimeMs) return hit;
  let name: string | null = null;
  let startTs: number | null = null;
  try {
    // The format's tolerant reader (bare NaN in args is fine; strings are never rewritten).
    // A half-written file parses to null: the folder name stands in until it is complete.
    const header = parseRunHeader(fs.readFileSync(file, "utf8"));
    if (header?.run_name) name = header.run_name;
    if (header?.start_ts != null && Number.isFinite(header.start_ts)) startTs = header.start_ts;
  } catch {
    /* unreadable meta.json: same fallback */
  }
  const entry = { mtimeMs: st.mtimeMs, name, startTs };
  metaCache.set(file, entry);
  return entry;
}

const PARTITIONED = ["phases", "gpu_util"];

/** Describe one run directory from stats alone (plus meta.json). */
export function describeRun(root: string, relPath: string, nowMs = Date.now()): ScannedRun {
  const dir = path.join(root, relPath);
  const dash = path.join(dir, "dashboard");
  const mtimes: number[] = [];
  const note = (p: string) => {
    const st = statOrNull(p);
    if (st) mtimes.push(st.mtimeMs);
    return st;
  };
  let hasTimeline = false;
  for (const stream of PARTITIONED) {
    const files = listOrEmpty(path.join(dash, stream)).filter((f) => f.endsWith(".jsonl")).sort();
    const newest = files[files.length - 1];
    if (newest) {
      hasTimeline = true;
      note(path.join(dash, stream, newest));
    }
    const legacy = note(path.join(dash, `${stream}.jsonl`));
    if (legacy && legacy.size > 0) hasTimeline = true;
  }
  for (const f of ["metrics.jsonl", "meta.json", "engine_series", "trajectories"]) note(path.join(dash, f));
  const rolloutFiles = listOrEmpty(path.join(dir, "rollout_data")).filter((f) => f.endsWith(".pt"));
  const steps = rolloutFiles.filter((f) => /^\d+\.pt$/.test(f)).length;
  if (rolloutFiles.length) note(path.join(dir, "rollout_data"));
  note(path.join(dir, "train_data"));
  const hasTrajectories =
    listOrEmpty(path.join(dir, "trajectory")).some((f) => f.endsWith(".jsonl")) ||
    listOrEmpty(path.join(dash, "trajectories")).some((f) => f.endsWith(".jsonl"));
  const meta = readMeta(dir);
  const lastMs = mtimes.length ? Math.max(...mtimes) : null;
  const firstTs = meta.startTs ?? (mtimes.length ? Math.min(...mtimes) / 1000 : null);
  // A root that is itself a run is named after its folder.
  return {
    id: encodeRunId(relPath === "." ? path.basename(dir) : relPath),
    root,
    relPath,
    dir,
    realDir: realOr(dir),
    name: meta.name ?? path.basename(dir),
    firstTs,
    lastTs: lastMs === null ? null : lastMs / 1000,
    steps,
    hasTimeline,
    hasDumps: rolloutFiles.length > 0,
    hasTrajectories,
    live: lastMs !== null && nowMs - lastMs < LIVE_WINDOW_S * 1000,
  };
}

function isRunDir(dir: string): boolean {
  return statOrNull(path.join(dir, "dashboard"))?.isDirectory() === true || statOrNull(path.join(dir, "rollout_data"))?.isDirectory() === true;
}

/**
 * The one run at `relPath` below `root`, by the scan's own rules (no hidden or run-content
 * folder on the way, no run above it, at most MAX_DEPTH deep), or null. Only a path
 * without symlinks qualifies: a symlinked alias is resolved by a full scan, which keeps one
 * id per real directory. A few stat calls — what an unknown id costs instead of a rescan.
 */
export function lookupRun(root: string, relPath: string, nowMs = Date.now()): ScannedRun | null {
  let realRoot: string;
  try {
    realRoot = fs.realpathSync(root);
  } catch {
    return null;
  }
  const segs = relPath.split("/");
  if (segs.length > MAX_DEPTH || segs.some((s) => !s || s.startsWith(".") || RUN_CONTENT_DIRS.has(s))) return null;
  for (let i = 0; i < segs.length - 1; i++) if (isRunDir(path.join(realRoot, ...segs.slice(0, i + 1)))) return null;
  const dir = path.join(realRoot, relPath);
  if (realOr(dir) !== dir || !isRunDir(dir)) return null;
  return describeRun(realRoot, relPath, nowMs);
}

/** Every run below `root`. A run may not contain other runs (its content folders are not walked). */
export function scanRoot(root: string, nowMs = Date.now()): ScannedRun[] {
  let realRoot: string;
  try {
    realRoot = fs.realpathSync(root);
  } catch {
    return [];
  }
  const out: ScannedRun[] = [];
  const walk = (rel: string, depth: number) => {
    const abs = rel ? path.join(realRoot, rel) : realRoot;
    if (isRunDir(abs)) {
      out.push(describeRun(realRoot, rel || ".", nowMs));
      if (rel) return;
    }
    if (depth >= MAX_DEPTH) return;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(abs, { withFileTypes: true });
    } catch {
      return;
    }
    for (const ent of entries) {
      if (ent.name.startsWith(".") || RUN_CONTENT_DIRS.has(ent.name)) continue;
      const childRel = rel ? `${rel}/${ent.name}` : ent.name;
      const childAbs = path.join(realRoot, childRel);
      if (ent.isSymbolicLink()) {
        let target: string;
        try {
          target = fs.realpathSync(childAbs);
        } catch {
          continue;
        }
        if (!isInside(realRoot, target) || !statOrNull(target)?.isDirectory()) continue;
      } else if (!ent.isDirectory()) {
        continue;
      }
      walk(childRel, depth + 1);
    }
  };
  walk("", 0);
  return out;
}
