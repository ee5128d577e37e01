/**
 * Phase lanes (api.md 8.4): raw Timer events → per-GPU intervals, OPEN markers resolved,
 * rollout-manager events painted onto the engine GPUs of each topology window, and the
 * synthetic `initialize` band from `meta.start_ts`.
 */
import type { LaneInfo, MetricStore, PhaseEvent } from "@/lib/store/telemetry";
import { OPEN_T1 } from "@/lib/store/telemetry";
import type { PhaseBlock } from "@/lib/store/telemetry/blocks";
import { cmpStr } from "@/lib/store/telemetry/blocks";
import { laneKey, type LaneSet } from "@/lib/timeline/lanes";
import { engineHost, topologyWindows } from "@/lib/timeline/topology";
import { MAX_WINDOW_S } from "@/lib/timeline/window";

export interface PhaseInterval {
  name: string;
  t0: number;
  t1: number;
  node: string;
  gpu: number;
  rank: number;
  role: string;
}

/** Phase blocks of a query plus, per block, its OPEN markers that have no closed twin. */
export interface PhaseSource {
  blocks: readonly PhaseBlock[];
  unmatched: readonly ReadonlySet<number>[];
}

/**
 * Source set: every partition whose hour starts no later than `t1 + MAX_WINDOW_S` (all
 * when t1 is null) — no lower bound, so old OPEN markers are found. Twin resolution is
 * memoised per file set (keys + sizes).
 */
export async function phaseSource(store: MetricStore, t1: number | null): Promise<PhaseSource> {
  const files = (await store.phases.files()).filter(
    (f) => f.hourStart === null || t1 === null || f.hourStart <= t1 + MAX_WINDOW_S,
  );
  const version = files.map((f) => `${f.key}:${f.size}`).join(",");
  const last = files[files.length - 1]?.key ?? "";
  return store.memo(`phases:source:${last}`, version, async () => {
    const blocks = await store.phases.read(files);
    const twins = closedTwins(blocks);
    const unmatched = blocks.map((b) => new Set(b.open.filter((i) => !twins.has(twinKey(b.rows[i]!)))));
    return { blocks, unmatched };
  });
}

function twinKey(ev: PhaseEvent): string {
  return `${ev.node}\u0000${ev.rank}\u0000${ev.name}\u0000${ev.t0}`;
}

/** Keys of closed events that are twins of some OPEN marker in `blocks`. */
function closedTwins(blocks: readonly PhaseBlock[]): Set<string> {
  const openT0 = new Set<number>();
  for (const b of blocks) for (const i of b.open) openT0.add(b.rows[i]!.t0);
  const twins = new Set<string>();
  if (openT0.size === 0) return twins;
  for (const b of blocks)
    for (const ev of b.rows) if (ev.t1 !== OPEN_T1 && openT0.has(ev.t0)) twins.add(twinKey(ev));
  return twins;
}

interface Bucket {
  node: string;
  gpu: number;
  items: PhaseInterval[];
}

export async function phasesByLane(
  store: MetricStore,
  t0: number | null,
  t1: number | null,
  selection: LaneSet | null,
): Promise<PhaseInterval[]> {
  const [{ blocks, unmatched }, range, windows, lanes] = await Promise.all([
    phaseSource(store, t1),
    store.timeRange(),
    topologyWindows(store),
    store.laneIndex(),
  ]);
  const edge = range ? range[1] : 0;
  const buckets = new Map<string, Bucket>();
  const emit = (node: string, gpu: number, iv: PhaseInterval) => {
    const k = laneKey(node, gpu);
    let b = buckets.get(k);
    if (!b) buckets.set(k, (b = { node, gpu, items: [] }));
    b.items.push(iv);
  };
  const covered = windows.map((w) => coveredLanes(w.engines, lanes));

  const visit = (ev: PhaseEvent, evT1: number) => {
    if (t1 !== null && !(ev.t0 < t1)) return;
    if (t0 !== null && !(evT1 > t0)) return;
    if (ev.role === "rollout_manager") {
      windows.forEach((w, i) => {
        const clip0 = Math.max(ev.t0, w.t0);
        const clip1 = w.t1 === null ? evT1 : Math.min(evT1, w.t1);
        if (clip0 >= clip1) return;
        for (const [node, gpu] of covered[i]!) {
          if (selection && !selection.has(node, gpu)) continue;
          emit(node, gpu, { name: ev.name, t0: clip0, t1: clip1, node, gpu, rank: ev.rank, role: ev.role });
        }
      });
      return;
    }
    for (const gpu of ev.gpus) {
      if (selection && !selection.has(ev.node, gpu)) continue;
      emit(ev.node, gpu, { name: ev.name, t0: ev.t0, t1: evT1, node: ev.node, gpu, rank: ev.rank, role: ev.role });
    }
  };

  blocks.forEach((b, k) => {
    // Nothing in the block starts before t1: it cannot overlap.
    if (t1 !== null && b.minT >= t1) return;
    const open = unmatched[k]!;
    // Closed events all end at or before t0: only unresolved OPEN markers can overlap.
    if (t0 !== null && b.maxT <= t0) {
      for (const i of b.open) if (open.has(i)) visit(b.rows[i]!, Math.max(edge, b.rows[i]!.t0));
      return;
    }
    const rows = b.rows;
    for (let i = 0; i < rows.length; i++) {
      const ev = rows[i]!;
      if (ev.t1 !== OPEN_T1) visit(ev, ev.t1);
      else if (open.has(i)) visit(ev, Math.max(edge, ev.t0));
    }
  });

  const meta = store.meta();
  const start = meta?.start_ts;
  if (meta && typeof start === "number" && (t0 === null || t0 <= start)) {
    for (const b of buckets.values()) {
      let first = Infinity;
      for (const iv of b.items) if (iv.t0 < first) first = iv.t0;
      if (first > start && (t1 === null || start < t1) && (t0 === null || first > t0)) {
        b.items.push({ name: "initialize", t0: start, t1: first, node: b.node, gpu: b.gpu, rank: -1, role: "derived" });
      }
    }
  }

  const ordered = [...buckets.values()].sort((a, b) => cmpStr(a.node, b.node) || a.gpu - b.gpu);
  const out: PhaseInterval[] = [];
  for (const b of ordered) {
    b.items.sort((x, y) => x.t0 - y.t0);
    for (const iv of b.items) out.push(iv);
  }
  return out;
}

/**
 * Lanes a rollout-manager event covers in one topology window: the engines' GPUs, or —
 * for external engines registered without GPU identity — every known lane on an engine's
 * host. Sorted by (node, gpu).
 */
function coveredLanes(engines: readonly { addr: string; gpus: [string, number][] }[], lanes: readonly LaneInfo[]): [string, number][] {
  const seen = new Map<string, [string, number]>();
  for (const e of engines) for (const [node, gpu] of e.gpus) seen.set(laneKey(node, gpu), [node, gpu]);
  if (seen.size === 0) {
    const hosts = new Set(engines.map((e) => engineHost(e.addr)));
    for (const l of lanes) if (hosts.has(l.node)) seen.set(laneKey(l.node, l.gpu), [l.node, l.gpu]);
  }
  return [...seen.values()].sort((a, b) => cmpStr(a[0], b[0]) || a[1] - b[1]);
}
