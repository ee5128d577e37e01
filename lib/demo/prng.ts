/**
 * Seeded PRNG for the demo/bench generators: every byte they write is a function of the
 * seed (and of `nowS`, which only shifts timestamps). mulberry32 is small, fast and good
 * enough for synthetic telemetry; `fork(label)` derives independent streams so adding a
 * draw in one part of a run does not shift every value of the others.
 */
export class Rng {
  private s: number;
  private readonly seed: number;

  constructor(seed: number) {
    this.seed = seed >>> 0 || 0x9e3779b9;
    this.s = this.seed;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  float(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  /** Integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** Standard normal (Box–Muller), scaled. */
  normal(mean = 0, sd = 1): number {
    const u = 1 - this.next();
    const v = this.next();
    return mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Exponential with the given mean. */
  exp(mean: number): number {
    return -mean * Math.log(1 - this.next());
  }

  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new RangeError("pick from an empty list");
    return xs[Math.floor(this.next() * xs.length)] as T;
  }

  /** An independent generator keyed by `label` (stable across unrelated code changes). */
  fork(label: string | number): Rng {
    let h = this.seed ^ 0x811c9dc5;
    const text = String(label);
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    return new Rng((h ^ (h >>> 16)) >>> 0);
  }
}

export const clamp = (x: number, lo: number, hi: number): number => (x < lo ? lo : x > hi ? hi : x);

/** Round to `d` decimals (telemetry values look like what a sampler reports). */
export const round = (x: number, d: number): number => {
  const k = 10 ** d;
  return Math.round(x * k) / k;
};
