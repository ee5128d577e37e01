/**
 * Per-token view model (docs/views.md 6.3, docs/api.md 5): one loaded window of a sample's
 * tokens with its stats aligned to window positions, the colour scale of each stat,
 * the metric-vs-position chart model, line layout for the windowed strip, and the
 * mapping from conversation turns to token ranges.
 *
 * Beats the original on purpose (docs/views.md 9 #44):
 *  - colour scales are fixed per loaded payload (the whole sample up to 32k tokens),
 *    so paging the strip never changes what a colour means, and changing the colour
 *    stat re-colours locally without a refetch;
 *  - prompt/response is decided by `prompt_len`, not by which stat arrays exist.
 */
import { chartModel, type Band, type ChartModel } from "@/lib/charts/core/model";
import { cardProbes, type ConvCard } from "./conversation";
import { formatValue } from "@/lib/charts/core/format";
import { TOKEN_STATS, type TokenStat, type TokensResponse } from "./types";

/** Largest token range fetched in one request; longer samples are paged. */
export const TOKEN_PAGE = 32768;

export interface TokenModel {
  total: number;
  promptLen: number;
  /** Absolute position of window index 0. */
  start: number;
  end: number;
  n: number;
  ids: Int32Array;
  /** Display text per token (newline → ⏎; `·<id>` without a tokenizer). */
  text: string[];
  /** Decoded text as sent (null without a tokenizer). */
  raw: (string | null)[] | null;
  /** Window index where the response begins. */
  respStart: number;
  /** Per window index: 1 when loss_mask is 0 (masked response token). */
  masked: Uint8Array;
  /** Stats aligned to window indices; NaN for prompt tokens and nulls. */
  stats: Partial<Record<TokenStat, Float64Array>>;
  available: TokenStat[];
  /** Per window index: the token ends a line (contains a newline). */
  breakAfter: Uint8Array;
}

export function displayToken(text: string | null | undefined, id: number): string {
  if (text === null || text === undefined) return `·${id}`;
  if (text === "") return "∅";
  return text.replace(/\r?\n/g, "⏎").replace(/\t/g, "⇥");
}

export function prepareTokens(p: TokensResponse): TokenModel {
  const n = p.token_ids.length;
  const ids = Int32Array.from(p.token_ids);
  const raw = p.token_text;
  const text = p.token_ids.map((id, i) => displayToken(raw ? raw[i] : null, id));
  const breakAfter = new Uint8Array(n);
  if (raw) raw.forEach((t, i) => (breakAfter[i] = t.includes("\n") ? 1 : 0));
  const respStart = Math.min(n, Math.max(0, p.response_offset));
  const masked = new Uint8Array(n);
  if (p.loss_mask) p.loss_mask.forEach((m, j) => respStart + j < n && (masked[respStart + j] = m === 0 ? 1 : 0));
  const stats: Partial<Record<TokenStat, Float64Array>> = {};
  const available: TokenStat[] = [];
  for (const k of TOKEN_STATS) {
    const arr = p[k];
    if (!arr) continue;
    const col = new Float64Array(n).fill(Number.NaN);
    let any = false;
    arr.forEach((v, j) => {
      if (respStart + j < n && typeof v === "number" && Number.isFinite(v)) {
        col[respStart + j] = v;
        any = true;
      }
    });
    stats[k] = col;
    if (any || arr.length === 0) available.push(k);
  }
  return { total: p.total_len, promptLen: p.prompt_len, start: p.start, end: p.end, n, ids, text, raw, respStart, masked, stats, available, breakAfter };
}

/** The default metric: imp_ratio when present, else the first stat present. */
export function defaultStat(available: readonly TokenStat[], wanted?: string | null): TokenStat | null {
  if (wanted && (available as readonly string[]).includes(wanted)) return wanted as TokenStat;
  if (available.includes("imp_ratio")) return "imp_ratio";
  return available[0] ?? null;
}

export interface StatScale {
  stat: TokenStat;
  kind: "diverging" | "sequential";
  /** Value at the full-colour ends, for the legend. */
  lo: number;
  hi: number;
  /** Legend caption. */
  caption: string;
}

const DIVERGING: readonly TokenStat[] = ["lp_diff", "advantages", "returns"];
const SEQUENTIAL_MINMAX: readonly TokenStat[] = ["entropy", "ref_entropy"];

