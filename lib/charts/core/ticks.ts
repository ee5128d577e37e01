/** Axis ticks of every chart: "nice" 1/2/5 × 10^k values inside a domain. */
import { scaleLinear } from "@visx/scale";
import type { Range } from "@/lib/charts/core/range";

/** About `count` nice tick values inside the domain. */
export function niceTicks(domain: Range, count: number): number[] {
  return scaleLinear<number>({ domain: [domain[0], domain[1]], range: [0, 1] }).ticks(count);
}

/** Integer-only ticks for step axes (no "0.5" steps). */
export function stepTicks(domain: Range, count: number): number[] {
  const t = niceTicks(domain, count).filter((v) => Number.isInteger(v));
  if (t.length > 0) return t;
  const mid = Math.round((domain[0] + domain[1]) / 2);
  return mid >= domain[0] && mid <= domain[1] ? [mid] : [];
}

/** Ticks that are nice relative to an origin (elapsed time from the run start). */
export function ticksFrom(origin: number): (domain: Range, count: number) => number[] {
  return (domain, count) => niceTicks([domain[0] - origin, domain[1] - origin], count).map((r) => r + origin);
}

/** The tick spacing (for just-enough decimals in labels). */
export function tickStep(ticks: readonly number[], domain: Range): number {
  return ticks.length > 1 ? ticks[1]! - ticks[0]! : Math.abs(domain[1] - domain[0]) / 5;
}
