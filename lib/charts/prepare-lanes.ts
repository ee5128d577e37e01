/**
 * Lane canvas preparer: phases, GPU samples, per-process snapshots, topology and the
 * sglang overlay → one LanesModel with columnar tracks per lane. Built once per data
 * change; every frame (pan, zoom, hover) then only binary-searches and draws.
 *
 * Semantics decided here (not in the canvas):
 * * overlapping phases get a depth (sub-row) instead of overpainting (nested timers);
 * * a time gap much longer than the sampling interval breaks the util/mem line (NaN),
 *   so a stopped collector never looks like a flat plateau;
 * * memory and overlay share one scale across the shown lanes, reported in the toolbar.
 */
import type {
  EngineSeriesResponse,
  ProcessRow,
  TopologyLane,
  TopologyWindow,
} from "@/lib/charts/api-shapes";
import { lowerBound } from "@/lib/bisect";
import type { PhaseLaneColumns, PhaseLanes } from "@/lib/contracts/binary";
import { nearestIndex } from "@/lib/charts/core/envelope";
import { compareLabels } from "@/lib/charts/prepare-line";

export interface PhaseTrack {
  t0: Float64Array;
  t1: Float64Array;
  /** index into LanesModel.phaseNames */
  name: Uint16Array;
  rank: Int32Array;
  /** 0 = main row; ≥1 nested inside an earlier open interval */
  depth: Uint8Array;
}

export interface GpuTrack {
  ts: Float64Array;
  util: Float64Array;
  mem: Float64Array;
}

export interface OverlaySpan {
  t0: number;
  t1: number;
  /** index into LanesModel.overlay.series */
  series: number;
}

export interface ProcessTrack {
  /** distinct snapshot times, ascending */
  ts: Float64Array;
  /** processes of each snapshot, largest memory first */
  rows: ProcessRow[][];
}

export interface LaneRow {
  key: string;
  node: string;
  gpu: number;
  index: number;
  phases: PhaseTrack;
  gpuTrack: GpuTrack | null;
  overlay: OverlaySpan[];
}

export interface OverlaySeries {
  addr: string;
  ts: Float64Array;
  value: Float64Array;
}

export interface LanesModel {
  lanes: LaneRow[];
  phaseNames: string[];
  /** names present in the shown lanes, sorted (for the legend) */
  phasesPresent: string[];
  memMaxMb: number;
  overlay: { metric: string; series: OverlaySeries[]; max: number } | null;
  multiNode: boolean;
}

export function laneKeyOf(node: string, gpu: number): string {
  return `${node}:${gpu}`;
}

function median(xs: Float64Array): number {
  if (xs.length === 0) return 0;
  const s = xs.slice().sort(); // typed-array sort: numeric, no comparator calls
  return s[Math.floor(s.length / 2)]!;
}

/** Columns with NaN breaks inserted where the sampling stops for long. */
export function gpuColumns(ts: ArrayLike<number>, util: ArrayLike<number | null>, mem: ArrayLike<number | null>): GpuTrack {
  const n = ts.length;
  const dts = new Float64Array(Math.max(0, n - 1));
  for (let i = 1; i < n; i++) dts[i - 1] = ts[i]! - ts[i - 1]!;
  const gapAfter = Math.max(30, 8 * median(dts));
  let breaks = 0;
  for (const d of dts) if (d > gapAfter) breaks++;
  const out = { ts: new Float64Array(n + breaks), util: new Float64Array(n + breaks), mem: new Float64Array(n + breaks) };
  let j = 0;
  for (let i = 0; i < n; i++) {
    if (i > 0 && ts[i]! - ts[i - 1]! > gapAfter) {
      out.ts[j] = ts[i - 1]! + (ts[i]! - ts[i - 1]!) / 2;
      out.util[j] = Number.NaN;
      out.mem[j] = Number.NaN;
      j++;
    }
    out.ts[j] = ts[i]!;
    const u = util[i];
    const m = mem[i];
    out.util[j] = typeof u === "number" ? u : Number.NaN;
    out.mem[j] = typeof m === "number" ? m : Number.NaN;
    j++;
  }
  return out;
}

/**
 * Phase intervals of one lane, sorted by start (longer first on ties), each with its
 * nesting depth. `nameIndex[c.name[i]]` = the interval's index into LanesModel.phaseNames.
 */
