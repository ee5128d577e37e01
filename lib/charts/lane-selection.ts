/**
 * Client side of the lane-selection grammar (docs/api.md 8.8): chips ⇄ selection string, a
 * syntax pre-check so a typo is flagged before the round trip (the server stays the
 * judge and its 400 text is shown too), the default of 8 evenly spaced lanes, the
 * 32-lane render budget, and the carpet brush toggle.
 */

export const DEFAULT_SPACED_LANES = 8;
export const LANE_RENDER_BUDGET = 32;
export const FLEET_THRESHOLD = 64;

/** A valid term that matches no lane (A > B selects nothing). */
export const NOTHING = "g:1-0";

export const GRAMMAR_HINT = "g:0-31 · rank:0-7 · node:<ip> · gpu:<node>:<i> · engine:<addr> · role:train · every:128";

/** Terms of a selection; empty / "all" → [] (every lane). */
export function splitTerms(sel: string | null | undefined): string[] {
  if (!sel) return [];
  const t = sel.trim();
  if (t === "" || t === "all") return [];
  return t
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

export function joinTerms(terms: readonly string[]): string {
  return terms.join(",");
}

/** Append the typed text (may itself hold several comma-separated terms), without duplicates. */
export function addTerms(sel: string, typed: string): string {
  const cur = splitTerms(sel);
  for (const t of splitTerms(typed)) if (!cur.includes(t)) cur.push(t);
  return joinTerms(cur);
}

export function removeTerm(sel: string, index: number): string {
  const cur = splitTerms(sel);
  cur.splice(index, 1);
  return joinTerms(cur);
}

const INT = /^\s*[+-]?\d+(?:_\d+)*\s*$/;

function checkRange(kind: string, value: string, tok: string): string | null {
  const dash = value.indexOf("-");
  const parts = dash < 0 ? [value] : [value.slice(0, dash), value.slice(dash + 1)];
  if (!INT.test(parts[0]!) || (parts[1] !== undefined && parts[1] !== "" && !INT.test(parts[1]))) {
    return `bad ${kind} range in '${tok}': expected N or A-B`;
  }
  return null;
}

/** Syntax check of one selection string; the first problem, or null. Mirrors the server's rules. */
export function checkSelection(sel: string): string | null {
  const t = sel.trim();
  if (t === "" || t === "all") return null;
  for (const raw of t.split(",")) {
    const tok = raw.trim();
    if (tok === "") continue;
    const colon = tok.indexOf(":");
    const kind = colon < 0 ? tok : tok.slice(0, colon);
    const value = colon < 0 ? "" : tok.slice(colon + 1);
    if (value === "") return `bad lane selector '${tok}': expected kind:value`;
    switch (kind) {
      case "g":
      case "rank": {
        const e = checkRange(kind, value, tok);
        if (e) return e;
        break;
      }
      case "node":
      case "engine":
        break;
      case "gpu": {
        const c = value.lastIndexOf(":");
        if (c <= 0 || !INT.test(value.slice(c + 1))) return `bad lane selector '${tok}': expected gpu:<node>:<index>`;
        break;
      }
      case "every":
        if (!INT.test(value)) return `bad lane selector '${tok}': stride must be an integer`;
        if (Number(value.replace(/_/g, "")) <= 0) return `bad lane selector '${tok}': stride must be positive`;
        break;
      case "role":
        if (value !== "train" && value !== "rollout") return `bad lane selector '${tok}': role must be train or rollout`;
        break;
      default:
        return `unknown lane selector kind '${kind}' in '${tok}'`;
    }
  }
  return null;
}

/** `g:a0,…,a7` with a_i = lanes[floor(i·N/8)].index, when there are more than 8 lanes. */
export function defaultSpacedSelection(lanes: readonly { index: number }[], n = DEFAULT_SPACED_LANES): string | null {
  if (lanes.length <= n) return null;
  const terms: string[] = [];
  for (let i = 0; i < n; i++) terms.push(`g:${lanes[Math.floor((i * lanes.length) / n)]!.index}`);
  return joinTerms(terms);
}

export interface Capped<T> {
  shown: T[];
  total: number;
  capped: boolean;
}

/** Keep the first `budget` lanes in index order. */
export function capLanes<T extends { index: number }>(resolved: readonly T[], budget = LANE_RENDER_BUDGET): Capped<T> {
  const sorted = [...resolved].sort((a, b) => a.index - b.index);
  return { shown: sorted.slice(0, budget), total: sorted.length, capped: sorted.length > budget };
}

/** Sorted lane indices → compact `g:` terms (`g:0-3`, `g:5`). */
export function compactIndices(indices: Iterable<number>): string[] {
  const s = [...new Set(indices)].sort((a, b) => a - b);
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j]! + 1) j++;
    out.push(i === j ? `g:${s[i]}` : `g:${s[i]}-${s[j]}`);
    i = j + 1;
  }
  return out;
}