export function statScale(stat: TokenStat, values: Float64Array): StatScale {
  let lo = Infinity;
  let hi = -Infinity;
  let absMax = 0;
  for (const v of values) {
    if (Number.isNaN(v)) continue;
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
    absMax = Math.max(absMax, Math.abs(v));
  }
  if (!Number.isFinite(lo)) {
    lo = 0;
    hi = 1;
  }
  if (stat === "imp_ratio") return { stat, kind: "diverging", lo: 1 / Math.E, hi: Math.E, caption: "ratio: 1/e blue · 1 clear · e red (log scale)" };
  if (DIVERGING.includes(stat)) return { stat, kind: "diverging", lo: -(absMax || 1), hi: absMax || 1, caption: "blue < 0 < red, scaled to max |v| in this sample" };
  if (SEQUENTIAL_MINMAX.includes(stat)) return { stat, kind: "sequential", lo, hi: hi > lo ? hi : lo + 1, caption: "darker = higher, min–max in this sample" };
  // log-probs: sequential on −v, so surprising (low log-prob) tokens are darker.
  return { stat, kind: "sequential", lo: hi, hi: lo < hi ? lo : hi - 1, caption: "darker = lower log-prob (more surprising)" };
}

/** Position in [-1, 1] (diverging) or [0, 1] (sequential) of a value on a scale. */
export function scalePosition(s: StatScale, v: number): number {
  if (Number.isNaN(v)) return Number.NaN;
  if (s.stat === "imp_ratio") return Math.max(-1, Math.min(1, Math.log(Math.max(v, 1e-6))));
  if (s.kind === "diverging") return Math.max(-1, Math.min(1, v / s.hi));
  const t = (v - s.lo) / (s.hi - s.lo);
  return Math.max(0, Math.min(1, t));
}

/** Background colour of a token (null = uncoloured). */
export function statColor(s: StatScale, v: number): string | null {
  const t = scalePosition(s, v);
  if (Number.isNaN(t)) return null;
  if (s.kind === "diverging") {
    const a = Math.min(1, Math.abs(t)) * 0.85;
    return t >= 0 ? `rgba(227, 73, 72, ${a.toFixed(3)})` : `rgba(42, 120, 214, ${a.toFixed(3)})`;
  }
  return `rgba(27, 175, 122, ${(t * 0.85).toFixed(3)})`;
}

export function tokenTooltip(m: TokenModel, i: number): string {
  const pos = m.start + i;
  const rawText = m.raw ? (m.raw[i] ?? "") : null;
  const head = `#${pos} id=${m.ids[i]}${rawText === null ? "" : ` ${JSON.stringify(rawText)}`}`;
  if (i < m.respStart) return `${head}\n(prompt)`;
  const lines = [head];
  for (const k of m.available) {
    const v = m.stats[k]![i]!;
    lines.push(`${k} = ${Number.isNaN(v) ? "—" : formatValue(v)}`);
  }
  if (m.masked[i]) lines.push("loss_mask = 0 (not trained on)");
  return lines.join("\n");
}

/** Runs of loss-masked response tokens as absolute [x0, x1] ranges. */
export function maskedRuns(m: TokenModel): [number, number][] {
  const out: [number, number][] = [];
  let runStart = -1;
  for (let i = m.respStart; i <= m.n; i++) {
    const on = i < m.n && m.masked[i] === 1;
    if (on && runStart < 0) runStart = i;
    if (!on && runStart >= 0) {
      out.push([m.start + runStart, m.start + i]);
      runStart = -1;
    }
  }
  return out;
}

/** The metric-vs-absolute-position chart for the loaded window (response tokens only). */
export function prepareTokenChart(m: TokenModel, stat: TokenStat): ChartModel {
  const col = m.stats[stat];
  const count = m.n - m.respStart;
  const x = new Float64Array(count);
  const y = new Float64Array(count);
  for (let j = 0; j < count; j++) {
    x[j] = m.start + m.respStart + j;
    y[j] = col ? col[m.respStart + j]! : Number.NaN;
  }
  const bands: Band[] = [];
  if (m.start < m.promptLen) bands.push({ x0: Math.max(0, m.start), x1: Math.min(m.promptLen, m.end), strong: true, label: "prompt" });
  for (const [a, b] of maskedRuns(m)) bands.push({ x0: a, x1: b, strong: false });
  const tooltip = (j: number) => {
    const i = m.respStart + j;
    const v = y[j]!;
    return `#${m.start + i} ${JSON.stringify(m.raw ? (m.raw[i] ?? "") : m.text[i])}\n${stat} = ${Number.isNaN(v) ? "—" : formatValue(v)}${m.masked[i] ? "\nloss_mask = 0" : ""}`;
  };
  return chartModel("line", [{ id: stat, label: stat, color: null, x, y }], { bands, axisTitles: { x: "token position", y: stat }, tooltip });
}

