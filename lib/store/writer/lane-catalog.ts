/**
 * Reading, writing and rebuilding `lane_catalog.json` in a dashboard dir. The catalog's
 * shape, fold rules and exact bytes live in lib/store/format/lane-catalog.ts
 * (docs/formats.md §4.10).
 *
 * Rebuild: when the file is unparseable (or missing while streams exist — a
 * directory written before the catalog existed), `rebuildLaneCatalog` folds
 * the streams already on disk with the same rules — all phases, then all
 * topology snapshots, then all gpu_util samples, files in name (= time)
 * order, legacy flat files first — so the lanes of earlier writers survive;
 * new lanes are merged on top. Only the lane order can differ from the
 * original file (readers sort lanes by `(node, gpu)`, docs/formats.md §4.10).
 */
import { join } from "node:path";
import { HOUR_FILE_RE, LANE_CATALOG_FILE, LaneCatalog, PhaseEvent, TopologySnapshot } from "@/lib/store/format";
import { replaceFile, type WriterFs } from "./writer-fs";

/** Load the catalog of a dashboard dir; a missing file is an empty catalog. Throws on a corrupt file. */
export async function loadLaneCatalog(fs: WriterFs, dashDir: string): Promise<LaneCatalog> {
  return (await readLaneCatalog(fs, dashDir)) ?? new LaneCatalog();
}

/** The catalog file, or `undefined` when it does not exist. Throws on a corrupt file. */
export async function readLaneCatalog(fs: WriterFs, dashDir: string): Promise<LaneCatalog | undefined> {
  const text = await fs.readFileIfExists(join(dashDir, LANE_CATALOG_FILE));
  return text === undefined ? undefined : LaneCatalog.parse(text);
}

/** True for a parse failure of the catalog file (as opposed to an I/O error). */
export function isCorruptCatalogError(e: unknown): boolean {
  return e instanceof SyntaxError || (e as { name?: string } | null)?.name === "ZodError";
}

/** The stream files that feed the catalog, legacy flat file first, then hour files in name order. */
async function streamFiles(fs: WriterFs, dashDir: string, stream: string): Promise<string[]> {
  const files: string[] = [];
  const flat = join(dashDir, `${stream}.jsonl`);
  const top = await fs.listDir(dashDir);
  if (top?.includes(`${stream}.jsonl`)) files.push(flat);
  const hourly = await fs.listDir(join(dashDir, stream));
  if (hourly) {
    for (const name of hourly.filter((n) => HOUR_FILE_RE.test(n)).sort()) files.push(join(dashDir, stream, name));
  }
  return files;
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined; // a corrupt line contributes nothing (readers skip it too)
  }
}

/**
 * Fold the phases, topology and gpu_util streams already in `dashDir` into a
 * new catalog (see the module header). Unparseable lines are skipped. Throws
 * only on I/O errors.
 */
export async function rebuildLaneCatalog(fs: WriterFs, dashDir: string): Promise<LaneCatalog> {
  const cat = new LaneCatalog();
  for (const file of await streamFiles(fs, dashDir, "phases")) {
    await fs.forEachLine(file, (line) => {
      const p = PhaseEvent.safeParse(parseLine(line));
      if (p.success) cat.foldPhases([p.data]);
    });
  }
  for (const file of await streamFiles(fs, dashDir, "topology")) {
    await fs.forEachLine(file, (line) => {
      const t = TopologySnapshot.safeParse(parseLine(line));
      if (t.success) cat.foldTopology([t.data]);
    });
  }
  for (const file of await streamFiles(fs, dashDir, "gpu_util")) {
    // High volume: only the lane key matters, checked by hand.
    await fs.forEachLine(file, (line) => {
      const g = parseLine(line) as { node?: unknown; gpu?: unknown } | undefined;
      if (g && typeof g.node === "string" && Number.isSafeInteger(g.gpu) && (g.gpu as number) >= 0) cat.foldGpuLane(g.node, g.gpu as number);
    });
  }
  return cat;
}

/** Whether any stream that feeds the catalog has a file in `dashDir`. */
export async function hasLaneStreams(fs: WriterFs, dashDir: string): Promise<boolean> {
  for (const s of ["phases", "topology", "gpu_util"]) if ((await streamFiles(fs, dashDir, s)).length > 0) return true;
  return false;
}

/** Atomically replace `lane_catalog.json` (write `.tmp`, rename). */
export async function writeLaneCatalog(fs: WriterFs, dashDir: string, cat: LaneCatalog): Promise<void> {
  await replaceFile(fs, join(dashDir, LANE_CATALOG_FILE), cat.serialize());
}
