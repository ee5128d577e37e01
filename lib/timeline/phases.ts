/**
 * Phase lanes (docs/api.md 8.4): raw Timer events → per-GPU intervals, OPEN markers resolved,
 * rollout-manager events painted onto the engine GPUs of each topology window, and the
 * synthetic `initialize` band from `meta.start_ts`.
 */
import { lowerBound, upperBound } from "@/lib/bisect";
import { timeSlicer } from "@/lib/timeline/slice";
import { CHUNK, cmpStr, factsBounds, filesStamp, MASK, OPEN_T1, SHIFT, unmatchedAcrossHours, type LaneInfo, type MetricStore, type PhaseBlock } from "@/lib/store/telemetry";
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
  const files = await sourceFiles(store, t1);
  const version = files.map((f) => `${f.key}:${f.size}`).join(",");
  const last = files[files.length - 1]?.key ?? "";
  const key = `phases:source:${last}`;
  const source = await store.memo(key, version, () => readSource(store, files));
  // A large source is not kept in memory: it would pin every block past the stream's byte
  // budget. Its whole-run users keep their results (keptMemo); windows read what they need.
  let rows = 0;
  for (const b of source.blocks) rows += b.n;
  if (rows > (store.phaseIndexMaxRows ?? PHASE_INDEX_MAX_ROWS)) store.forget(key, version);
  return source;
}

async function readSource(store: MetricStore, files: Awaited<ReturnType<typeof sourceFiles>>): Promise<PhaseSource> {
  const blocks = await store.phases.read(files);
  return { blocks, unmatched: unmatchedOpen(blocks) };
}

/**
 * What a window needs to know of a phase source without reading it: per partition its t0
 * range (`minT`, `maxT` as `PhaseBlock` has them) and its OPEN markers that have no closed
 * twin anywhere in the source, plus the source's row count. Kept across restarts for a run
 * that is not followed (MetricStore.keptMemo), so a restarted server does not read every
 * partition of a long run to answer a 4 h window.
 */
interface PhasePlan {
  keys: string[];
  minT: number[];
  maxT: number[];
  unmatched: number[][];
  rows: number;
}

async function phasePlan(store: MetricStore, t1: number | null): Promise<{ plan: PhasePlan; files: Awaited<ReturnType<typeof sourceFiles>> }> {
  const files = await sourceFiles(store, t1);
  const last = files[files.length - 1]?.key ?? "";
  const plan = await store.keptMemo(
    `phases.plan.${last}`,
    filesStamp(files),
    async () => {
      // Hours with an index (docs/formats.md §4.16) are not parsed: their facts suffice.
      const facts = await store.phaseHourFacts(files);
      const across = facts && unmatchedAcrossHours(facts);
      if (facts && across) {
        const bounds = facts.map(factsBounds);
        return { keys: files.map((f) => f.key), minT: bounds.map((b) => b.minT), maxT: bounds.map((b) => b.maxT), unmatched: across, rows: facts.reduce((n, f) => n + f.rows, 0) };
      }
      // Not through phaseSource's memo: that would hold every block of a large source.
      const { blocks, unmatched } = await readSource(store, files);
      let rows = 0;
      for (const b of blocks) rows += b.n;
      return {
        keys: files.map((f) => f.key),
        minT: blocks.map((b) => b.minT),
        maxT: blocks.map((b) => b.maxT),
        unmatched: unmatched.map((u) => [...u]),
        rows,
      };
    },
  );
  return { plan, files };
}

/**
 * The part of a large source (above PHASE_INDEX_MAX_ROWS rows) that a window [t0, t1]
 * reads: the partitions that can hold an interval of the window — by the same tests the
 * windowed pass applies to each block — and those with unresolved OPEN markers. Null for a
 * smaller source (the whole source and its index answer it), or when the plan no longer
 * matches the files.
 */
