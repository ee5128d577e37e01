/**
 * Drift explorer (docs/api.md 9.2 `GET /api/rollout/{id}/drift`, docs/views.md 4.6): where
 * the train–inference mismatch of one step lives. Per loss-masked response token,
 * `lp_diff = log_probs − rollout_log_probs` (both from the train dump; the rollout dump's
 * `rollout_log_probs` when the train dump has none) and the importance ratio
 * `exp(lp_diff)`, broken down by response position, segment, engine or weight version.
 *
 * Two cache levels: the step's tokens (two per-token fields joined, reduced to compact
 * typed arrays; 2 steps per reader in memory) and each answer per (step, params), which
 * `DumpSource.derived` keeps in memory and next to the summary cache on disk, under the
 * step's source key (any changed dump file recomputes).
 *
 * Segments (from the loss mask, the way the Sample view splits turns, docs/views.md 6.3):
 * the response's loss-masked runs are the assistant turns and the unmasked runs between
 * them the tool results; `after_tool` = the first N tokens of a turn that follows a tool
 * result, `thinking` = inside `<think>…</think>` (needs the run's tokenizer),
 * `final_answer` = the rest of the last turn, `text` = the rest. A token's weight version
 * is its turn's entry of `weight_versions` when there is one per turn, else the sample's
 * last.
 */
import type { PerTokenField, SampleRecord, TokenTextDecoder, TrainRow } from "@/lib/store/dumps";
import type { DumpSource } from "@/lib/timeline/dump-source";
import { computeStaleness, type StalenessAnswer } from "./staleness";

export const DRIFT_BY = ["position", "segment", "engine", "version"] as const;
export type DriftBy = (typeof DRIFT_BY)[number];
export const SEGMENTS = ["text", "after_tool", "thinking", "final_answer"] as const;
export type Segment = (typeof SEGMENTS)[number];

export const DRIFT_DEFAULTS = { by: "position" as DriftBy, bins: 16, clip_lo: 0.8, clip_hi: 1.25, after_tool: 32, hist_bins: 64 };
/** Samples listed per bin (by |lp_diff| mass). */
export const TOP_SAMPLES = 20;
/** Bump when the answer's shape or rules change (invalidates the disk cache). */
const DRIFT_VERSION = 1;

export interface DriftParams {
  by: DriftBy;
  bins: number;
  clip_lo: number;
  clip_hi: number;
  after_tool: number;
}

/** What the drift layer needs from the dump reader (`DumpReader` has it all). */
export type DriftDumps = Pick<DumpSource, "listRolloutIds"> &
  Required<Pick<DumpSource, "derived" | "reduceTrainRows" | "tokenDecoder" | "stepKey" | "hasTrainShards">>;

export function hasDriftSupport(d: DumpSource): d is DumpSource & DriftDumps {
  return (
    typeof d.derived === "function" &&
    typeof d.reduceTrainRows === "function" &&
    typeof d.stepKey === "function" &&
    typeof d.hasTrainShards === "function"
  );
}

// ---- step tokens

export interface StepSampleInfo {
  sample_index: number;
  response_length: number;
  /** Absolute position of response token 0 (total_length − response_length). */
  prompt_len: number;
  engine: string | null;
}

/** The loss-masked tokens of one train step, column-wise. */
export interface StepTokens {
  n: number;
  diff: Float32Array;
  /** Response position. */
  pos: Int32Array;
  /** Offset within its turn when the turn follows a tool result, else −1. */
  toff: Int32Array;
  /** bit 0: inside `<think>`; bit 1: in the last turn. */
  flags: Uint8Array;
  ver: Int32Array;
  smp: Int32Array;
  samples: StepSampleInfo[];
  versions: string[];
  /** Segments need the tokenizer for `thinking`. */
  thinkingKnown: boolean;
  /** Train samples without both log-prob arrays (left out). */
  missing: number;
  /** Every rollout sample's staleness inputs (the summary's columns, docs/api.md 3.1). */
  stale: { sample_index: number | null; staleness: number | null; response_length: number }[];
}

const DIGITS = /^[0-9]+$/;

