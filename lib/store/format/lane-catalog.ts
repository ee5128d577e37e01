/**
 * `lane_catalog.json` (docs/formats.md §4.10): the lane index the collector keeps
 * next to the streams — its shape, fold rules and exact bytes (the writer's file I/O is in
 * lib/store/writer/lane-catalog.ts), and the tolerant read the MetricStore uses.
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
 * Rebuilding a lost file from the streams on disk is the writer's
 * (lib/store/writer/lane-catalog.ts).
 */
import { z } from "zod";
import { laneKey } from "@/lib/contracts/lanes";
import { dumpPy, parseLenientJson } from "./python-json";
import type { PyValue } from "./python-json";
import type { GpuSample, PhaseEvent, TopologySnapshot } from "./records";

export { LANE_CATALOG_FILE } from "./streams";

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
    return this.lanes.has(laneKey(node, gpu));
  }

  /** Ensure the lane of a gpu_util sample (rule 3). */
  foldGpuLane(node: string, gpu: number): void {
    this.lane(node, gpu);
  }

  private lane(node: string, gpu: number): Lane {
    const key = laneKey(node, gpu);
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

/** One lane as the read side sees it: ranks, engines and roles filtered to their types. */
export interface CatalogLane {
  node: string;
  gpu: number;
  ranks: number[];
  engine_addrs: string[];
  roles: string[];
}

/**
 * Tolerant read of the catalog file for the read side: entries whose key is not
 * `node:gpu` are skipped, list members of the wrong type dropped; null when the text is
 * not a catalog at all (absent lanes object, unparseable). Lanes in file order.
 */
export function readCatalogLanes(text: string): CatalogLane[] | null {
  let raw: unknown;
  try {
    raw = parseLenientJson(text);
  } catch {
    return null;
  }
  const lanes = (raw as { lanes?: unknown } | null)?.lanes;
  if (!lanes || typeof lanes !== "object" || Array.isArray(lanes)) return null;
  const out: CatalogLane[] = [];
  for (const [key, v] of Object.entries(lanes as Record<string, unknown>)) {
    const at = key.lastIndexOf(":");
    const gpu = Number(key.slice(at + 1));
    if (at < 0 || !Number.isInteger(gpu)) continue;
    const info = (v ?? {}) as { ranks?: unknown; engine_addrs?: unknown; roles?: unknown };
    const list = <T>(x: unknown, ok: (e: unknown) => e is T): T[] => (Array.isArray(x) ? x.filter(ok) : []);
    out.push({
      node: key.slice(0, at),
      gpu,
      ranks: list(info.ranks, (e): e is number => typeof e === "number"),
      engine_addrs: list(info.engine_addrs, (e): e is string => typeof e === "string"),
      roles: list(info.roles, (e): e is string => typeof e === "string"),
    });
  }
  return out;
}