/**
 * Carpet brush rule: when every brushed lane is already selected, remove them (the rest
 * is written as compact `g:` ranges rather than one `gpu:` term per lane); otherwise append
 * the not-yet-selected lanes. `selected` null = everything selected ("all").
 */
export function brushToggle(current: string, selected: ReadonlySet<number> | null, brushed: readonly number[], allIndices: readonly number[]): string {
  if (brushed.length === 0) return current;
  const sel = selected ?? new Set(allIndices);
  const allIn = brushed.every((i) => sel.has(i));
  if (allIn) {
    const drop = new Set(brushed);
    const rest = [...sel].filter((i) => !drop.has(i));
    // An empty result would read as "all": keep an explicit empty-match term instead.
    return rest.length === 0 ? NOTHING : joinTerms(compactIndices(rest));
  }
  if (selected === null) return current;
  const add = brushed.filter((i) => !sel.has(i));
  return joinTerms([...splitTerms(current), ...compactIndices(add)]);
}

/** Lanes to request from the server for the shown set: compact ranges keep the URL short. */
export function shownSelection(shown: readonly { index: number }[]): string {
  return shown.length === 0 ? NOTHING : joinTerms(compactIndices(shown.map((l) => l.index)));
}

function pyIntOrNull(s: string): number | null {
  const t = s.trim();
  return /^[+-]?\d+(?:_\d+)*$/.test(t) ? Number(t.replace(/_/g, "")) : null;
}

/**
 * Resolve a selection in the browser when every term only needs the lane index
 * (g, gpu, node, every, all) — the common case, saving a round trip before the lanes
 * load. Returns null when a term needs the server's lane catalog (rank, engine, role) or
 * is malformed (the server then answers with its exact message).
 */
export function resolveLocally<T extends { node: string; gpu: number; index: number }>(sel: string, lanes: readonly T[]): T[] | null {
  const t = sel.trim();
  if (t === "" || t === "all") return [...lanes];
  const keep = new Set<T>();
  for (const raw of t.split(",")) {
    const tok = raw.trim();
    if (tok === "") continue;
    const colon = tok.indexOf(":");
    if (colon <= 0) return null;
    const kind = tok.slice(0, colon);
    const value = tok.slice(colon + 1);
    if (value === "") return null;
    if (kind === "g") {
      const dash = value.indexOf("-");
      const a = pyIntOrNull(dash < 0 ? value : value.slice(0, dash));
      const rest = dash < 0 ? null : value.slice(dash + 1);
      const b = rest === null || rest === "" ? a : pyIntOrNull(rest);
      if (a === null || b === null) return null;
      for (const l of lanes) if (l.index >= a && l.index <= b) keep.add(l);
    } else if (kind === "gpu") {
      const c = value.lastIndexOf(":");
      const g = c <= 0 ? null : pyIntOrNull(value.slice(c + 1));
      if (g === null) return null;
      const node = value.slice(0, c);
      for (const l of lanes) if (l.node === node && l.gpu === g) keep.add(l);
    } else if (kind === "node") {
      for (const l of lanes) if (l.node === value) keep.add(l);
    } else if (kind === "every") {
      const k = pyIntOrNull(value);
      if (k === null || k <= 0) return null;
      for (const l of lanes) if (l.index % k === 0) keep.add(l);
    } else return null;
  }
  return lanes.filter((l) => keep.has(l));
}
