/**
 * `lane_catalog.json` (docs/formats.md §4.10): the lane index the collector keeps
 * next to the streams.
 *
 * Fold rules, applied at the start of each flush to the records about to be
 * written, in this order: train-role phases (lane per gpu, role "train",
 * rank when ≥ 0; rollout-manager phases ignored), topology snapshots (lane per
 * engine `[node, gpu]`, role "rollout", the engine addr), gpu_util samples
 * (lane only). Lanes keep first-seen order; lists are sorted when written.
 * The file is rewritten (tmp + rename, Python default separators, no trailing
 * newline) only when something was added, and not created before the first
 * lane exists.
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
import { z } from "zod";
import { dumpPy } from "./python-json";
import type { PyValue } from "./python-json";
import { PhaseEvent, TopologySnapshot } from "./records";
import type { GpuSample } from "./records";
import type { WriterFs } from "./writer-fs";

export const LANE_CATALOG_FILE = "lane_catalog.json";

const LaneCatalogFile = z.object({
  version: z.literal(1),
  lanes: z.record(
    z.string(),
    z.object({ ranks: z.array(z.number().int()), engine_addrs: z.array(z.string()), roles: z.array(z.string()) }),
  ),
});

interface Lane {
  ranks: Set<number>;
  engineAddrs: Set<string>;
  roles: Set<string>;
}

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export class LaneCatalog {
  private readonly lanes = new Map<string, Lane>();
  /** True when something was added since the last `markClean()`. */
  dirty = false;

  static parse(text: string): LaneCatalog {
    const file = LaneCatalogFile.parse(JSON.parse(text));
    const cat = new LaneCatalog();
    for (const [key, l] of Object.entries(file.lanes)) {
      cat.lanes.set(key, { ranks: new Set(l.ranks), engineAddrs: new Set(l.engine_addrs), roles: new Set(l.roles) });
    }
    return cat;
  }

  get size(): number {
    return this.lanes.size;
  }

  hasLane(node: string, gpu: number): boolean {
    return this.lanes.has(`${node}:${gpu}`);
  }

  /** Ensure the lane of a gpu_util sample (rule 3). */
  foldGpuLane(node: string, gpu: number): void {
    this.lane(node, gpu);
  }

  private lane(node: string, gpu: number): Lane {
    const key = `${node}:${gpu}`;
    let l = this.lanes.get(key);
    if (!l) {
      this.lanes.set(key, (l = { ranks: new Set(), engineAddrs: new Set(), roles: new Set() }));
      this.dirty = true;
    }
    return l;
  }

  private add<T>(set: Set<T>, v: T): void {
    if (!set.has(v)) {
      set.add(v);
      this.dirty = true;
    }
  }

  /** Add everything `other` knows (used when lanes were folded before the file could be read). */
  mergeFrom(other: LaneCatalog): void {
    for (const [key, o] of other.lanes) {
      let l = this.lanes.get(key);
      if (!l) this.lanes.set(key, (l = { ranks: new Set(), engineAddrs: new Set(), roles: new Set() }));
      for (const r of o.ranks) l.ranks.add(r);
      for (const a of o.engineAddrs) l.engineAddrs.add(a);
      for (const r of o.roles) l.roles.add(r);
    }
    if (other.lanes.size > 0) this.dirty = true;
  }

  foldPhases(phases: readonly PhaseEvent[]): void {
    for (const p of phases) {
      if (p.role !== "train") continue;
      for (const gpu of p.gpus) {
        const l = this.lane(p.node, gpu);
        this.add(l.roles, "train");
        if (p.rank >= 0) this.add(l.ranks, p.rank);
      }
    }
  }

  foldTopology(snapshots: readonly TopologySnapshot[]): void {
    for (const s of snapshots) {
      for (const e of s.engines) {
        for (const [node, gpu] of e.gpus) {
          const l = this.lane(node, gpu);
          this.add(l.roles, "rollout");
          this.add(l.engineAddrs, e.addr);
        }
      }
    }
  }

  foldGpu(samples: readonly GpuSample[]): void {
    // Hot path (1 Hz × every GPU): skip the lane lookup for repeated keys.
    let lastNode = "";
    let lastGpu = -1;
    for (const g of samples) {
      if (g.gpu === lastGpu && g.node === lastNode) continue;
      this.lane(g.node, g.gpu);
      lastNode = g.node;
      lastGpu = g.gpu;
    }
  }

  /** Exact file content (no trailing newline). */
  serialize(): string {
    const lanes = new Map<string, PyValue>();
    for (const [key, l] of this.lanes) {
      lanes.set(
        key,
        new Map<string, PyValue>([
          ["ranks", [...l.ranks].sort((a, b) => a - b)],
          ["engine_addrs", [...l.engineAddrs].sort(byString)],
          ["roles", [...l.roles].sort(byString)],
        ]),
      );
    }
    return dumpPy(
      new Map<string, PyValue>([
        ["version", 1],
        ["lanes", lanes],
      ]),
      ", ",
      ": ",
    );
  }
}

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
    for (const name of hourly.filter((n) => /^\d{8}_\d{2}\.jsonl$/.test(n)).sort()) files.push(join(dashDir, stream, name));
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
  const path = join(dashDir, LANE_CATALOG_FILE);
  await fs.writeFile(`${path}.tmp`, cat.serialize());
  await fs.rename(`${path}.tmp`, path);
}