async function windowSource(store: MetricStore, t0: number | null, t1: number | null): Promise<PhaseSource | null> {
  const { plan, files } = await phasePlan(store, t1);
  if (plan.rows <= (store.phaseIndexMaxRows ?? PHASE_INDEX_MAX_ROWS) || plan.keys.length !== files.length) return null;
  const pick: number[] = [];
  for (let k = 0; k < files.length; k++) {
    if (files[k]!.key !== plan.keys[k]) return null;
    if (t1 !== null && plan.minT[k]! >= t1) continue;
    if (t0 !== null && plan.maxT[k]! <= t0 && plan.unmatched[k]!.length === 0) continue;
    pick.push(k);
  }
  const blocks = await store.phases.read(pick.map((k) => files[k]!));
  return { blocks, unmatched: pick.map((k) => new Set(plan.unmatched[k])) };
}

function sourceFiles(store: MetricStore, t1: number | null) {
  return store.phases.files().then((all) => all.filter((f) => f.hourStart === null || t1 === null || f.hourStart <= t1 + MAX_WINDOW_S));
}

/**
 * OPEN markers without a closed twin — same (node, rank, name, t0) — anywhere in `blocks`.
 * Each block resolves its own markers once (memoised on the block); only the few left
 * over (an interval that closed in a later hour, or a phase still running) are looked up
 * in the other blocks whose t0 range can hold a twin.
 */
function unmatchedOpen(blocks: readonly PhaseBlock[]): Set<number>[] {
  const local = blocks.map((b) => b.localUnmatched());
  // Markers by t0, then by (node, rank, name): every rank opens a step's phase at the same
  // t0, so a list per t0 alone held ~1024 markers, each compared with every closed row of
  // that t0 (the 1024-GPU day's oldest window: ~150 ms). Candidates are still compared
  // field by field (a NaN rank never matches, as with ===).
  const byT0 = new Map<number, Map<string, [number, number][]>>();
  let lo = Infinity;
  let hi = -Infinity;
  local.forEach((list, k) => {
    const b = blocks[k]!;
    for (const i of list) {
      const t = b.t0[i]!;
      let byKey = byT0.get(t);
      if (!byKey) byT0.set(t, (byKey = new Map<string, [number, number][]>()));
      const key = markerKey(b, i);
      const l = byKey.get(key);
      if (l) l.push([k, i]);
      else byKey.set(key, [[k, i]]);
      if (t < lo) lo = t;
      if (t > hi) hi = t;
    }
  });
  const matched = blocks.map(() => new Set<number>());
  if (byT0.size > 0) {
    // A bitmap on a cheap hash of t0 skips nearly every row before the Map lookup (equal
    // numbers hash equally; NaN lands in slot 0 like any other value that truncates to 0).
    const seen = new Uint8Array(65536);
    let anyNaN = false;
    for (const t of byT0.keys()) {
      seen[(t * 1024) & 0xffff] = 1;
      if (Number.isNaN(t)) anyNaN = true;
    }
    blocks.forEach((b, k2) => {
      // every row's t0 lies in [minT, maxT] (unless it is NaN)
      if (!anyNaN && !(b.maxT >= lo && b.minT <= hi)) return;
      const { t0, t1, node, rank, name } = b;
      for (let j = 0; j < b.n; j++) {
        const t = t0[j]!;
        if (seen[(t * 1024) & 0xffff] === 0 || t1[j] === OPEN_T1) continue;
        const l = byT0.get(t)?.get(markerKey(b, j));
        if (!l) continue;
        for (const [k, i] of l) {
          if (k === k2) continue;
          const a = blocks[k]!;
          if (a.node[i] === node[j] && a.rank[i] === rank[j] && a.name[i] === name[j]) matched[k]!.add(i);
        }
      }
    });
  }
  return local.map((list, k) => new Set(list.filter((i) => !matched[k]!.has(i))));
}

/** A marker's (node, rank, name) as a Map key (string ids are the store's, shared by its blocks). */
function markerKey(b: PhaseBlock, i: number): string {
  return `${b.node[i]!},${b.rank[i]!},${b.name[i]!}`;
}

/**
 * The intervals of one lane, as columns (strings as `Dicts.phaseStrings` ids), in output
 * order: sorted by t0, stable with respect to event order.
 */