export function phaseTrack(c: PhaseLaneColumns, nameIndex: ArrayLike<number>): PhaseTrack {
  const n = c.t0.length;
  let order: ArrayLike<number> | null = null; // null: the answer's order is already the track's
  for (let i = 1; i < n; i++) {
    if (c.t0[i]! < c.t0[i - 1]! || (c.t0[i] === c.t0[i - 1] && c.t1[i]! > c.t1[i - 1]!)) {
      order = Uint32Array.from({ length: n }, (_, k) => k).sort((a, b) => c.t0[a]! - c.t0[b]! || c.t1[b]! - c.t1[a]! || a - b);
      break;
    }
  }
  const track: PhaseTrack = {
    t0: new Float64Array(n),
    t1: new Float64Array(n),
    name: new Uint16Array(n),
    rank: new Int32Array(n),
    depth: new Uint8Array(n),
  };
  const open: number[] = []; // end times of enclosing intervals
  for (let i = 0; i < n; i++) {
    const r = order === null ? i : order[i]!;
    const t0 = c.t0[r]!;
    while (open.length > 0 && open[open.length - 1]! <= t0) open.pop();
    track.t0[i] = t0;
    track.t1[i] = c.t1[r]!;
    track.name[i] = nameIndex[c.name[r]!] ?? 0;
    track.rank[i] = c.rank[r]!;
    track.depth[i] = Math.min(open.length, 2);
    open.push(c.t1[r]!);
  }
  return track;
}

