/**
 * Log files named by a glob (`serve --run-logs RUN_ID=GLOB`, collector `--logs GLOB`;
 * docs/api.md 9.5.1): `*` and `?` within a path segment, `**` any number of directories.
 * Names are relative to the pattern's fixed prefix, never absolute; files are opened
 * without following a final symlink.
 */
import fs from "node:fs";
import path from "node:path";
import type { LogSource } from "@/lib/store/logs/scanner";
import { READ_NOFOLLOW } from "@/lib/store/safe-fs";

/** Bounds of one expansion. */
export const MAX_GLOB_FILES = 2000;
const MAX_GLOB_DEPTH = 16;

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
    if (found.length >= MAX_GLOB_FILES || depth > MAX_GLOB_DEPTH) return;
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