/**
 * Greedy line layout for the windowed strip: `widths[i]` px per token, a forced break
 * after tokens flagged in `breakAfter`. Returns the first token index of every line.
 */
export function layoutLines(widths: ArrayLike<number>, breakAfter: ArrayLike<number>, maxWidth: number): Int32Array {
  const starts: number[] = [0];
  let x = 0;
  const n = widths.length;
  for (let i = 0; i < n; i++) {
    const w = widths[i]!;
    if (x > 0 && x + w > maxWidth) {
      starts.push(i);
      x = 0;
    }
    x += w;
    if (breakAfter[i] && i + 1 < n) {
      starts.push(i + 1);
      x = 0;
    }
  }
  return n ? Int32Array.from(starts) : new Int32Array(0);
}

/** How conversation turns were matched to token ranges. */
export type AlignMethod = "loss_mask" | "text" | "single" | "none";
export interface TurnAlignment {
  method: AlignMethod;
  /** Card index → absolute token range [a, b). */
  ranges: Map<number, [number, number]>;
}

/**
 * Attribute token ranges to the conversation cards that produced them:
 *  1. loss-mask runs: the k-th trained run is the k-th generated turn, and the masked
 *     run after it is the tool/user output that followed (multi-turn layout);
 *  2. text: each generated turn's opening words found in order in the decoded response;
 *  3. a single generated turn owns the whole response;
 *  otherwise "none" — the view then shows the response as one block, honestly labelled.
 */
export function alignTurns(cards: readonly ConvCard[], m: TokenModel): TurnAlignment {
  const ranges = new Map<number, [number, number]>();
  const gen = cards.filter((c) => c.turn !== null);
  const respA = m.start + m.respStart;
  const respB = m.start + m.n;
  if (!gen.length || m.start > m.promptLen || respB <= respA) return { method: "none", ranges };
  // 1. loss-mask runs
  const runs: { on: boolean; a: number; b: number }[] = [];
  for (let i = m.respStart; i < m.n; i++) {
    const on = m.masked[i] === 0;
    const last = runs.at(-1);
    if (last && last.on === on) last.b = m.start + i + 1;
    else runs.push({ on, a: m.start + i, b: m.start + i + 1 });
  }
  const trained = runs.filter((r) => r.on);
  if (gen.length > 1 && trained.length === gen.length && runs[0]?.on) {
    let k = -1;
    for (const c of cards) {
      if (c.turn !== null) {
        k = runs.indexOf(trained[c.turn - 1]!);
        const r = runs[k]!;
        ranges.set(c.index, [r.a, r.b]);
      } else if (k >= 0 && runs[k + 1] && !runs[k + 1]!.on) {
        const r = runs[k + 1]!;
        const prev = [...ranges.values()].at(-1);
        if (prev && prev[1] <= r.a) ranges.set(c.index, [r.a, r.b]);
      }
    }
    return { method: "loss_mask", ranges };
  }
  // 2. text probes, in order
  if (gen.length > 1 && m.raw) {
    let joined = "";
    const startAt: number[] = [];
    for (let i = m.respStart; i < m.n; i++) {
      startAt.push(joined.length);
      joined += (m.raw[i] ?? "").replace(/\s+/g, " ");
    }
    const found: number[] = [];
    let cursor = 0;
    for (const c of gen) {
      let at = -1;
      let probe = "";
      for (const p of cardProbes(c)) {
        const i = joined.indexOf(p, cursor);
        if (i >= 0 && (at < 0 || i < at)) {
          at = i;
          probe = p;
        }
      }
      if (at < 0) break;
      let tok = 0;
      while (tok + 1 < startAt.length && startAt[tok + 1]! <= at) tok++;
      found.push(m.start + m.respStart + tok);
      cursor = at + probe.length;
    }
    if (found.length === gen.length) {
      found[0] = respA;
      gen.forEach((c, k) => ranges.set(c.index, [found[k]!, found[k + 1] ?? respB]));
      return { method: "text", ranges };
    }
  }
  if (gen.length === 1) {
    ranges.set(gen[0]!.index, [respA, respB]);
    return { method: "single", ranges };
  }
  return { method: "none", ranges };
}

/** Mean of a stat over an absolute token range, ignoring nulls. */
export function rangeMean(m: TokenModel, stat: TokenStat, [a, b]: readonly [number, number]): number | null {
  const col = m.stats[stat];
  if (!col) return null;
  let s = 0;
  let k = 0;
  for (let p = Math.max(a, m.start); p < Math.min(b, m.end); p++) {
    const v = col[p - m.start]!;
    if (!Number.isNaN(v)) {
      s += v;
      k++;
    }
  }
  return k ? s / k : null;
}
