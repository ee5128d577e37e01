/**
 * PhaseBlock.localUnmatched: an OPEN marker is matched by a closed row of the same
 * (node, rank, name, t0) in its block. Checked against the definition, pair by pair, on
 * blocks shaped like a fleet step (thousands of markers sharing one t0) and like small
 * irregular ones, including values that a hash could confuse; and blocks in runs of one
 * (name, t0), which rank tables answer, against the same definition.
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

describe("PhaseBlock.localUnmatched on blocks in runs of one (name, t0)", () => {
  // What a fleet writes: a step's markers in a run, its closings in another. Such blocks are
  // answered by rank tables per run (`unmatchedByRuns`), and must agree with the definition.
  const byRuns = (b: PhaseBlock) => (b as unknown as { unmatchedByRuns(): number[] | null }).unmatchedByRuns();

  it("agrees with the definition, and takes the rank tables, on random fleet-shaped blocks", () => {
    const rnd = lcg(20261207);
    let tables = 0;
    for (let round = 0; round < 60; round++) {
      const evs: Ev[] = [];
      const keys = 3 + Math.floor(rnd() * 6);
      const pending: Ev[][] = [];
      for (let k = 0; k < keys; k++) {
        const t0 = [1000 + k * 60, NaN, -0, 0, 1000 + k * 60 + 0.5][Math.floor(rnd() * (round % 3 === 0 ? 5 : 1))]!;
        const name = rnd() < 0.5 ? "actor_train" : "train_wait";
        const ranks = [...Array(24 + Math.floor(rnd() * 40)).keys()].filter(() => rnd() < 0.9);
        const markers = ranks.map((r) => ({ name, t0, t1: OPEN_T1, node: `n${r >> 3}`, rank: r }));
        const closings = ranks
          .filter(() => rnd() < 0.85)
          .map((r) => {
            const odd = rnd();
            // another node, a rank no marker has, a fractional or NaN rank: no twin
            const node = odd < 0.03 ? `n${(r >> 3) + 1}` : `n${r >> 3}`;
            const rank = odd > 0.98 ? r + 0.5 : odd > 0.96 ? NaN : odd > 0.94 ? 500 + r : r;
            return { name, t0, t1: 2000 + rnd(), node, rank };
          });
        // closings before their markers, in two runs, or after
        if (rnd() < 0.2) evs.push(...closings, ...markers);
        else if (rnd() < 0.3) evs.push(...markers.slice(0, 10), ...closings.slice(0, 5), ...markers.slice(10), ...closings.slice(5));
        else {
          evs.push(...markers);
          pending.push(closings);
        }
      }
      for (const c of pending) evs.push(...c);
      const b = block(evs);
      const fast = byRuns(b);
      if (fast) tables++;
      const want = bruteUnmatched(evs);
      if (fast) expect(fast, `round ${round}`).toEqual(want);
      expect(b.localUnmatched(), `round ${round}`).toEqual(want);
    }
    expect(tables).toBeGreaterThan(40);
  });

  it("leaves blocks it cannot answer exactly to the general table", () => {
    const step = (rank: (r: number) => number, node = (r: number) => `n${r}`): Ev[] => {
      const evs: Ev[] = [];
      for (let r = 0; r < 32; r++) evs.push({ name: "a", t0: 5, t1: OPEN_T1, node: node(r), rank: rank(r) });
      for (let r = 0; r < 32; r += 2) evs.push({ name: "a", t0: 5, t1: 9, node: node(r), rank: rank(r) });
      return evs;
    };
    for (const evs of [
      step((r) => r), // answered by rank tables
      step((r) => r >> 1, (r) => `n${r & 1}`), // two markers of one key share each rank
      step((r) => r - 1), // −1 (the rollout manager's) and up: rank tables
      step((r) => r - 3), // below −1
      step((r) => r + 0.5), // fractional ranks
      step((r) => 2 ** 31 + r), // past the table
      step((r) => r * 1000), // sparse ranks: one large table
    ]) {
      const b = block(evs);
      expect(b.localUnmatched()).toEqual(bruteUnmatched(evs));
    }
    expect(byRuns(block(step((r) => r)))).toEqual(bruteUnmatched(step((r) => r)));
    expect(byRuns(block(step((r) => r >> 1, (r) => `n${r & 1}`)))).toBeNull();
    expect(byRuns(block(step((r) => r - 1)))).toEqual(bruteUnmatched(step((r) => r - 1)));
    expect(byRuns(block(step((r) => r - 3)))).toBeNull();
    expect(byRuns(block(step((r) => r + 0.5)))).toBeNull();
    expect(byRuns(block(step((r) => 2 ** 31 + r)))).toBeNull();
    // markers in runs of one: the general table
    const scattered: Ev[] = [...Array(64).keys()].map((k) => ({ name: "a", t0: k, t1: OPEN_T1, node: "n", rank: 0 }));
    expect(byRuns(block(scattered))).toBeNull();
    expect(block(scattered).localUnmatched()).toEqual(bruteUnmatched(scattered));
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