export interface LaneIntervals {
  node: string;
  gpu: number;
  n: number;
  t0: Float64Array;
  t1: Float64Array;
  name: Uint32Array;
  rank: Float64Array;
  role: Uint32Array;
}

/** GPU indices below this find their lane slot in a typed row per node (laneIntervals). */
const SMALL_GPUS = 16;
const NO_SLOT = -2;

/** One chunk of each of an IntervalPool's columns (CHUNK rows). */
export interface PoolChunks {
  slot: Uint32Array;
  t0: Float64Array;
  t1: Float64Array;
  name: Uint32Array;
  rank: Float64Array;
  role: Uint32Array;
}

/**
 * Chunks of released pools, for the next pool to fill (`IntervalPool.release`): at most
 * SPARE_CHUNKS sets (36 bytes a row × CHUNK rows = 2.25 MiB a set, 45 MiB in all — a cold
 * 4 h window of a 1024-GPU day fills ~14).
 */
const spare: PoolChunks[] = [];
const SPARE_CHUNKS = 20;

function poolChunks(): PoolChunks {
  return (
    spare.pop() ?? {
      slot: new Uint32Array(CHUNK),
      t0: new Float64Array(CHUNK),
      t1: new Float64Array(CHUNK),
      name: new Uint32Array(CHUNK),
      rank: new Float64Array(CHUNK),
      role: new Uint32Array(CHUNK),
    }
  );
}

/**
 * The intervals one pass finds for every lane, in chunked columns of CHUNK rows (no
 * regrowth copies), each with its lane's slot; `split` hands each lane its own, in the
 * order they were found. Columns per lane that doubled on their own meant 1024 lanes × 5
 * columns × ~6 regrowths of small typed arrays for one cold 4 h window of a 1024-GPU day
 * (~680 k intervals): ~280 ms of allocation and copying, the largest share of the fleet
 * view's cold cost (#20); one pool that doubled still copied for ~115 ms.
 *
 * A pool whose user is done with it is `release`d: its chunks go to the next pool, which
 * then writes memory already in place — fresh memory costs ~11 µs a 4 KiB page on the
 * bench's VMs, ~90 ms for such a window's 32 MB, and fresh buffers count towards the
 * young generation's external bytes, for which V8 starts scavenges (docs/bench.md
 * "2026-12-06 g"). Rows past `length` of a reused chunk hold an older pool's values:
 * every reader stops at `length` (`forEachChunk`).
 */
