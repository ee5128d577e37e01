/**
 * Bubble strip preparer ("wait ratio / step"), time-aligned with the lanes: each step is
 * the span [ts − step_time, ts] shaded by its wait ratio on an absolute 0–1 scale (the
 * original shaded relative to the worst step, so a uniformly bad run looked fine).
 */
import type { Bubble } from "@/lib/charts/api-shapes";
import { lowerBound } from "@/lib/bisect";

export interface StepSpan {
  step: number;
  t0: number;
  t1: number;
  waitRatio: number | null;
  stepTime: number | null;
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

export function prepareSteps(bubbles: readonly Bubble[]): StepSpan[] {
  const sorted = bubbles.filter((b) => b.step !== null).sort((a, b) => a.ts - b.ts);
  return sorted.map((b, i) => {
    const prev = sorted[i - 1];
    const stepTime = num(b.step_time);
    const t0 = stepTime !== null && stepTime > 0 ? b.ts - stepTime : prev ? prev.ts : b.ts;
    return { step: b.step!, t0, t1: b.ts, waitRatio: num(b.wait_ratio), stepTime };
  });
}

/** Fill alpha for a wait ratio: 0.85 × ratio on an absolute scale; unknown → 0. */
export function waitAlpha(ratio: number | null): number {
  if (ratio === null || !Number.isFinite(ratio)) return 0;
  return 0.85 * Math.min(1, Math.max(0, ratio));
}

/** Steps overlapping [v0, v1]. */
export function stepsInView(steps: readonly StepSpan[], v0: number, v1: number): StepSpan[] {
  return steps.filter((s) => s.t1 >= v0 && s.t0 <= v1);
}

/** The step whose span contains t (the latest one when spans touch). */
export function stepAt(steps: readonly StepSpan[], t: number): StepSpan | null {
  const ends = steps.map((s) => s.t1);
  const i = lowerBound(ends, t);
  const s = steps[i];
  return s && s.t0 <= t ? s : null;
}

/** Previous / next step relative to a current step number (or the viewport centre). */
export function neighbourStep(steps: readonly StepSpan[], current: number | null, centre: number, dir: -1 | 1): StepSpan | null {
  if (steps.length === 0) return null;
  if (current !== null) {
    const i = steps.findIndex((s) => s.step === current);
    if (i >= 0) return steps[i + dir] ?? null;
  }
  if (dir > 0) return steps.find((s) => s.t1 > centre) ?? null;
  for (let i = steps.length - 1; i >= 0; i--) if (steps[i]!.t1 < centre) return steps[i]!;
  return null;
}
