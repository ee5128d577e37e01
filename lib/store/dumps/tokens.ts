/**
 * The L2 per-token payload (docs/api.md 5) as a pure function of the mirror row, the
 * sample's TrainRow (null for eval or when not trained) and the token texts.
 */
import { badRequest } from "@/lib/contracts/errors";
import type { MirrorRow } from "./mirror";
import type { NumArray, TrainRow } from "./types";

export interface TokenPayload {
  rollout_id: number;
  sample_index: number;
  evaluation: boolean;
  total_len: number;
  prompt_len: number;
  start: number;
  end: number;
  response_offset: number;
  token_ids: number[];
  token_text: string[] | null;
  rollout_log_probs: (number | null)[] | null;
  loss_mask: number[] | null;
  train_log_probs: (number | null)[] | null;
  ref_log_probs: (number | null)[] | null;
  lp_diff: (number | null)[] | null;
  imp_ratio: (number | null)[] | null;
  entropy: (number | null)[] | null;
  ref_entropy: (number | null)[] | null;
  advantages: (number | null)[] | null;
  returns: (number | null)[] | null;
}

export interface TokenWindow {
  start?: number;
  end?: number | null;
}

/** `log_probs − rollout_log_probs` in the tensors' precision (float32 unless both f64). */
function diff(a: NumArray | null, b: NumArray | null): NumArray | null {
  if (a === null || b === null) return null;
  const n = Math.min(a.length, b.length);
  const out = a instanceof Float64Array && b instanceof Float64Array ? new Float64Array(n) : new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (a[i] as number) - (b[i] as number);
  return out;
}

function expOf(x: NumArray | null): NumArray | null {
  if (x === null) return null;
  const out = x instanceof Float64Array ? new Float64Array(x.length) : new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = Math.exp(x[i] as number);
  return out;
}

export function buildTokenPayload(
  rolloutId: number,
  sampleIndex: number,
  evaluation: boolean,
  mirror: MirrorRow,
  row: TrainRow | null,
  window: TokenWindow,
  decode: ((id: number) => string) | null,
): TokenPayload {
  const total = mirror.total_length;
  const promptLen = total - mirror.response_length;
  const start = Math.max(0, window.start ?? 0);
  const end = window.end === undefined || window.end === null ? total : Math.min(window.end, total);
  if (start >= end) throw badRequest(`empty token range [${start}, ${end}) for total_len=${total}`);
  const a = Math.max(0, start - promptLen);
  const b = Math.max(0, end - promptLen);
  const mask = row?.lossMask ?? null;
  const slice = (values: NumArray | null): (number | null)[] | null => {
    if (values === null) return null;
    const out: (number | null)[] = [];
    const hi = Math.min(b, values.length);
    for (let i = a; i < hi; i++) {
      out.push(mask === null || (mask[i] ?? 0) > 0 ? (values[i] as number) : null);
    }
    return out;
  };
  const tokenIds: number[] = [];
  for (let i = start; i < Math.min(end, mirror.tokens.length); i++) tokenIds.push(mirror.tokens[i] as number);
  const f = row?.fields;
  const lpDiff = f ? diff(f.log_probs, f.rollout_log_probs) : null;
  let lossMask: number[] | null = null;
  if (row) {
    lossMask = [];
    for (let i = a; i < Math.min(b, row.lossMask.length); i++) lossMask.push(Math.trunc(row.lossMask[i] as number));
  }
  return {
    rollout_id: rolloutId,
    sample_index: sampleIndex,
    evaluation,
    total_len: total,
    prompt_len: promptLen,
    start,
    end,
    response_offset: Math.min(tokenIds.length, Math.max(0, promptLen - start)),
    token_ids: tokenIds,
    token_text: decode ? tokenIds.map(decode) : null,
    rollout_log_probs:
      mirror.rollout_log_probs !== null ? slice(mirror.rollout_log_probs) : f ? slice(f.rollout_log_probs) : null,
    loss_mask: lossMask,
    train_log_probs: f ? slice(f.log_probs) : null,
    ref_log_probs: f ? slice(f.ref_log_probs) : null,
    lp_diff: slice(lpDiff),
    imp_ratio: slice(expOf(lpDiff)),
    entropy: f ? slice(f.entropy) : null,
    ref_entropy: f ? slice(f.ref_entropy) : null,
    advantages: f ? slice(f.advantages) : null,
    returns: f ? slice(f.returns) : null,
  };
}