/** `staleness` of the summary: rolloutId − the oldest numeric weight version, null without one. */
function stalenessOf(s: SampleRecord, rolloutId: number): number | null {
  let vmin: number | null = null;
  for (const v of s.weightVersions) if (DIGITS.test(v)) vmin = Math.min(vmin ?? Infinity, Number.parseInt(v, 10));
  return vmin === null ? null : rolloutId - vmin;
}

interface RowTokens {
  info: StepSampleInfo;
  diff: Float32Array;
  pos: Int32Array;
  toff: Int32Array;
  flags: Uint8Array;
  ver: string[];
  verIdx: Int32Array;
}

const THINK_OPEN = 1;
const THINK_CLOSE = 2;

function thinkClassifier(decoder: TokenTextDecoder | null): ((id: number) => number) | null {
  if (!decoder) return null;
  const memo = new Map<number, number>();
  return (id) => {
    let c = memo.get(id);
    if (c === undefined) {
      let t = "";
      try {
        t = decoder.decodeOne(id);
      } catch {
        t = "";
      }
      c = t.includes("</think>") ? THINK_CLOSE : t.includes("<think>") ? THINK_OPEN : 0;
      memo.set(id, c);
    }
    return c;
  };
}

/** One train row → its loss-masked tokens (null when a log-prob array is missing). */
export function rowTokens(row: TrainRow, sample: SampleRecord | undefined, classify: ((id: number) => number) | null): RowTokens | null {
  const R = row.responseLength;
  const la = row.fields.log_probs;
  let lb = row.fields.rollout_log_probs;
  if (lb === null && sample?.rolloutLogProbs && sample.rolloutLogProbs.length === R) lb = sample.rolloutLogProbs;
  if (la === null || lb === null || la.length !== R || lb.length !== R) return null;
  // The loss mask once as bytes (read per position three times below).
  const mask = row.lossMask;
  const on = new Uint8Array(R);
  const M = Math.min(R, mask.length);
  let runs = 0;
  let k = 0;
  for (let i = 0; i < M; i++) {
    if ((mask[i] as number) > 0) {
      on[i] = 1;
      k++;
      if (i === 0 || on[i - 1] === 0) runs++;
    }
  }
  const versions = sample?.weightVersions ?? [];
  const perTurn = versions.length === runs && runs > 0;
  const lastVersion = versions.length ? (versions[versions.length - 1] as string) : "none";
  const tokens = sample?.tokens;
  const offset = tokens && tokens.length >= R ? tokens.length - R : -1;
  const cls = classify && offset >= 0 ? classify : null;
  const diff = new Float32Array(k);
  const pos = new Int32Array(k);
  const toff = new Int32Array(k);
  const flags = new Uint8Array(k);
  const verIdx = new Int32Array(k);
  const verList: string[] = [];
  const verMap = new Map<string, number>();
  const verOf = (v: string) => {
    let i = verMap.get(v);
    if (i === undefined) {
      i = verList.length;
      verMap.set(v, i);
      verList.push(v);
    }
    return i;
  };
  // A turn's version index, resolved once per turn (not per token); a row without masked
  // tokens registers no version (as when it was resolved per token).
  const lastIdx = perTurn || k === 0 ? -1 : verOf(lastVersion);
  let turnVer = lastIdx;
  let turn = -1;
  let runStart = 0;
  let inThink = false;
  let j = 0;
  for (let i = 0; i < R; i++) {
    let think = false;
    if (cls !== null) {
      const c = cls((tokens as ArrayLike<number>)[offset + i] as number);
      if (c === THINK_OPEN) inThink = true;
      think = inThink;
      if (c === THINK_CLOSE) {
        think = true;
        inThink = false;
      }
    }
    if (on[i] === 0) continue;
    if (i === 0 || on[i - 1] === 0) {
      turn++;
      runStart = i;
      if (perTurn) turnVer = verOf(versions[turn] as string);
    }
    diff[j] = Math.fround((la[i] as number) - (lb[i] as number));
    pos[j] = i;
    toff[j] = turn === 0 ? -1 : i - runStart;
    flags[j] = (think ? 1 : 0) | (turn === runs - 1 ? 2 : 0);
    verIdx[j] = turnVer;
    j++;
  }
  return {
    info: { sample_index: row.sampleIndex, response_length: R, prompt_len: row.totalLength - R, engine: sample?.engine ?? null },
    diff,
    pos,
    toff,
    flags,
    ver: verList,
    verIdx,
  };
}

