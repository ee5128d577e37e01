/**
 * PhaseBlock.localUnmatched: an OPEN marker is matched by a closed row of the same
 * (node, rank, name, t0) in its block. Checked against the definition, pair by pair, on
 * blocks shaped like a fleet step (thousands of markers sharing one t0) and like small
 * irregular ones, including values that a hash could confuse.
 */
import { describe, expect, it } from "vitest";
import { OPEN_T1 } from "@/lib/store/format/records";
import { Dicts, PhaseBlock } from "@/lib/store/telemetry/blocks";

type Ev = { name: string; t0: number; t1: number; node: string; rank: number };

function block(evs: Ev[]): PhaseBlock {
  const b = new PhaseBlock(new Dicts().phaseStrings);
  for (const e of evs) b.add({ ...e, gpus: [0], role: "actor" });
  return b;
}

/**
 * The definition, every marker against every row. t0 compares as Map keys do (NaN equals
 * NaN: a lenient line may carry one), the other fields with `===`.
 */
function bruteUnmatched(evs: Ev[]): number[] {
  const out: number[] = [];
  const sameT0 = (a: number, b: number) => a === b || (Number.isNaN(a) && Number.isNaN(b));
  evs.forEach((o, i) => {
    if (o.t1 !== OPEN_T1) return;
    const twin = evs.some((c) => c.t1 !== OPEN_T1 && sameT0(c.t0, o.t0) && c.node === o.node && c.rank === o.rank && c.name === o.name);
    if (!twin) out.push(i);
  });
  return out;
}

/** A deterministic generator (no Math.random in tests). */
function lcg(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe("PhaseBlock.localUnmatched", () => {
  it("matches a fleet step: 2048 ranks open one phase at one t0, most of them close it", () => {
    const evs: Ev[] = [];
    const ranks = 2048;
    for (const step of [0, 1]) {
      const t0 = 1000 + step * 60;
      for (let r = 0; r < ranks; r++) evs.push({ name: "actor_train", t0, t1: OPEN_T1, node: `10.0.0.${r >> 3}`, rank: r });
      // every rank but those ≡ 5 (mod 7) closes; closed rows come after their markers
      for (let r = 0; r < ranks; r++) if (r % 7 !== 5) evs.push({ name: "actor_train", t0, t1: t0 + 30, node: `10.0.0.${r >> 3}`, rank: r });
      // a closed row of another phase at the same t0 and rank closes nothing
      evs.push({ name: "rollout", t0, t1: t0 + 10, node: "10.0.0.0", rank: 5 });
    }
    const b = block(evs);
    const got = b.localUnmatched();
    expect(got).toEqual(bruteUnmatched(evs));
    expect(got.length).toBe(2 * [...Array(ranks).keys()].filter((r) => r % 7 === 5).length);
  });

  it("agrees with the definition on random blocks with shared t0s, ranks past 2^31, NaN and -0", () => {
    const rnd = lcg(20261205);
    for (let round = 0; round < 40; round++) {
      const evs: Ev[] = [];
      const n = 50 + Math.floor(rnd() * 400);
      const t0s = [5, 5.5, 7, NaN, -0, 0];
      const ranks = [0, 1, 2, 2 ** 31, 2 ** 32, -1, NaN, 2 ** 32 + 1];
      for (let k = 0; k < n; k++) {
        const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
        evs.push({
          name: pick(["a", "b"]),
          t0: pick(t0s),
          t1: rnd() < 0.5 ? OPEN_T1 : 100,
          node: pick(["n0", "n1", "n2"]),
          rank: pick(ranks),
        });
      }
      expect(block(evs).localUnmatched(), `round ${round}`).toEqual(bruteUnmatched(evs));
    }
  });
});

describe("PhaseBlock.open", () => {
  it("lists every OPEN marker's row, ascending, as the block grows past its first capacities and after trim", () => {
    const rnd = lcg(7);
    const evs: Ev[] = [];
    for (let k = 0; k < 5000; k++) evs.push({ name: "a", t0: k, t1: rnd() < 0.6 ? OPEN_T1 : k + 1, node: "n", rank: k % 8 });
    const want = evs.flatMap((e, i) => (e.t1 === OPEN_T1 ? [i] : []));
    const b = block(evs);
    expect(b.open).toBeInstanceOf(Uint32Array);
    expect(Array.from(b.open)).toEqual(want);
    expect(b.byteLength()).toBeGreaterThanOrEqual(4 * want.length);
    b.trim();
    expect(Array.from(b.open)).toEqual(want);
    expect(b.open.length).toBe(want.length);
  });
});