export class IntervalPool {
  private readonly filled: PoolChunks[] = [];
  private n = 0;
  get length(): number {
    return this.n;
  }
  push(slot: number, t0: number, t1: number, name: number, rank: number, role: number): void {
    const off = this.n & MASK;
    let c = this.filled[this.n >>> SHIFT];
    if (c === undefined) this.filled.push((c = poolChunks()));
    c.slot[off] = slot;
    c.t0[off] = t0;
    c.t1[off] = t1;
    c.name[off] = name;
    c.rank[off] = rank;
    c.role[off] = role;
    this.n++;
  }
  /**
   * Hands the chunks to the next pool (up to SPARE_CHUNKS sets are kept) and empties this
   * one. Only once nothing reads the pool's columns any more: `split`'s lanes are copies.
   */
  release(): void {
    for (const c of this.filled) if (spare.length < SPARE_CHUNKS) spare.push(c);
    this.filled.length = 0;
    this.n = 0;
  }
  /** Whether some interval starts at NaN (it has no place in a lane's t0 order). */
  anyNaNStart(): boolean {
    let nan = false;
    this.forEachChunk(({ t0 }, m) => {
      for (let i = 0; i < m && !nan; i++) if (Number.isNaN(t0[i]!)) nan = true;
    });
    return nan;
  }
  /** Calls `f(chunks, count)` for the filled part of each chunk set, in the order pushed. */
  forEachChunk(f: (chunks: PoolChunks, count: number) => void): void {
    const n = this.n;
    for (let k = 0; k * CHUNK < n; k++) f(this.filled[k]!, Math.min(CHUNK, n - k * CHUNK));
  }
  /**
   * Each slot's intervals (`lanes[slot]` names it), lanes sorted by (node, gpu), each lane
   * sorted by t0 (stable: ties keep the order found). The lanes' columns are views of one
   * buffer per column.
   */
  split(lanes: readonly { node: string; gpu: number }[]): LaneIntervals[] {
    const count = new Uint32Array(lanes.length);
    this.forEachChunk(({ slot }, m) => {
      for (let i = 0; i < m; i++) count[slot[i]!]!++;
    });
    const order = lanes.map((_, k) => k).filter((k) => count[k]! > 0);
    order.sort((x, y) => cmpStr(lanes[x]!.node, lanes[y]!.node) || lanes[x]!.gpu - lanes[y]!.gpu);
    const at = new Uint32Array(lanes.length);
    let w = 0;
    for (const k of order) {
      at[k] = w;
      w += count[k]!;
    }
    const t0 = new Float64Array(w);
    const t1 = new Float64Array(w);
    const name = new Uint32Array(w);
    const rank = new Float64Array(w);
    const role = new Uint32Array(w);
    this.forEachChunk(({ slot: slots, t0: c0, t1: c1, name: cn, rank: cr, role: co }, m) => {
      for (let i = 0; i < m; i++) {
        const j = at[slots[i]!]!++;
        t0[j] = c0[i]!;
        t1[j] = c1[i]!;
        name[j] = cn[i]!;
        rank[j] = cr[i]!;
        role[j] = co[i]!;
      }
    });
    return order.map((k) => {
      const n = count[k]!;
      const end = at[k]!;
      const from = end - n;
      const out: LaneIntervals = {
        node: lanes[k]!.node,
        gpu: lanes[k]!.gpu,
        n,
        t0: t0.subarray(from, end),
        t1: t1.subarray(from, end),
        name: name.subarray(from, end),
        rank: rank.subarray(from, end),
        role: role.subarray(from, end),
      };
      let sorted = true;
      for (let i = 1; i < n && sorted; i++) if (!(out.t0[i - 1]! <= out.t0[i]!)) sorted = false;
      if (!sorted) {
        const src = { t0: out.t0.slice(), t1: out.t1.slice(), name: out.name.slice(), rank: out.rank.slice(), role: out.role.slice() };
        const perm = stableOrder(src.t0, n);
        for (let q = 0; q < n; q++) {
          const i = perm[q]!;
          out.t0[q] = src.t0[i]!;
          out.t1[q] = src.t1[i]!;
          out.name[q] = src.name[i]!;
          out.rank[q] = src.rank[i]!;
          out.role[q] = src.role[i]!;
        }
      }
      return out;
    });
  }
}

/**
 * Positions of `t0[0..n)` in ascending order, stable — what sorting the records by
 * `(a, b) => a.t0 - b.t0` gives. A lane is nearly sorted (an outer phase is logged after
 * the inner ones it encloses), so an insertion sort costs about n; a NaN stamp makes the
 * comparator inconsistent, and then the array sort itself decides, as it always did.
 */
function stableOrder(t0: Float64Array, n: number): ArrayLike<number> {
  for (let i = 0; i < n; i++) if (Number.isNaN(t0[i]!)) return Array.from({ length: n }, (_, k) => k).sort((i, j) => t0[i]! - t0[j]!);
  const idx = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const key = t0[i]!;
    let j = i;
    while (j > 0 && t0[idx[j - 1]!]! > key) {
      idx[j] = idx[j - 1]!;
      j--;
    }
    idx[j] = i;
  }
  return idx;
}

/** `phases_by_lane` as objects (docs/api.md 8.4), sorted by (node, gpu, t0). */
export async function phasesByLane(
  store: MetricStore,
  t0: number | null,
  t1: number | null,
  selection: LaneSet | null,
): Promise<PhaseInterval[]> {
  const lanes = await laneIntervals(store, t0, t1, selection);
  const str = store.dicts.phaseStrings.values;
  let total = 0;
  for (const l of lanes) total += l.n;
  const out = new Array<PhaseInterval>(total);
  let w = 0;
  const pause = timeSlicer();
  for (const l of lanes) {
    await pause();
    const { node, gpu } = l;
    for (let i = 0; i < l.n; i++)
      out[w++] = { name: str[l.name[i]!]!, t0: l.t0[i]!, t1: l.t1[i]!, node, gpu, rank: l.rank[i]!, role: str[l.role[i]!]! };
  }
  return out;
}