const FIELDS: readonly PerTokenField[] = ["log_probs", "rollout_log_probs"];

/**
 * The step's loss-masked tokens. `thinking`: also tell `<think>` tokens apart, which needs
 * the rollout dump's token ids and the tokenizer — only the segment breakdown reads that
 * bit, so the other breakdowns and the quantiles join without the token ids (the rollout
 * dump's per-token lists are then skipped, the larger part of its parse). Without token
 * ids the rollout dump's `rollout_log_probs` are not at hand either; a step that needs
 * them (a train row without its own) is joined again with the lists, so every answer is
 * the one the full join gives.
 */
export async function extractStepTokens(dumps: DriftDumps, rolloutId: number, thinking = true): Promise<StepTokens> {
  const decoder = thinking ? await dumps.tokenDecoder() : null;
  const classify = thinkClassifier(decoder);
  let needLists = false;
  const lite = (row: TrainRow, sample: SampleRecord | undefined) => {
    if (row.fields.log_probs !== null && row.fields.rollout_log_probs === null) needLists = true;
    return rowTokens(row, sample, null);
  };
  let joined = await dumps.reduceTrainRows(rolloutId, FIELDS, thinking ? (row, sample) => rowTokens(row, sample, classify) : lite, {
    withTokens: decoder !== null,
  });
  if (!thinking && needLists && (await dumps.tokenDecoder()) !== null) {
    joined = await dumps.reduceTrainRows(rolloutId, FIELDS, (row, sample) => rowTokens(row, sample, null), { withTokens: true });
  }
  const { rows, samples } = joined;
  const parts = [...rows.values()];
  const present = parts.filter((p): p is RowTokens => p !== null);
  present.sort((a, b) => a.info.sample_index - b.info.sample_index);
  let n = 0;
  for (const p of present) n += p.diff.length;
  const out: StepTokens = {
    n,
    diff: new Float32Array(n),
    pos: new Int32Array(n),
    toff: new Int32Array(n),
    flags: new Uint8Array(n),
    ver: new Int32Array(n),
    smp: new Int32Array(n),
    samples: present.map((p) => p.info),
    versions: [],
    thinkingKnown: thinking && decoder !== null,
    missing: parts.length - present.length,
    stale: samples.map((s) => ({ sample_index: s.index, staleness: stalenessOf(s, rolloutId), response_length: s.responseLength })),
  };
  const vmap = new Map<string, number>();
  let o = 0;
  present.forEach((p, si) => {
    const remap = new Int32Array(p.ver.length);
    p.ver.forEach((v, k) => {
      let i = vmap.get(v);
      if (i === undefined) {
        i = out.versions.length;
        vmap.set(v, i);
        out.versions.push(v);
      }
      remap[k] = i;
    });
    const len = p.diff.length;
    out.diff.set(p.diff, o);
    out.pos.set(p.pos, o);
    out.toff.set(p.toff, o);
    out.flags.set(p.flags, o);
    out.smp.fill(si, o, o + len);
    const vi = p.verIdx;
    for (let t = 0; t < len; t++) out.ver[o + t] = remap[vi[t] as number] as number;
    o += len;
  });
  return out;
}

interface TokenCacheEntry {
  key: string;
  thinking: boolean;
  p: Promise<StepTokens>;
}

/** Step tokens, 2 steps per reader in memory, keyed by the step's source key. */
const tokenCache = new WeakMap<object, Map<number, TokenCacheEntry>>();

/**
 * The step's tokens, shared by every breakdown of the step: an entry joined with the
 * thinking split answers every request, one without answers all but `by=segment` (which
 * joins again and keeps the fuller entry).
 */