function engineHost(addr: string): string {
  return addr.replace(/^[a-z]+:\/\//i, "").replace(/:\d+$/, "").replace(/\/.*$/, "");
}

/** The engine covering a lane in one topology window (GPU list, else host == node). */
export function engineForLane(win: TopologyWindow, node: string, gpu: number): string | null {
  for (const e of win.engines) {
    for (const g of e.gpus) if (g[0] === node && Number(g[1]) === gpu) return e.addr;
  }
  for (const e of win.engines) {
    if (e.gpus.length === 0 && engineHost(e.addr) === node) return e.addr;
  }
  return null;
}

/** The gpu answer as JSON (docs/api.md 8.5) or decoded from its binary frame: arrays or columns. */
export interface GpuLanesInput {
  lanes: Record<string, { ts: ArrayLike<number>; util: ArrayLike<number | null>; mem_mb: ArrayLike<number | null> } | undefined>;
}

export interface PrepareLanesInput {
  lanes: readonly TopologyLane[];
  /** the phases answer's columns (its binary frame, or `phaseLanesFromRows` of its JSON rows) */
  phases: PhaseLanes | undefined;
  gpu: GpuLanesInput | undefined;
  windows: readonly TopologyWindow[] | undefined;
  overlayMetric: string | null;
  engine: EngineSeriesResponse | undefined;
}

const NO_PHASES: PhaseLaneColumns = {
  node: "",
  gpu: 0,
  t0: new Float64Array(0),
  t1: new Float64Array(0),
  rank: new Float64Array(0),
  name: new Uint32Array(0),
  role: new Uint32Array(0),
};

export function prepareLanes(inp: PrepareLanesInput): LanesModel {
  // the names used by any lane of the answer, sorted; a frame's string id → its index there
  const strings = inp.phases?.strings ?? [];
  const usedName = new Uint8Array(strings.length);
  const byLane = new Map<string, PhaseLaneColumns>();
  for (const l of inp.phases?.lanes ?? []) {
    byLane.set(laneKeyOf(l.node, l.gpu), l);
    for (let i = 0; i < l.name.length; i++) usedName[l.name[i]!] = 1;
  }
  const names = strings.filter((_, id) => usedName[id] === 1).sort();
  const sortedIndex = new Map(names.map((n, i) => [n, i]));
  const nameIndex = strings.map((s) => sortedIndex.get(s) ?? 0);

  let overlay: LanesModel["overlay"] = null;
  const seriesIdx = new Map<string, number>();
  if (inp.overlayMetric && inp.engine) {
    const series: OverlaySeries[] = [];
    let max = 0;
    for (const s of inp.engine.series) {
      if (seriesIdx.has(s.addr)) continue; // one line per engine (PD parts: the first)
      const value = new Float64Array(s.value.length);
      s.value.forEach((v, i) => {
        value[i] = typeof v === "number" ? v : Number.NaN;
        if (typeof v === "number" && v > max) max = v;
      });
      seriesIdx.set(s.addr, series.length);
      series.push({ addr: s.addr, ts: Float64Array.from(s.ts), value });
    }
    overlay = { metric: inp.overlayMetric, series, max };
  }

  let memMax = 0;
  const present = new Uint8Array(strings.length); // names in the shown lanes
  const nodes = new Set<string>();
  const lanes: LaneRow[] = inp.lanes.map((l) => {
    const key = laneKeyOf(l.node, l.gpu);
    nodes.add(l.node);
    const cols = byLane.get(key) ?? NO_PHASES;
    for (let i = 0; i < cols.name.length; i++) present[cols.name[i]!] = 1;
    const g = inp.gpu?.lanes[key];
    let gpuTrack: GpuTrack | null = null;
    if (g && g.ts.length > 0) {
      gpuTrack = gpuColumns(g.ts, g.util, g.mem_mb);
      for (let i = 0; i < gpuTrack.mem.length; i++) if (gpuTrack.mem[i]! > memMax) memMax = gpuTrack.mem[i]!;
    }
    const spans: OverlaySpan[] = [];
    if (overlay) {
      for (const w of inp.windows ?? []) {
        const addr = engineForLane(w, l.node, l.gpu);
        const si = addr === null ? undefined : seriesIdx.get(addr);
        if (si !== undefined) spans.push({ t0: w.t0, t1: w.t1 ?? Number.POSITIVE_INFINITY, series: si });
      }
    }
    return { key, node: l.node, gpu: l.gpu, index: l.index, phases: phaseTrack(cols, nameIndex), gpuTrack, overlay: spans };
  });
  return {
    lanes,
    phaseNames: names,
    phasesPresent: strings.filter((_, id) => present[id] === 1).sort(),
    memMaxMb: memMax,
    overlay,
    multiNode: nodes.size > 1,
  };
}

/**
 * Per-process snapshots per lane (hover only). Kept out of LanesModel so a processes
 * refresh never repaints the lanes.
 */
export function prepareProcessTracks(rows: readonly ProcessRow[] | undefined): Map<string, ProcessTrack> {
  const byLane = new Map<string, Map<number, ProcessRow[]>>();
  for (const p of rows ?? []) {
    const k = laneKeyOf(p.node, p.gpu);
    let snaps = byLane.get(k);
    if (!snaps) byLane.set(k, (snaps = new Map<number, ProcessRow[]>()));
    const s = snaps.get(p.ts);
    if (s) s.push(p);
    else snaps.set(p.ts, [p]);
  }
  const out = new Map<string, ProcessTrack>();
  for (const [k, snaps] of byLane) {
    const ts = [...snaps.keys()].sort((a, b) => a - b);
    out.set(k, { ts: Float64Array.from(ts), rows: ts.map((t) => snaps.get(t)!.sort((a, b) => b.mem_mb - a.mem_mb)) });
  }
  return out;
}

/** Every phase interval of a lane containing t (outermost first). */
export function phasesAt(track: PhaseTrack, t: number): number[] {
  const out: number[] = [];
  const hi = lowerBound(track.t0, t + 1e-9);
  for (let i = 0; i < hi; i++) if (track.t1[i]! >= t) out.push(i);
  return out.sort((a, b) => track.depth[a]! - track.depth[b]!);
}

/** Nearest GPU sample to t, ignoring gap markers. */
export function gpuSampleAt(track: GpuTrack, t: number): { ts: number; util: number; mem: number } | null {
  let i = nearestIndex(track.ts, t);
  if (i < 0) return null;
  if (Number.isNaN(track.util[i]!)) i = i > 0 ? i - 1 : i + 1;
  if (i < 0 || i >= track.ts.length || Number.isNaN(track.util[i]!)) return null;
  return { ts: track.ts[i]!, util: track.util[i]!, mem: track.mem[i]! };
}

/** Processes of the snapshot nearest to t (largest memory first). */
export function processesAt(track: ProcessTrack | null | undefined, t: number, top = 3): ProcessRow[] {
  if (!track) return [];
  const i = nearestIndex(track.ts, t);
  return i < 0 ? [] : track.rows[i]!.slice(0, top);
}

/** The overlay value covering a lane at t: the span's engine and its nearest sample. */
export function overlayAt(lane: LaneRow, model: LanesModel, t: number): { addr: string; value: number } | null {
  if (!model.overlay) return null;
  const span = lane.overlay.find((s) => t >= s.t0 && t < s.t1);
  if (!span) return null;
  const s = model.overlay.series[span.series]!;
  const i = nearestIndex(s.ts, t);
  if (i < 0) return null;
  return { addr: s.addr, value: s.value[i]! };
}

/** Sort lanes for display: index order (the server's order); helper for node grouping labels. */
export function nodeOrder(nodes: Iterable<string>): string[] {
  return [...new Set(nodes)].sort(compareLabels);
}