/** Phase lanes (docs/api.md 8.4) as per-lane columns, lanes sorted by (node, gpu). */
export async function laneIntervals(
  store: MetricStore,
  t0: number | null,
  t1: number | null,
  selection: LaneSet | null,
): Promise<LaneIntervals[]> {
  const found = await findIntervals(store, t0, t1, selection);
  if (Array.isArray(found)) return found;
  const lanes = found.pool.split(found.lanes);
  found.pool.release();
  return lanes;
}

/**
 * A window's intervals as one pass found them, before `split`: `pool.slot[i]` indexes
 * `lanes`, and within a lane the pool order is the order found, which a lane's stable
 * t0 sort keeps for ties. A consumer that only needs each lane's intervals in that sorted
 * order as a key (the phase heatmap: the last interval painted over a cell wins) can skip
 * the split's scatter and sort (~65 ms of a cold 4 h fleet window of a 1024-GPU day).
 */
export interface FoundIntervals {
  lanes: readonly { node: string; gpu: number }[];
  pool: IntervalPool;
}

/**
 * `laneIntervals` without the split where a pass found them; the lanes as they are where
 * the whole-source index answered.
 */
export async function findIntervals(
  store: MetricStore,
  t0: number | null,
  t1: number | null,
  selection: LaneSet | null,
): Promise<LaneIntervals[] | FoundIntervals> {
  const [windowed, range, windows, lanes] = await Promise.all([
    windowSource(store, t0, t1),
    store.timeRange(),
    topologyWindows(store),
    store.laneIndex(),
  ]);
  const source = windowed ?? (await phaseSource(store, t1));
  const { blocks, unmatched } = source;
  const edge = range ? range[1] : 0;
  const strings = store.dicts.phaseStrings;
  const str = strings.values;
  const rolloutManager = strings.id("rollout_manager");
  const covered = windows.map((w) => coveredLanes(w.engines, lanes).map(([node, gpu]): [number, number] => [strings.id(node), gpu]));

  // Asked again over the same source: answer from the whole-source index (built once),
  // unless the source is too large to index at once (see PHASE_INDEX_MAX_ROWS).
  const winSig = windows.map((w) => `${w.t0}:${w.t1}:${w.engines.length}`).join(",");
  const entry = indexCache.get(source);
  if (windowed) {
    /* a large source: the windowed pass below */
  } else if (entry && entry.edge === edge && entry.lanes === lanes && entry.winSig === winSig) {
    entry.index ??= buildIndex(source, edge, windows, covered, str, rolloutManager);
    if (entry.index.ok) return await sliceIndex(store, entry.index, t0, t1, selection);
  } else indexCache.set(source, { edge, lanes, winSig, index: null });

  // lanes by (node id, gpu): numeric keys for the usual small GPU indices; slot -1 = not selected
  const pool = new IntervalPool();
  const found: { node: string; gpu: number }[] = [];
  const slots = new Map<number | string, number>();
  const key = (node: number, gpu: number): number | string =>
    gpu >= 0 && gpu < 65536 && Number.isInteger(gpu) ? node * 65536 + gpu : `${node}\u0000${gpu}`;
  const slotOf = (nodeId: number, gpu: number): number => {
    const k = key(nodeId, gpu);
    let slot = slots.get(k);
    if (slot === undefined) {
      slot = selection && !selection.has(str[nodeId]!, gpu) ? -1 : found.push({ node: str[nodeId]!, gpu }) - 1;
      slots.set(k, slot);
    }
    return slot;
  };
  // the usual GPU indices 0…SMALL_GPUS-1 of a node: a typed row per node id in front of the Map
  const byNode: (Int32Array | undefined)[] = [];
  const slotFast = (nodeId: number, gpu: number): number => {
    if (!((gpu | 0) === gpu && gpu >= 0 && gpu < SMALL_GPUS)) return slotOf(nodeId, gpu);
    const row = (byNode[nodeId] ??= new Int32Array(SMALL_GPUS).fill(NO_SLOT));
    let slot = row[gpu]!;
    if (slot === NO_SLOT) slot = row[gpu] = slotOf(nodeId, gpu);
    return slot;
  };
  const push = (nodeId: number, gpu: number, t0: number, t1: number, name: number, rank: number, role: number) => {
    const slot = slotFast(nodeId, gpu);
    if (slot >= 0) pool.push(slot, t0, t1, name, rank, role);
  };

  const visit = (b: PhaseBlock, i: number, evT1: number) => {
    const evT0 = b.t0[i]!;
    if (t1 !== null && !(evT0 < t1)) return;
    if (t0 !== null && !(evT1 > t0)) return;
    const role = b.role[i]!;
    const name = b.name[i]!;
    const rank = b.rank[i]!;
    if (role === rolloutManager) {
      for (let wi = 0; wi < windows.length; wi++) {
        const w = windows[wi]!;
        const clip0 = Math.max(evT0, w.t0);
        const clip1 = w.t1 === null ? evT1 : Math.min(evT1, w.t1);
        if (clip0 >= clip1) continue;
        for (const [nodeId, gpu] of covered[wi]!) push(nodeId, gpu, clip0, clip1, name, rank, role);
      }
      return;
    }
    const nodeId = b.node[i]!;
    for (let g = b.gpuOff[i]!, end = b.gpuOff[i + 1]!; g < end; g++) push(nodeId, b.gpus[g]!, evT0, evT1, name, rank, role);
  };

  for (let k = 0; k < blocks.length; k++) {
    const b = blocks[k]!;
    // Nothing in the block starts before t1: it cannot overlap.
    if (t1 !== null && b.minT >= t1) continue;
    const open = unmatched[k]!;
    // Closed events all end at or before t0: only unresolved OPEN markers can overlap.
    if (t0 !== null && b.maxT <= t0) {
      for (const i of b.open) if (open.has(i)) visit(b, i, Math.max(edge, b.t0[i]!));
      continue;
    }
    const ends = b.t1;
    for (let i = 0; i < b.n; i++) {
      const e = ends[i]!;
      if (e !== OPEN_T1) visit(b, i, e);
      else if (open.has(i)) visit(b, i, Math.max(edge, b.t0[i]!));
    }
  }

  const meta = store.meta();
  const start = meta?.start_ts;
  if (meta && typeof start === "number" && (t0 === null || t0 <= start)) {
    const initialize = strings.id("initialize");
    const derived = strings.id("derived");
    // each lane's earliest start; a lane starting after the run did gets `initialize` before it
    const first = new Float64Array(found.length).fill(Infinity);
    pool.forEachChunk(({ slot: slots, t0: starts }, m) => {
      for (let i = 0; i < m; i++) {
        const slot = slots[i]!;
        if (starts[i]! < first[slot]!) first[slot] = starts[i]!;
      }
    });
    for (let slot = 0; slot < found.length; slot++) {
      const f = first[slot]!;
      if (f > start && (t1 === null || start < t1) && (t0 === null || f > t0)) pool.push(slot, start, f, initialize, -1, derived);
    }
  }

  return { lanes: found, pool };
}

