/**
 * Context-parallel offset math (docs/api.md 2.4, `get_logits_and_tokens_offset_with_cp`).
 * With CP size C the sequence is cut into 2C chunks of `cs` tokens; rank k holds chunks
 * k and 2C−k−1 (load balancing for causal attention). Per-token fields are indexed by
 * logit position, i.e. a response token at position p has its value at logit p−1, so the
 * response occupies logits [P−1, T−1).
 */
import type { NumArray } from "./types";

export type Range = readonly [lo: number, hi: number];

export interface CpGeometry {
  totalLength: number;
  responseLength: number;
  cpSize: number;
  /** "thd" (default) or "bshd". */
  qkvFormat?: string;
  /** Padded length for bshd (`max_seq_lens[primary row]`). */
  maxSeqLen?: number | null;
}

export function chunkSize(g: CpGeometry): number {
  const base = g.qkvFormat === "bshd" && g.maxSeqLen != null ? g.maxSeqLen : g.totalLength;
  return Math.ceil(base / (2 * g.cpSize));
}

/** The two logit ranges [lo, hi) held by `cpRank`; an empty range has lo ≥ hi. */
export function logitRanges(g: CpGeometry, cpRank: number): [Range, Range] {
  const T = g.totalLength;
  const P = T - g.responseLength;
  const C = g.cpSize;
  const cs = chunkSize(g);
  const c0: Range = [cpRank * cs, (cpRank + 1) * cs];
  const c1: Range = [(2 * C - cpRank - 1) * cs, (2 * C - cpRank) * cs];
  const clip = (c: Range): Range => [Math.max(c[0], P - 1), Math.min(c[1], T - 1)];
  return [clip(c0), clip(c1)];
}

export function expectedWidth(g: CpGeometry, cpRank: number): number {
  return logitRanges(g, cpRank).reduce((s, [lo, hi]) => s + Math.max(0, hi - lo), 0);
}

/**
 * Reassemble the full response-length field from one chunk per cp_rank. Throws (→ 500)
 * when a rank is missing or a chunk's length does not match its ranges exactly.
 */
export function reassemble(g: CpGeometry, chunks: ReadonlyMap<number, NumArray>): Float32Array | Float64Array {
  const R = g.responseLength;
  const P = g.totalLength - R;
  const first = chunks.values().next().value;
  const out = first instanceof Float64Array ? new Float64Array(R) : new Float32Array(R);
  for (let k = 0; k < g.cpSize; k++) {
    const chunk = chunks.get(k);
    if (chunk === undefined) throw new Error(`CP reassembly: cp_rank ${k} of ${g.cpSize} missing`);
    let used = 0;
    for (const [lo, hi] of logitRanges(g, k)) {
      if (lo >= hi) continue;
      const w = hi - lo;
      if (used + w > chunk.length) {
        throw new Error(`CP reassembly: cp_rank ${k} chunk has ${chunk.length} values, ranges need more`);
      }
      for (let i = 0; i < w; i++) out[lo - (P - 1) + i] = chunk[used + i] as number;
      used += w;
    }
    if (used !== chunk.length) {
      throw new Error(`CP reassembly: cp_rank ${k} chunk has ${chunk.length} values, ranges use ${used}`);
    }
  }
  return out;
}
