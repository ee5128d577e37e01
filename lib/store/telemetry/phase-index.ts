/**
 * The phase hour index (docs/formats.md §4.16): its facts are made by this module from the
 * reader's own parse of an hour (`parsePhaseRange`, or a block the store already holds), so
 * an index says exactly what parsing the hour would have said. The writer calls
 * `indexPhaseFile` for the hours it has finished with (lib/store/writer/phase-indexer.ts);
 * the store calls `factsFromIndex` (MetricStore.phaseHourFacts) before parsing an hour only
 * to learn its facts.
 *
 * Resolving OPEN markers across hours from facts alone (`unmatchedAcrossHours`) is exact
 * when every hour's facts are: a marker of hour k lies in hour k, so a closed row of hour
 * k2 ≠ k with the marker's (node, rank, name, t0) has its t0 outside hour k2 — and such
 * rows are the facts' `closes`.
 */
import {
  HOUR_S,
  OPEN_T1,
  PHASE_INDEX_FINGERPRINT_BYTES,
  parsePhaseIndexFile,
  type PhaseHourFacts,
  type PhaseIndexFile,
} from "@/lib/store/format";
import type { PhaseBlock, PhasePart } from "@/lib/store/telemetry/blocks";
import { parsePhaseRange, type ReadAt } from "@/lib/store/telemetry/read-range";

/** The rows facts are made from: a block, or a part with its own strings. */
interface PhaseRows {
  n: number;
  t0: Float64Array;
  t1: Float64Array;
  rank: Float64Array;
  name: Uint32Array;
  node: Uint32Array;
  minT: number;
  maxT: number;
  /** OPEN markers no row of these rows closes (`PhaseBlock.localUnmatched`). */
  unmatched: readonly number[];
  str(id: number): string;
}

export function blockRows(b: PhaseBlock): PhaseRows {
  return { n: b.n, t0: b.t0, t1: b.t1, rank: b.rank, name: b.name, node: b.node, minT: b.minT, maxT: b.maxT, unmatched: b.localUnmatched(), str: (id) => b.str(id) };
}

function partRows(p: PhasePart, strings: readonly string[]): PhaseRows {
  return { n: p.t0.length, t0: p.t0, t1: p.t1, rank: p.rank, name: p.name, node: p.node, minT: p.minT, maxT: p.maxT, unmatched: p.unmatched, str: (id) => strings[id]! };
}

/** The facts of one phase hour starting at `hourStart` (docs/formats.md §4.16). */
export function phaseHourFacts(r: PhaseRows, hourStart: number): PhaseHourFacts {
  const inHour = (t: number) => t >= hourStart && t < hourStart + HOUR_S;
  let exact = true;
  const open: PhaseHourFacts["open"] = [];
  for (const i of r.unmatched) {
    const t0 = r.t0[i]!;
    const rank = r.rank[i]!;
    if (!inHour(t0) || !Number.isFinite(rank)) exact = false;
    else open.push([i, t0, r.str(r.node[i]!), rank, r.str(r.name[i]!)]);
  }
  const closes: PhaseHourFacts["closes"] = [];
  for (let j = 0; j < r.n; j++) {
    const t0 = r.t0[j]!;
    if (r.t1[j] === OPEN_T1 || inHour(t0)) continue;
    const rank = r.rank[j]!;
    // A t0 or rank that is not finite matches no marker of exact facts (NaN never equals;
    // a marker with an infinite one makes its own hour's facts inexact).
    if (Number.isFinite(t0) && Number.isFinite(rank)) closes.push([t0, r.str(r.node[j]!), rank, r.str(r.name[j]!)]);
  }
  const empty = r.n === 0;
  // A block's bounds start at ±Infinity; with rows they must be finite to be carried.
  if (!empty && !(Number.isFinite(r.minT) && Number.isFinite(r.maxT))) exact = false;
  return { rows: r.n, minT: empty || !Number.isFinite(r.minT) ? null : r.minT, maxT: empty || !Number.isFinite(r.maxT) ? null : r.maxT, open, closes, exact };
}

/** `minT`/`maxT` as a block has them (an empty one: +Infinity / −Infinity). */
export function factsBounds(f: PhaseHourFacts): { minT: number; maxT: number } {
  return { minT: f.minT ?? Infinity, maxT: f.maxT ?? -Infinity };
}