/**
 * Whole-source index of the phase lanes: every interval of every lane (no window filter),
 * each lane sorted by output t0 exactly as a query's lane is (stable, event order), plus
 * the event's own (t0, t1) — the overlap test applies to the whole event — a running
 * maximum of the event end, and the positions of rollout-manager pieces (whose clipped t0
 * can lie past the query window while the event itself overlaps it). A query's lane is
 * then the filtered subsequence: filtering commutes with a stable sort.
 */
interface IndexLane {
  node: string;
  gpu: number;
  n: number;
  t0: Float64Array;
  t1: Float64Array;
  evT0: Float64Array;
  evT1: Float64Array;
  name: Uint32Array;
  rank: Float64Array;
  role: Uint32Array;
  /** max(evT1[0..i]) */
  maxEnd: Float64Array;
  /** positions of rollout-manager pieces, ascending */
  rm: Int32Array;
}

interface PhaseIndex {
  /** false when some stamp is NaN (the comparator sort is then not a total order) */
  ok: boolean;
  lanes: IndexLane[];
}

/**
 * The whole-source index is built in one go (no turn of the event loop) and holds every
 * interval of the run as JS arrays while it is built: ~0.8 µs and ~1 KB of garbage per row.
 * On a 1024-GPU day (8.3 M phase rows) that held the event loop for 6.5 s on the second
 * query and took the server past 1 GB; a windowed pass over the same 4 h costs 0.6 s.
 * Sources above this many rows are always answered by the windowed pass (#20).
 */