export async function stepTokens(dumps: DriftDumps, rolloutId: number, thinking = false): Promise<StepTokens> {
  const key = await dumps.stepKey(rolloutId, false);
  let m = tokenCache.get(dumps);
  if (!m) tokenCache.set(dumps, (m = new Map<number, TokenCacheEntry>()));
  const hit = m.get(rolloutId);
  if (hit && hit.key === key && (hit.thinking || !thinking)) {
    m.delete(rolloutId);
    m.set(rolloutId, hit);
    return hit.p;
  }
  const p = extractStepTokens(dumps, rolloutId, thinking);
  m.delete(rolloutId);
  m.set(rolloutId, { key, thinking, p });
  p.catch(() => {
    if (m.get(rolloutId)?.p === p) m.delete(rolloutId);
  });
  while (m.size > 2) m.delete(m.keys().next().value as number);
  return p;
}

// ---- statistics

/** numpy's default ("linear") quantile of sorted finite values; null when empty. */
export function sortedQuantile(sorted: ArrayLike<number>, q: number): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  const h = (n - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(n - 1, lo + 1);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (h - lo) * (b - a);
}

/**
 * Moves the k-th smallest of `a[l..r]` to `a[k]`, the smaller ones before it and the
 * larger after (Hoare's selection, median-of-three pivot): a quantile needs two order
 * statistics, not a sorted array. Values are finite or ±Infinity (no NaN).
 */
