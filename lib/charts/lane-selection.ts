/**
 * Client side of the lane-selection grammar (docs/api.md 8.8): chips ⇄ selection string, a
 * syntax pre-check so a typo is flagged before the round trip (the server stays the
 * judge and its 400 text is shown too), the default of 8 evenly spaced lanes, the
 * virtualised lane rows (the page in sight is drawn), and the carpet brush toggle.
 * Parsing and matching are the shared grammar of lib/contracts/lanes.ts, so the browser
 * and the server cannot disagree.
 */
import { ApiError } from "@/lib/contracts/errors";
import { laneKey, parseLaneSelection, selectedKeys, type LaneTerm } from "@/lib/contracts/lanes";

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

/**
 * Syntax check of one selection string: the first problem (the server's own message, from
 * the shared grammar in lib/contracts/lanes.ts), or null.
 */
export function checkSelection(sel: string): string | null {
  try {
    parseLaneSelection(sel);
    return null;
  } catch (e) {
    if (ApiError.is(e)) return e.message;
    throw e;
  }
}

/** `g:a0,…,a7` with a_i = lanes[floor(i·N/8)].index, when there are more than 8 lanes. */
export function defaultSpacedSelection(lanes: readonly { index: number }[], n = DEFAULT_SPACED_LANES): string | null {
  if (lanes.length <= n) return null;
  const terms: string[] = [];
  for (let i = 0; i < n; i++) terms.push(`g:${lanes[Math.floor((i * lanes.length) / n)]!.index}`);
  return joinTerms(terms);
}

/**
 * Lane rows are virtualised: every selected lane has its row (in index order) and the
 * page of rows in sight is the one whose data is asked and drawn — at least
 * LANE_RENDER_BUDGET rows, on PAGE_STEP boundaries. A page stays while every row in sight
 * is in it, so scrolling inside it asks nothing new; when the rows in sight leave it, the
 * next page is placed ahead of the scroll (going down, the rows in sight near its top;
 * going up, near its bottom), and `pageAhead` names the one after, to be asked early.
 */
export const PAGE_STEP = 8;

/** Rows of the lanes box in sight: the first and how many. */
export interface RowsInView {
  first: number;
  count: number;
}

/** Rows asked and drawn: [start, start + size). */
export interface LanePage {
  start: number;
  size: number;
}

/** The page for `rows` in sight of `total` lanes, keeping `prev` while it holds them. */
export function pageFor(rows: RowsInView, total: number, prev: LanePage | null = null, budget = LANE_RENDER_BUDGET): LanePage {
  const size = Math.min(total, Math.max(budget, rows.count + 2 * PAGE_STEP));
  const clamp = (start: number) => Math.max(0, Math.min(start, total - size));
  const end = Math.min(total, rows.first + rows.count);
  if (prev !== null && prev.size === size) {
    const kept = clamp(prev.start);
    if (rows.first >= kept && end <= kept + size) return kept === prev.start ? prev : { start: kept, size };
  }
  const up = prev !== null && rows.first < prev.start;
  const wanted = up
    ? Math.ceil((end + PAGE_STEP / 2 - size) / PAGE_STEP) * PAGE_STEP
    : Math.floor(Math.max(0, rows.first - PAGE_STEP / 2) / PAGE_STEP) * PAGE_STEP;
  return { start: clamp(wanted), size };
}

/**
 * The page a scroll on in the same direction reaches next — the one `pageFor` gives when the
 * rows in sight first step out of `page` — once they are within PAGE_STEP rows of its edge
 * (null before that, and at either end of the rows): a view nobody scrolls asks nothing.
 */
export function pageAhead(page: LanePage, rows: RowsInView, total: number, down: boolean): LanePage | null {
  const { count } = rows;
  const room = down ? page.start + page.size - Math.min(total, rows.first + count) : rows.first - page.start;
  if (room > PAGE_STEP) return null;
  const first = down ? page.start + page.size - count + 1 : page.start - 1;
  if (first < 0 || first >= total) return null;
  // at the last (or first) page pageFor keeps it: nothing ahead
  const next = pageFor({ first, count }, total, page);
  return next.start === page.start ? null : next;
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

/**
 * Resolve a selection in the browser when every term only needs the lane index
 * (g, gpu, node, every, all) — the common case, saving a round trip before the lanes
 * load. Returns null when a term needs the server's lane catalog (rank, engine, role) or
 * is malformed (the server then answers with its exact message).
 */
export function resolveLocally<T extends { node: string; gpu: number; index: number }>(sel: string, lanes: readonly T[]): T[] | null {
  let terms: LaneTerm[] | null;
  try {
    terms = parseLaneSelection(sel);
  } catch {
    return null;
  }
  if (terms === null) return [...lanes];
  if (terms.some((t) => t.kind === "rank" || t.kind === "engine" || t.kind === "role")) return null;
  const keys = selectedKeys(terms, lanes);
  return lanes.filter((l) => keys.has(laneKey(l.node, l.gpu)));
}