export const PHASE_INDEX_MAX_ROWS = 1_000_000;

const indexCache = new WeakMap<PhaseSource, { edge: number; lanes: readonly LaneInfo[]; winSig: string; index: PhaseIndex | null }>();

function buildIndex(
  source: PhaseSource,
  edge: number,
  windows: readonly { t0: number; t1: number | null }[],
  covered: readonly (readonly [number, number])[][],
  str: readonly string[],
  rolloutManager: number,
): PhaseIndex {
  const { blocks, unmatched } = source;
  type Acc = { node: string; gpu: number; t0: number[]; t1: number[]; evT0: number[]; evT1: number[]; name: number[]; rank: number[]; role: number[]; rm: number[] };
  const accs = new Map<number | string, Acc>();
  const accOf = (nodeId: number, gpu: number): Acc => {
    const k = gpu >= 0 && gpu < 65536 && Number.isInteger(gpu) ? nodeId * 65536 + gpu : `${nodeId}\u0000${gpu}`;
    let a = accs.get(k);
    if (!a) accs.set(k, (a = { node: str[nodeId]!, gpu, t0: [], t1: [], evT0: [], evT1: [], name: [], rank: [], role: [], rm: [] }));
    return a;
  };
  let ok = Number.isFinite(edge);
  const visit = (b: PhaseBlock, i: number, evT1: number) => {
    const evT0 = b.t0[i]!;
    if (Number.isNaN(evT0) || Number.isNaN(evT1)) ok = false;
    const role = b.role[i]!;
    const name = b.name[i]!;
    const rank = b.rank[i]!;
    if (role === rolloutManager) {
      for (let wi = 0; wi < windows.length; wi++) {
        const w = windows[wi]!;
        const clip0 = Math.max(evT0, w.t0);
        const clip1 = w.t1 === null ? evT1 : Math.min(evT1, w.t1);
        if (clip0 >= clip1) continue;
        if (Number.isNaN(clip0) || Number.isNaN(clip1)) ok = false;
        for (const [nodeId, gpu] of covered[wi]!) {
          const a = accOf(nodeId, gpu);
          a.rm.push(a.t0.length);
          a.t0.push(clip0);
          a.t1.push(clip1);
          a.evT0.push(evT0);
          a.evT1.push(evT1);
          a.name.push(name);
          a.rank.push(rank);
          a.role.push(role);
        }
      }
      return;
    }
    const nodeId = b.node[i]!;
    for (let g = b.gpuOff[i]!, end = b.gpuOff[i + 1]!; g < end; g++) {
      const a = accOf(nodeId, b.gpus[g]!);
      a.t0.push(evT0);
      a.t1.push(evT1);
      a.evT0.push(evT0);
      a.evT1.push(evT1);
      a.name.push(name);
      a.rank.push(rank);
      a.role.push(role);
    }
  };
  blocks.forEach((b, k) => {
    const open = unmatched[k]!;
    const ends = b.t1;
    for (let i = 0; i < b.n; i++) {
      const e = ends[i]!;
      if (e !== OPEN_T1) visit(b, i, e);
      else if (open.has(i)) visit(b, i, Math.max(edge, b.t0[i]!));
    }
  });
  if (!ok) return { ok, lanes: [] };
  const lanes = [...accs.values()]
    .sort((a, b) => cmpStr(a.node, b.node) || a.gpu - b.gpu)
    .map((a): IndexLane => {
      const n = a.t0.length;
      const order = Array.from({ length: n }, (_, i) => i).sort((i, j) => a.t0[i]! - a.t0[j]!);
      const isRm = new Uint8Array(n);
      for (const p of a.rm) isRm[p] = 1;
      const lane: IndexLane = {
        node: a.node,
        gpu: a.gpu,
        n,
        t0: new Float64Array(n),
        t1: new Float64Array(n),
        evT0: new Float64Array(n),
        evT1: new Float64Array(n),
        name: new Uint32Array(n),
        rank: new Float64Array(n),
        role: new Uint32Array(n),
        maxEnd: new Float64Array(n),
        rm: new Int32Array(a.rm.length),
      };
      let r = 0;
      let m = -Infinity;
      order.forEach((i, k) => {
        lane.t0[k] = a.t0[i]!;
        lane.t1[k] = a.t1[i]!;
        lane.evT0[k] = a.evT0[i]!;
        lane.evT1[k] = a.evT1[i]!;
        lane.name[k] = a.name[i]!;
        lane.rank[k] = a.rank[i]!;
        lane.role[k] = a.role[i]!;
        m = Math.max(m, a.evT1[i]!);
        lane.maxEnd[k] = m;
        if (isRm[i]) lane.rm[r++] = k;
      });
      return lane;
    });
  return { ok, lanes };
}

