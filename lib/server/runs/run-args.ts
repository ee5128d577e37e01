/**
 * The run list's config columns: `dashboard/meta.json` args (docs/formats.md, run header)
 * flattened to dotted paths, read through the confined open (lib/store/safe-fs.ts) and
 * cached per run until the file's size or mtime changes.
 */
import { flattenArgs, hasArgs } from "@/lib/compare/args";
import { DASHBOARD_DIR, META_FILE, parseRunHeader } from "@/lib/store/format";
import { RunFs } from "@/lib/store/safe-fs";

export type ArgCell = string | number | boolean | null;

const META_REL = `${DASHBOARD_DIR}/${META_FILE}`;
const cache = new Map<string, { stamp: string; args: Record<string, ArgCell> | null }>();

/** Scalars stay as they are; arrays, objects and non-finite numbers become JSON text. */
export function argCells(args: Record<string, unknown>): Record<string, ArgCell> {
  const out: Record<string, ArgCell> = {};
  for (const [k, v] of flattenArgs(args))
    out[k] = v === null || typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v)) ? v : (JSON.stringify(v) ?? null);
  return out;
}

export function runArgs(realDir: string): Record<string, ArgCell> | null {
  const fsys = new RunFs(realDir);
  try {
    const st = fsys.statOrNullSync(META_REL);
    if (!st) return null;
    const stamp = `${st.size}:${st.mtimeMs}`;
    const hit = cache.get(realDir);
    if (hit && hit.stamp === stamp) return hit.args;
    const a = parseRunHeader(fsys.readFileSync(META_REL).toString("utf8"))?.args;
    const args = hasArgs(a) ? argCells(a) : null;
    cache.set(realDir, { stamp, args });
    return args;
  } catch {
    return null;
  }
}