function nthElement(a: Float32Array, k: number, l: number, r: number): void {
  while (l < r) {
    const m = (l + r) >> 1;
    const x0 = a[l] as number;
    const x1 = a[m] as number;
    const x2 = a[r] as number;
    const x = x0 < x1 ? (x1 < x2 ? x1 : x0 < x2 ? x2 : x0) : x0 < x2 ? x0 : x1 < x2 ? x2 : x1;
    let i = l;
    let j = r;
    while (i <= j) {
      while ((a[i] as number) < x) i++;
      while (x < (a[j] as number)) j--;
      if (i <= j) {
        const t = a[i] as number;
        a[i] = a[j] as number;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) r = j;
    else if (k >= i) l = i;
    else return;
  }
}

/**
 * `sortedQuantile` of the first `n` values of `a` without sorting them (same value: the
 * same two order statistics, interpolated the same way). Reorders `a`; `from`: every value
 * before it is known to be ≤ the rest (a lower quantile was selected there).
 */
export function selectQuantile(a: Float32Array, n: number, q: number, from = 0): { value: number | null; at: number } {
  if (n === 0) return { value: null, at: 0 };
  const h = (n - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(n - 1, lo + 1);
  nthElement(a, lo, Math.min(from, lo), n - 1);
  const x = a[lo] as number;
  let y = x;
  if (hi > lo) {
    y = a[lo + 1] as number;
    for (let i = lo + 2; i < n; i++) if ((a[i] as number) < y) y = a[i] as number;
  }
  return { value: x + (h - lo) * (y - x), at: lo };
}

function maxOf(a: Float32Array, n: number): number {
  let m = -Infinity;
  for (let i = 0; i < n; i++) if ((a[i] as number) > m) m = a[i] as number;
  return m;
}

export interface StepQuantiles {
  tokens: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  mean: number | null;
  max: number | null;
  clip_frac: number | null;
}

/** |lp_diff| quantiles of a step and the fraction of ratios outside [lo, hi]. */
export function stepQuantiles(t: StepTokens, clipLo = DRIFT_DEFAULTS.clip_lo, clipHi = DRIFT_DEFAULTS.clip_hi): StepQuantiles {
  const abs = new Float32Array(t.n);
  let out = 0;
  let sum = 0;
  let finite = 0;
  for (let i = 0; i < t.n; i++) {
    const d = t.diff[i] as number;
    if (Number.isFinite(d)) {
      const x = Math.abs(d);
      abs[finite++] = x;
      sum += x;
      const r = Math.exp(d);
      if (r < clipLo || r > clipHi) out++;
    }
  }
  const p50 = selectQuantile(abs, finite, 0.5);
  const p90 = selectQuantile(abs, finite, 0.9, p50.at);
  const p99 = selectQuantile(abs, finite, 0.99, p90.at);
  return {
    tokens: finite,
    p50: p50.value,
    p90: p90.value,
    p99: p99.value,
    mean: finite ? sum / finite : null,
    max: finite ? maxOf(abs, finite) : null,
    clip_frac: finite ? out / finite : null,
  };
}

export interface DriftTopSample {
  sample_index: number;
  /** Σ |lp_diff| of the sample's tokens in this bin. */
  mass: number;
  tokens: number;
  /** Response position and absolute token position of its worst token in the bin. */
  worst_pos: number;
  worst_token: number;
  worst_abs: number;
}

export interface DriftBin {
  key: string;
  label: string;
  /** Response-position range [lo, hi) (position bins only). */
  lo: number | null;
  hi: number | null;
  tokens: number;
  mean_abs: number | null;
  p99_abs: number | null;
  max_abs: number | null;
  mean_ratio: number | null;
  p99_ratio: number | null;
  clip_out: number;
  top: DriftTopSample[];
}

export interface DriftAnswer {
  rollout_id: number;
  params: DriftParams;
  available: boolean;
  /** Why something is missing ("no engine recorded", …); null when nothing is. */
  note: string | null;
  samples: number;
  samples_missing: number;
  tokens: number;
  overall: StepQuantiles & { mean_ratio: number | null; clip_low: number; clip_high: number };
  /** lp_diff histogram: `counts[i]` tokens in [lo + i·w, lo + (i+1)·w), w = (hi − lo)/len. */
  histogram: { lo: number; hi: number; counts: number[] };
  bins: DriftBin[];
}

function groupOf(t: StepTokens, p: DriftParams): { keyOf: (i: number) => number; groups: { key: string; label: string; lo: number | null; hi: number | null }[]; note: string | null } {
  if (p.by === "position") {
    let maxPos = 0;
    for (let i = 0; i < t.n; i++) if ((t.pos[i] as number) > maxPos) maxPos = t.pos[i] as number;
    const width = Math.max(1, Math.ceil((maxPos + 1) / p.bins));
    const count = Math.max(1, Math.ceil((maxPos + 1) / width));
    const groups = Array.from({ length: t.n ? count : 0 }, (_, g) => ({
      key: String(g),
      label: `${g * width}–${(g + 1) * width}`,
      lo: g * width,
      hi: (g + 1) * width,
    }));
    return { keyOf: (i) => Math.floor((t.pos[i] as number) / width), groups, note: null };
  }
  if (p.by === "segment") {
    const seg = (i: number) => {
      const o = t.toff[i] as number;
      if (o >= 0 && o < p.after_tool) return 1;
      const f = t.flags[i] as number;
      if (f & 1) return 2;
      if (f & 2) return 3;
      return 0;
    };
    return {
      keyOf: seg,
      groups: SEGMENTS.map((s) => ({ key: s, label: s === "after_tool" ? `first ${p.after_tool} after a tool result` : s.replace("_", " "), lo: null, hi: null })),
      note: t.thinkingKnown ? null : "no tokenizer in the run: thinking tokens cannot be told apart (counted as text / final answer)",
    };
  }
  if (p.by === "engine") {
    const names = [...new Set(t.samples.map((s) => s.engine).filter((e): e is string => e !== null))].sort();
    if (names.length === 0) return { keyOf: () => -1, groups: [], note: "no engine recorded" };
    const idx = new Map(names.map((e, i) => [e, i]));
    const per = t.samples.map((s) => (s.engine === null ? names.length : (idx.get(s.engine) as number)));
    const unknown = per.includes(names.length);
    const groups = names.map((e) => ({ key: e, label: e, lo: null, hi: null }));
    if (unknown) groups.push({ key: "unknown", label: "no engine recorded", lo: null, hi: null });
    return { keyOf: (i) => per[t.smp[i] as number] as number, groups, note: null };
  }
  const order = t.versions
    .map((v, i) => ({ v, i }))
    .sort((a, b) => {
      const na = Number(a.v);
      const nb = Number(b.v);
      if (Number.isFinite(na) && Number.isFinite(nb)) return na - nb;
      return a.v < b.v ? -1 : a.v > b.v ? 1 : 0;
    });
  const rank = new Int32Array(t.versions.length);
  order.forEach((o, r) => (rank[o.i] = r));
  const groups = order.map((o) => ({ key: o.v, label: o.v === "none" ? "no version" : `v${o.v}`, lo: null, hi: null }));
  return { keyOf: (i) => rank[t.ver[i] as number] as number, groups, note: t.versions.length ? null : "no weight versions recorded" };
}

export function computeDrift(rolloutId: number, t: StepTokens, p: DriftParams): DriftAnswer {
  const { keyOf, groups, note } = groupOf(t, p);
  const G = groups.length;
  const S = t.samples.length;
  const gTokens = new Int32Array(G);
  const gSumAbs = new Float64Array(G);
  const gSumRatio = new Float64Array(G);
  const gClip = new Int32Array(G);
  const gOf = new Int32Array(t.n).fill(-1);
  let maxAbs = 0;
  let sumRatio = 0;
  let clipLow = 0;
  let clipHigh = 0;
  for (let i = 0; i < t.n; i++) {
    const d = t.diff[i] as number;
    if (!Number.isFinite(d)) continue;
    const a = Math.abs(d);
    if (a > maxAbs) maxAbs = a;
    const r = Math.exp(d);
    sumRatio += r;
    const low = r < p.clip_lo;
    const high = r > p.clip_hi;
    if (low) clipLow++;
    if (high) clipHigh++;
    const g = G ? keyOf(i) : -1;
    if (g < 0 || g >= G) continue;
    gOf[i] = g;
    gTokens[g] = (gTokens[g] as number) + 1;
    gSumAbs[g] = (gSumAbs[g] as number) + a;
    gSumRatio[g] = (gSumRatio[g] as number) + r;
    if (low || high) gClip[g] = (gClip[g] as number) + 1;
  }
  // Histogram of lp_diff, symmetric around 0.
  const hb = DRIFT_DEFAULTS.hist_bins;
  const half = maxAbs > 0 ? maxAbs : 1e-6;
  const counts = new Array<number>(hb).fill(0);
  for (let i = 0; i < t.n; i++) {
    const d = t.diff[i] as number;
    if (!Number.isFinite(d)) continue;
    const b = Math.min(hb - 1, Math.floor(((d + half) / (2 * half)) * hb));
    counts[b] = (counts[b] as number) + 1;
  }
  // Per-bin quantiles: values grouped by bin (counting sort), each group sorted.
  const start = new Int32Array(G + 1);
  for (let g = 0; g < G; g++) start[g + 1] = (start[g] as number) + (gTokens[g] as number);
  const fill = start.slice(0, G);
  const absBy = new Float32Array(t.n);
  const ratioBy = new Float32Array(t.n);
  const mass = new Float64Array(G * S);
  const cnt = new Int32Array(G * S);
  const worst = new Int32Array(G * S).fill(-1);
  const worstAbs = new Float32Array(G * S);
  for (let i = 0; i < t.n; i++) {
    const g = gOf[i] as number;
    if (g < 0) continue;
    const d = t.diff[i] as number;
    const a = Math.abs(d);
    const at = fill[g] as number;
    absBy[at] = a;
    ratioBy[at] = Math.exp(d);
    fill[g] = at + 1;
    const c = g * S + (t.smp[i] as number);
    mass[c] = (mass[c] as number) + a;
    cnt[c] = (cnt[c] as number) + 1;
    if (worst[c] === -1 || a > (worstAbs[c] as number)) {
      worst[c] = t.pos[i] as number;
      worstAbs[c] = a;
    }
  }
  const bins: DriftBin[] = groups.map((grp, g) => {
    const n = gTokens[g] as number;
    const a = absBy.subarray(start[g], start[g + 1]);
    const r = ratioBy.subarray(start[g], start[g + 1]);
    const cand: number[] = [];
    for (let s = 0; s < S; s++) if ((cnt[g * S + s] as number) > 0) cand.push(s);
    cand.sort((x, y) => (mass[g * S + y] as number) - (mass[g * S + x] as number) || x - y);
    const top = cand.slice(0, TOP_SAMPLES).map((s) => {
      const c = g * S + s;
      const info = t.samples[s] as StepSampleInfo;
      return {
        sample_index: info.sample_index,
        mass: mass[c] as number,
        tokens: cnt[c] as number,
        worst_pos: worst[c] as number,
        worst_token: info.prompt_len + (worst[c] as number),
        worst_abs: worstAbs[c] as number,
      };
    });
    return {
      ...grp,
      tokens: n,
      mean_abs: n ? (gSumAbs[g] as number) / n : null,
      p99_abs: selectQuantile(a, n, 0.99).value,
      max_abs: n ? maxOf(a, n) : null,
      mean_ratio: n ? (gSumRatio[g] as number) / n : null,
      p99_ratio: selectQuantile(r, n, 0.99).value,
      clip_out: gClip[g] as number,
      top,
    };
  });
  const q = stepQuantiles(t, p.clip_lo, p.clip_hi);
  const notes = [note, t.missing ? `${t.missing} train sample(s) without both log-prob arrays left out` : null].filter(Boolean);
  return {
    rollout_id: rolloutId,
    params: p,
    available: t.n > 0,
    note: t.n === 0 ? (t.samples.length === 0 && t.missing > 0 ? "no rollout_log_probs in this step's dumps" : "no loss-masked tokens") : notes.length ? notes.join("; ") : null,
    samples: S,
    samples_missing: t.missing,
    tokens: q.tokens,
    overall: { ...q, mean_ratio: q.tokens ? sumRatio / q.tokens : null, clip_low: clipLow, clip_high: clipHigh },
    histogram: { lo: -half, hi: half, counts },
    bins,
  };
}

/** The per-step quantiles of the `drift/*` metrics (cached per step like the answer). */
export async function getStepQuantiles(dumps: DriftDumps, rolloutId: number): Promise<StepQuantiles> {
  return dumps.derived(rolloutId, false, `drift.v${DRIFT_VERSION}.quantiles`, async () => stepQuantiles(await stepTokens(dumps, rolloutId)));
}

/** `GET /api/rollout/{id}/drift` (docs/api.md 9.2): the drift answer plus the step's staleness. */
export async function getRolloutDriftView(
  dumps: DriftDumps & Pick<DumpSource, "summary">,
  rolloutId: number,
  q: DriftParams & { eval: boolean },
): Promise<DriftAnswer & { evaluation: boolean; staleness: StalenessAnswer }> {
  const p: DriftParams = { by: q.by, bins: q.bins, clip_lo: q.clip_lo, clip_hi: q.clip_hi, after_tool: q.after_tool };
  if (q.eval) {
    await dumps.summary(rolloutId, true); // 404 when the eval dump does not exist
    return { ...emptyDrift(rolloutId, p, "eval step: no train log-probs (drift needs the train dump)"), evaluation: true, staleness: computeStaleness([], true) };
  }
  // One cached answer: drift and staleness both come from the step's token join (the
  // summary, with its seven-field join, is not needed).
  const name = `drift.v${DRIFT_VERSION}.${p.by}.${p.bins}.${p.clip_lo}.${p.clip_hi}.${p.after_tool}`;
  const ans = await dumps.derived(rolloutId, false, name, async () => {
    const t = await stepTokens(dumps, rolloutId, p.by === "segment");
    return { ...computeDrift(rolloutId, t, p), staleness: computeStaleness(t.stale, false) };
  });
  return { ...ans, evaluation: false };
}

function emptyDrift(rolloutId: number, p: DriftParams, note: string): DriftAnswer {
  return {
    rollout_id: rolloutId,
    params: p,
    available: false,
    note,
    samples: 0,
    samples_missing: 0,
    tokens: 0,
    overall: { tokens: 0, p50: null, p90: null, p99: null, mean: null, max: null, clip_frac: null, mean_ratio: null, clip_low: 0, clip_high: 0 },
    histogram: { lo: 0, hi: 0, counts: [] },
    bins: [],
  };
}