/** A query's lanes from the index: the overlap test on each event, the initialize band. */
async function sliceIndex(store: MetricStore, index: PhaseIndex, t0: number | null, t1: number | null, selection: LaneSet | null): Promise<LaneIntervals[]> {
  const pause = timeSlicer();
  const strings = store.dicts.phaseStrings;
  const meta = store.meta();
  const start = meta?.start_ts;
  const withInit = meta !== null && typeof start === "number" && (t0 === null || t0 <= start);
  const out: LaneIntervals[] = [];
  const pick: number[] = [];
  for (const l of index.lanes) {
    if (selection && !selection.has(l.node, l.gpu)) continue;
    await pause();
    // [lo, hi): events that may overlap — before lo every event ends at or before t0; from
    // hi on, only rollout-manager pieces can still start (as events) before t1
    const hi = t1 === null ? l.n : lowerBound(l.t0, t1, 0, l.n);
    const lo = t0 === null ? 0 : upperBound(l.maxEnd, t0, 0, l.n);
    pick.length = 0;
    for (let p = lo; p < hi; p++) if ((t1 === null || l.evT0[p]! < t1) && (t0 === null || l.evT1[p]! > t0)) pick.push(p);
    for (const p of l.rm) if (p >= hi && p >= lo && (t1 === null || l.evT0[p]! < t1) && (t0 === null || l.evT1[p]! > t0)) pick.push(p);
    if (pick.length === 0) continue;
    const first = l.t0[pick[0]!]!;
    const init = withInit && first > start && (t1 === null || start < t1) && (t0 === null || first > t0);
    const n = pick.length + (init ? 1 : 0);
    const lane: LaneIntervals = {
      node: l.node,
      gpu: l.gpu,
      n,
      t0: new Float64Array(n),
      t1: new Float64Array(n),
      name: new Uint32Array(n),
      rank: new Float64Array(n),
      role: new Uint32Array(n),
    };
    let k = 0;
    if (init) {
      lane.t0[0] = start!;
      lane.t1[0] = first;
      lane.name[0] = strings.id("initialize");
      lane.rank[0] = -1;
      lane.role[0] = strings.id("derived");
      k = 1;
    }
    for (const p of pick) {
      lane.t0[k] = l.t0[p]!;
      lane.t1[k] = l.t1[p]!;
      lane.name[k] = l.name[p]!;
      lane.rank[k] = l.rank[p]!;
      lane.role[k] = l.role[p]!;
      k++;
    }
    out.push(lane);
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
