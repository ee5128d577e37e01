/** Step and group navigation for the Rollouts and Sample views (pure, URL-building only). */
import type { SummaryRow } from "./types";

export interface StepPosition {
  /** Index of `step` in `ids`, or -1 when the step has no dump in this list. */
  index: number;
  count: number;
  prev: number | null;
  next: number | null;
  newest: number | null;
  /** The closest listed id (ties go to the lower one); null for an empty list. */
  nearest: number | null;
}

export function stepPosition(ids: readonly number[], step: number): StepPosition {
  const sorted = [...ids].sort((a, b) => a - b);
  const index = sorted.indexOf(step);
  let prev: number | null = null;
  let next: number | null = null;
  let nearest: number | null = null;
  for (const id of sorted) {
    if (id < step) prev = id;
    if (id > step && next === null) next = id;
    if (nearest === null || Math.abs(id - step) < Math.abs(nearest - step)) nearest = id;
  }
  return { index, count: sorted.length, prev, next, newest: sorted.at(-1) ?? null, nearest };
}

/** The dumped steps in a few characters: "0–7" when contiguous, else "0, 2, 5" (first few). */
export function describeIds(unsorted: readonly number[]): string {
  const ids = [...unsorted].sort((a, b) => a - b);
  if (!ids.length) return "none";
  const contiguous = ids.every((v, i) => i === 0 || v === ids[i - 1]! + 1);
  if (contiguous) return ids.length === 1 ? String(ids[0]) : `${ids[0]}–${ids.at(-1)}`;
  return ids.length <= 6 ? ids.join(", ") : `${ids.slice(0, 5).join(", ")}, … ${ids.at(-1)}`;
}

/** What a click on a metrics point of a step without a rollout dump says (#15 defect 9). */
export function noDumpNote(evaluation: boolean, step: number, ids: readonly number[]): string {
  const kind = evaluation ? "eval " : "";
  return ids.length
    ? `${kind}step ${step} has no rollout dump — nothing to open (${kind}dumps: steps ${describeIds(ids)})`
    : `${kind}step ${step} has no rollout dump — this run has no ${kind}rollout dumps`;
}

export function runBase(runId: string): string {
  return `/runs/${encodeURIComponent(runId)}`;
}

export function stepHref(runId: string, step: number, evaluation: boolean, search?: URLSearchParams | string): string {
  const q = new URLSearchParams(search ?? "");
  if (evaluation) q.set("eval", "1");
  else q.delete("eval");
  const qs = q.toString();
  return `${runBase(runId)}/rollout/${step}${qs ? `?${qs}` : ""}`;
}

export function sampleHref(runId: string, step: number, sampleIndex: number, evaluation: boolean, search?: URLSearchParams | string): string {
  const q = new URLSearchParams(search ?? "");
  if (evaluation) q.set("eval", "1");
  else q.delete("eval");
  const qs = q.toString();
  return `${runBase(runId)}/rollout/${step}/sample/${sampleIndex}${qs ? `?${qs}` : ""}`;
}

export interface Sibling {
  sampleIndex: number;
  reward: number | null;
  status: string | null;
  truncated: boolean;
  responseLength: number | null;
}

export interface GroupSiblings {
  groupIndex: number | null;
  siblings: Sibling[];
  /** Position of the current sample among its siblings (-1 when it is not in the summary). */
  position: number;
  prev: number | null;
  next: number | null;
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** Every sample sharing the current one's `group_index`, ordered by sample index. */
export function groupSiblings(rows: readonly SummaryRow[], sampleIndex: number, evaluation: boolean): GroupSiblings {
  const me = rows.find((r) => r.sample_index === sampleIndex);
  if (!me) return { groupIndex: null, siblings: [], position: -1, prev: null, next: null };
  const g = me.group_index;
  const rewardKey = evaluation ? "reward" : "raw_reward";
  const siblings = rows
    .filter((r) => r.group_index === g)
    .sort((a, b) => a.sample_index - b.sample_index)
    .map((r) => ({
      sampleIndex: r.sample_index,
      reward: num(r[rewardKey]) ?? num(r.reward),
      status: typeof r.status === "string" ? r.status : null,
      truncated: r.truncated === true,
      responseLength: num(r.response_length),
    }));
  const position = siblings.findIndex((s) => s.sampleIndex === sampleIndex);
  return {
    groupIndex: g,
    siblings,
    position,
    prev: position > 0 ? siblings[position - 1]!.sampleIndex : null,
    next: position >= 0 && position < siblings.length - 1 ? siblings[position + 1]!.sampleIndex : null,
  };
}

/** `?eval=` as the pages read it (1/true/yes/on, any case). */
export function isEvalParam(v: string | string[] | undefined): boolean {
  return ["1", "true", "yes", "on"].includes(String(Array.isArray(v) ? v[0] : (v ?? "")).toLowerCase());
}
