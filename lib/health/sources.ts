/**
 * Which log files a run's health reads (docs/api.md 9.5.1):
 *  - every `*.log`, `*.out`, `*.err` below `{run}/logs/` (any depth), listed and opened
 *    through the run's confined file access (lib/store/safe-fs.ts): a link that leaves the
 *    run directory is never followed;
 *  - the files an operator names with `serve --run-logs RUN_ID=GLOB` (outside the run
 *    directory, e.g. Slurm's `slurm-%j.out`): shown relative to the glob's fixed prefix,
 *    never by absolute path, opened without following a final symlink.
 */
import fs from "node:fs";
import path from "node:path";
import type { LogSource } from "@/lib/health/scanner";
import { READ_NOFOLLOW, type RunFs } from "@/lib/store/safe-fs";

export const LOG_DIR = "logs";
export const LOG_FILE = /\.(?:log|out|err)$/;
/** Bounds of one listing (a runaway directory must not stall the request). */
export const MAX_LOG_FILES = 2000;
export const MAX_LOG_DEPTH = 8;

/** Log files below `{run}/logs/`, names relative to the run directory (`logs/a/b.log`). */
export async function runLogSources(runFs: RunFs): Promise<LogSource[]> {
  const out: LogSource[] = [];
  const walk = async (rel: string, depth: number): Promise<void> => {
    const names = (await runFs.readdir(rel)).sort();
    for (const n of names) {
      if (out.length >= MAX_LOG_FILES) return;
      const child = `${rel}/${n}`;
      const st = await runFs.statOrNull(child);
      if (!st) continue;
      if (st.isDirectory()) {
        if (depth < MAX_LOG_DEPTH) await walk(child, depth + 1);
      } else if (st.isFile() && LOG_FILE.test(n)) {
        out.push({ name: child, open: () => runFs.open(child) });
      }
    }
  };
  await walk(LOG_DIR, 1);
  return out;
}

function globSegment(seg: string): RegExp {
  let re = "";
  for (const ch of seg) {
    if (ch === "*") re += "[^/]*";
    else if (ch === "?") re += "[^/]";
    else re += ch.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

const hasMagic = (seg: string) => /[*?]/.test(seg);

/**
 * Files matching `pattern` (`*` and `?` within a path segment, `**` any number of
 * directories; absolute or relative to the server's working directory). Names are
 * relative to the pattern's fixed prefix (`/shared/slurm/job42/*.out` → `slurm-42.out`).
 */
export async function globSources(pattern: string): Promise<LogSource[]> {
  const abs = path.resolve(pattern);
  const segs = abs.split(path.sep).filter(Boolean);
  let i = 0;
  while (i < segs.length - 1 && !hasMagic(segs[i]!)) i++;
  const base = path.join(path.sep, ...segs.slice(0, i));
  const rest = segs.slice(i);
  const found: string[] = [];
  const walk = async (dir: string, k: number, depth: number): Promise<void> => {
    if (found.length >= MAX_LOG_FILES || depth > MAX_LOG_DEPTH * 2) return;
    const seg = rest[k]!;
    const last = k === rest.length - 1;
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    if (seg === "**") {
      if (!last) await walk(dir, k + 1, depth); // zero directories
      for (const e of entries) if (e.isDirectory()) await walk(path.join(dir, e.name), k, depth + 1);
      return;
    }
    const re = globSegment(seg);
    for (const e of entries) {
      if (!re.test(e.name)) continue;
      const p = path.join(dir, e.name);
      if (last) {
        if (e.isFile()) found.push(p);
      } else if (e.isDirectory()) await walk(p, k + 1, depth + 1);
    }
  };
  if (rest.length) await walk(base, 0, 0);
  return found.map((p) => ({
    name: path.relative(base, p).split(path.sep).join("/"),
    open: () => fs.promises.open(p, READ_NOFOLLOW),
  }));
}