/**
 * Per hour, the row indices of its OPEN markers that no closed row of another hour matches
 * on (node, rank, name, t0); null unless every hour's facts are exact (then the hours must
 * be parsed and matched row by row, lib/timeline/phases.ts).
 */
export function unmatchedAcrossHours(facts: readonly PhaseHourFacts[]): number[][] | null {
  if (facts.some((f) => !f.exact)) return null;
  // Markers by t0, then rank (every rank of a step opens its phase at one t0: a list per t0
  // alone would compare each closing row with ~1024 markers); each candidate's node and
  // name still compared. t0 and rank compare as Map keys do: finite numbers, −0 is 0.
  const byT0 = new Map<number, Map<number, [hour: number, at: number][]>>();
  facts.forEach((f, k) =>
    f.open.forEach(([, t0, , rank], at) => {
      let byRank = byT0.get(t0);
      if (!byRank) byT0.set(t0, (byRank = new Map<number, [hour: number, at: number][]>()));
      const list = byRank.get(rank);
      if (list) list.push([k, at]);
      else byRank.set(rank, [[k, at]]);
    }),
  );
  const closed = facts.map((f) => new Uint8Array(f.open.length));
  facts.forEach((f, k2) => {
    for (const [t0, node, rank, name] of f.closes) {
      const list = byT0.get(t0)?.get(rank);
      if (!list) continue;
      for (const [k, at] of list) {
        const m = facts[k]!.open[at]!;
        if (k !== k2 && m[2] === node && m[4] === name) closed[k]![at] = 1;
      }
    }
  });
  return facts.map((f, k) => f.open.flatMap(([row], at) => (closed[k]![at] ? [] : [row])));
}

/** The fingerprint of `[0, size)`: its first and its last PHASE_INDEX_FINGERPRINT_BYTES bytes, base64. */
export async function phaseFileFingerprint(read: ReadAt, size: number): Promise<{ head: string; tail: string }> {
  const n = Math.min(PHASE_INDEX_FINGERPRINT_BYTES, size);
  const head = Buffer.alloc(n);
  const tail = Buffer.alloc(n);
  const [h, t] = [await read(head, n, 0), await read(tail, n, size - n)];
  return { head: head.subarray(0, h).toString("base64"), tail: tail.subarray(0, t).toString("base64") };
}

/**
 * The index of the phase hour starting at `hourStart` whose file `read` reads, made from its
 * first `stat.size` bytes; null when those do not end with a complete line (a write in progress:
 * the reader would not read the partial line either, and the file is about to change).
 */
export async function indexPhaseFile(read: ReadAt, stat: { size: number; mtimeMs: number }, hourStart: number): Promise<PhaseIndexFile | null> {
  const { size, mtimeMs } = stat;
  const r = await parsePhaseRange(read, size);
  if (r.pos !== size) return null;
  const { head, tail } = await phaseFileFingerprint(read, size);
  return { v: 1, size, mtimeMs, head, tail, facts: phaseHourFacts(partRows(r.part, r.strings), hourStart) };
}

/**
 * The facts an index file's text gives for an hour file of `stat.size` bytes read by `read`;
 * null when the text is not a valid index (its marker rows out of order or past its row
 * count included), or was made from other bytes (another size,
 * modification time or fingerprint: the hour grew, was edited or was replaced after it was
 * indexed — or was copied without its times, then it is only parsed again).
 */
export async function factsFromIndex(text: string, read: ReadAt, stat: { size: number; mtimeMs: number }): Promise<PhaseHourFacts | null> {
  const { size, mtimeMs } = stat;
  let file: PhaseIndexFile | null;
  try {
    file = parsePhaseIndexFile(JSON.parse(text));
  } catch {
    return null; // not JSON
  }
  if (!file) return null;
  if (file.size !== size || file.mtimeMs !== mtimeMs) return null;
  // Marker rows as a parse lists them: ascending, inside the hour's rows.
  const { open, rows } = file.facts;
  for (let i = 0; i < open.length; i++) if (open[i]![0] >= rows || (i > 0 && open[i - 1]![0] >= open[i]![0])) return null;
  const fp = await phaseFileFingerprint(read, size);
  return fp.head === file.head && fp.tail === file.tail ? file.facts : null;
}
