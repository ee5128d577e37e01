/**
 * The phase hour index (docs/formats.md §4.16): facts made from the reader's parse, OPEN
 * markers resolved across hours from facts alone — checked against a brute-force reading of
 * every raw line — an index used only while it describes its file, and the writer keeping
 * them.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hourStartOfKey, parsePhaseIndexFile, phaseIndexRel, PhaseIndexFileSchema } from "@/lib/store/format";
import { openMetricStore, unmatchedAcrossHours, type MetricStore, type PhaseEvent } from "@/lib/store/telemetry";
import { makeTmpDir, phase, pyJsonLine, RunBuilder } from "@/lib/store/telemetry/testing";
import { indexPhaseHours } from "@/lib/store/writer/phase-indexer";
import { RunWriter } from "@/lib/store/writer/run-writer";
import { nodeWriterFs, type WriterFs } from "@/lib/store/writer/writer-fs";
import { phasesByLane } from "@/lib/timeline/phases";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const H = 3600;
const T0 = 1_000_000 * H; // an hour boundary

function rng(seed: number) {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}

const silent = { warn: () => undefined };

/**
 * Hours of train phases on 2 nodes × 3 GPUs: phases that cross hours (their marker in the
 * start hour, the closing row in the end hour), markers that never close, duplicated
 * markers, closing rows written before their marker, and a rollout manager.
 */
function phaseEvents(seed: number, hours = 5): PhaseEvent[] {
  const r = rng(seed);
  const evs: PhaseEvent[] = [];
  for (let t = T0 + 30; t < T0 + hours * H; t += 500 + r() * 900) {
    evs.push(phase("rollout", t, t + 200 + r() * 300, { node: "10.0.0.9", gpus: [], rank: -1, role: "rollout_manager" }));
    for (let node = 1; node <= 2; node++)
      for (let g = 0; g < 3; g++) {
        const o = { node: `10.0.0.${node}`, gpus: [g], rank: (node - 1) * 3 + g };
        const a = Math.round((t + 300 + r() * 60) * 1000) / 1000;
        const z = a + 200 + r() * (r() < 0.2 ? 4000 : 600);
        const marker = phase("train", a, -1, o);
        const close = phase("train", a, z, o);
        if (r() < 0.15) evs.push(close, marker);
        else evs.push(marker, close);
        if (r() < 0.1) evs.push(marker); // a marker written twice
        if (r() < 0.08) evs.push(phase("sleep", z, -1, o)); // never closes
        if (r() < 0.05) evs.push(phase("train", a, -1, { ...o, rank: o.rank + 100 })); // another rank's twin never closes
      }
  }
  return evs;
}

function run(): RunBuilder {
  const b = new RunBuilder();
  dirs.push(b.runDir);
  return b;
}
const open = (b: RunBuilder, o: { large?: boolean } = {}) =>
  openMetricStore(b.runDir, { follow: false, statIntervalMs: 0, ...(o.large ? { phaseIndexMaxRows: 0 } : {}) });

/** Per hour file, the row indices of OPEN markers with no closed row of the same (node, rank, name, t0) in any file. */
function bruteForceUnmatched(dash: string): number[][] {
  const files = fs.readdirSync(path.join(dash, "phases")).filter((n) => n.endsWith(".jsonl")).sort();
  const rows = files.map((n) =>
    fs
      .readFileSync(path.join(dash, "phases", n), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as PhaseEvent),
  );
  const closed = rows.flat().filter((e) => e.t1 !== -1);
  return rows.map((rs) =>
    rs.flatMap((e, i) => (e.t1 === -1 && !closed.some((c) => c.node === e.node && c.rank === e.rank && c.name === e.name && c.t0 === e.t0) ? [i] : [])),
  );
}

async function facts(store: MetricStore) {
  return store.phaseHourFacts(await store.phases.files());
}

describe("OPEN markers resolved across hours from the hours' facts", () => {
  it("match every raw line read by brute force, from indexes and from parsed hours alike", async () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const b = run().phases(...phaseEvents(seed));
      const want = bruteForceUnmatched(b.dash);
      expect(want.flat().length).toBeGreaterThan(0);
      const parsed = await facts(open(b));
      expect(unmatchedAcrossHours(parsed!), `seed ${seed}, parsed`).toEqual(want);

      const { indexed, current } = await indexPhaseHours(nodeWriterFs, b.dash, silent);
      expect(indexed.length).toBe(want.length);
      expect(current).toEqual([]);
      expect((await indexPhaseHours(nodeWriterFs, b.dash, silent)).current).toEqual(indexed);
      const store = open(b);
      const fromIndex = await facts(store);
      expect(fromIndex).toEqual(parsed);
      expect(unmatchedAcrossHours(fromIndex!), `seed ${seed}, indexed`).toEqual(want);
      // the facts came from the indexes: no hour was parsed
      expect((await store.phases.files()).every((f) => f.block === null)).toBe(true);
    }
  });

  it("phase lanes of any window answer as without indexes, and hours outside the window are not parsed", async () => {
    // markers that never close only in the first and the last two hours: hours 1–3 can be skipped
    const stray = (e: PhaseEvent) => e.t1 === -1 && (e.name === "sleep" || e.rank >= 100) && e.t0 > T0 + H && e.t0 < T0 + 4 * H;
    // (a lane catalog, as the collector keeps one: without it the lane scan reads every hour)
    const lanes = Object.fromEntries(["10.0.0.1", "10.0.0.2"].flatMap((n) => [0, 1, 2].map((g) => [`${n}:${g}`, { roles: ["train"] }])));
    const b = run().laneCatalog(lanes).phases(...phaseEvents(11, 6).filter((e) => !stray(e)));
    const r = rng(3);
    const windows: [number | null, number | null][] = [[null, null], [T0 + 4.5 * H, T0 + 5.5 * H], [T0 + 40, T0 + 900]];
    for (let i = 0; i < 8; i++) {
      const a = T0 + r() * 6 * H;
      windows.push([a, a + r() * 3 * H]);
    }
    const plain = await Promise.all(windows.map(([w0, w1]) => phasesByLane(open(b, { large: true }), w0, w1, null)));
    await indexPhaseHours(nodeWriterFs, b.dash, silent);
    for (const [k, [w0, w1]] of windows.entries()) expect(await phasesByLane(open(b, { large: true }), w0, w1, null), `${w0} ${w1}`).toEqual(plain[k]);

    // A late window: only its hours and those whose markers never close are parsed.
    const store = open(b, { large: true });
    await phasesByLane(store, T0 + 5.2 * H, T0 + 5.4 * H, null);
    const files = await store.phases.files();
    const all = await facts(open(b));
    const open_ = unmatchedAcrossHours(all!)!;
    const want = files.map((f, k) => f.hourStart! >= T0 + 5 * H || open_[k]!.length > 0);
    expect(want.filter((x) => !x).length).toBeGreaterThan(0);
    expect(files.map((f) => f.block !== null)).toEqual(want);
  });
});

describe("facts of resident hours", () => {
  it("are made once per block and again when the block grows", async () => {
    const o = { node: "10.0.0.1", gpus: [0], rank: 0 };
    const b = run().phases(phase("a", T0 + 10, -1, o), phase("a", T0 + 10, T0 + H + 5, o));
    const store = openMetricStore(b.runDir, { follow: true, statIntervalMs: 0 });
    await store.phases.read(await store.phases.files()); // resident, as a followed run's hours are
    const first = (await facts(store))!;
    const again = (await facts(store))!;
    expect(again[0]).toBe(first[0]);
    expect(again[1]).toBe(first[1]);
    b.phases(phase("b", T0 + H + 6, T0 + H + 7, o)); // the newest hour grows
    await store.phases.read(await store.phases.files());
    const grown = (await facts(store))!;
    expect(grown[0]).toBe(first[0]);
    expect(grown[1]).not.toBe(first[1]);
    expect(grown.map((f) => f.rows)).toEqual([1, 2]);
    expect(unmatchedAcrossHours(grown)).toEqual([[], []]);
  });
});

describe("an index stands in for its hour only while it describes the file", () => {
  it("is ignored once the hour grows, is replaced, is corrupt or leads outside the run", async () => {
    const o = { node: "10.0.0.1", gpus: [0], rank: 0 };
    const b = run().phases(phase("train", T0 + 100, -1, o), phase("train", T0 + 200, T0 + 300, o), phase("step", T0 + H + 10, T0 + H + 20, o));
    await indexPhaseHours(nodeWriterFs, b.dash, silent);
    const before = await facts(open(b));
    expect(unmatchedAcrossHours(before!)).toEqual([[0], []]);

    // The hour after gets the marker's closing row: the grown file's index is stale.
    b.phases(phase("train", T0 + 100, T0 + H + 50, o));
    expect(unmatchedAcrossHours((await facts(open(b)))!)).toEqual([[], []]);

    // Same size, other bytes in the middle (the closing row's t0 no longer the marker's): the
    // edit changed the file's modification time.
    const second = path.join(b.dash, "phases", path.basename(fs.readdirSync(path.join(b.dash, "phases")).sort()[1]!));
    await indexPhaseHours(nodeWriterFs, b.dash, silent);
    const text = fs.readFileSync(second, "utf8");
    const edited = text.replace(`"t0":${T0 + 100},"t1":${T0 + H + 50}`, `"t0":${T0 + 101},"t1":${T0 + H + 50}`);
    expect(edited.length).toBe(text.length);
    expect(edited).not.toBe(text);
    fs.writeFileSync(second, edited);
    expect(unmatchedAcrossHours((await facts(open(b)))!)).toEqual([[0], []]);

    // A corrupt index, and one that is a link out of the run: the hour is parsed.
    await indexPhaseHours(nodeWriterFs, b.dash, silent);
    const key = path.basename(second, ".jsonl");
    const idx = path.join(b.dash, phaseIndexRel(key));
    const good = fs.readFileSync(idx, "utf8");
    const forged = JSON.parse(good) as { facts: { closes: unknown[] } };
    forged.facts.closes = [];
    fs.writeFileSync(idx, "{not json");
    expect(unmatchedAcrossHours((await facts(open(b)))!)).toEqual([[0], []]);
    const outside = makeTmpDir();
    dirs.push(outside);
    fs.writeFileSync(path.join(outside, "x.json"), JSON.stringify(forged));
    fs.rmSync(idx);
    fs.symlinkSync(path.join(outside, "x.json"), idx);
    const store = open(b);
    expect(unmatchedAcrossHours((await facts(store))!)).toEqual([[0], []]);
    expect((await store.phases.files())[1]!.block).not.toBeNull(); // parsed, not taken from the link

    // An index whose marker rows lie past its rows, and one larger than both 1 MiB and its
    // hour: the hour is parsed.
    const first = path.join(b.dash, phaseIndexRel(path.basename(fs.readdirSync(path.join(b.dash, "phases")).sort()[0]!, ".jsonl")));
    const valid = fs.readFileSync(first, "utf8");
    const used = async () => {
      const s = open(b);
      expect(unmatchedAcrossHours((await facts(s))!)).toEqual([[0], []]);
      return (await s.phases.files())[0]!.block === null;
    };
    expect(await used()).toBe(true);
    const j = JSON.parse(valid) as { facts: { open: [number, ...unknown[]][]; rows: number } };
    j.facts.open = j.facts.open.map(([, ...rest]) => [j.facts.rows, ...rest]);
    fs.writeFileSync(first, JSON.stringify(j));
    expect(await used()).toBe(false);
    fs.writeFileSync(first, valid + " ".repeat(1 << 20));
    expect(await used()).toBe(false);
    fs.writeFileSync(first, valid);
    expect(await used()).toBe(true);
  });

  it("inexact facts (a marker outside its hour) and a legacy file send the markers back to row-by-row matching", async () => {
    const o = { node: "10.0.0.1", gpus: [0], rank: 0 };
    const b = run().phases(phase("a", T0 + 100, T0 + 200, o), phase("b", T0 + H + 100, T0 + H + 200, o));
    const [k0] = fs.readdirSync(path.join(b.dash, "phases")).sort();
    // a marker filed in the wrong hour, closed in the next one
    b.raw(`phases/${k0}`, `${pyJsonLine(phase("late", T0 + H + 5, -1, o))}\n`);
    b.phases(phase("late", T0 + H + 5, T0 + H + 9, o));
    await indexPhaseHours(nodeWriterFs, b.dash, silent);
    const f = (await facts(open(b)))!;
    expect(f[0]!.exact).toBe(false);
    expect(unmatchedAcrossHours(f)).toBeNull();
    const w: [number, number] = [T0, T0 + 2 * H];
    const withIndex = await phasesByLane(open(b, { large: true }), ...w, null);
    fs.rmSync(path.join(b.dash, "index"), { recursive: true });
    expect(await phasesByLane(open(b, { large: true }), ...w, null)).toEqual(withIndex);
    // closed in the next hour: drawn once, as closed, not as running
    expect(JSON.stringify(withIndex).match(/"late"/g)).toHaveLength(1);
    expect(JSON.stringify(withIndex)).toContain(`"name":"late","t0":${T0 + H + 5},"t1":${T0 + H + 9}`);

    b.legacy("phases", [phase("x", T0 + 1, T0 + 2, o)]);
    expect(await facts(open(b))).toBeNull();
  });
});

describe("reading an index file", () => {
  it("accepts exactly what the schema accepts, unchanged", async () => {
    const b = run().phases(phase("train", T0 + 10, -1), phase("train", T0 + 20, T0 + 30), phase("x", T0 + 30, T0 + H + 5));
    await indexPhaseHours(nodeWriterFs, b.dash, silent);
    const key = fs.readdirSync(path.join(b.dash, "index/phases")).sort()[1]!.replace(".json", "");
    const valid = JSON.parse(fs.readFileSync(path.join(b.dash, phaseIndexRel(key)), "utf8")) as Record<string, unknown>;
    expect(parsePhaseIndexFile(valid)).toEqual(valid);
    const facts = valid.facts as Record<string, unknown>;
    expect((facts.closes as unknown[]).length).toBe(1);
    const bad = [NaN, Infinity, -1, 1.5, "1", null, undefined, [], {}, true];
    const variants: unknown[] = [null, [], "x", { ...valid, extra: 1 }];
    for (const k of Object.keys(valid)) {
      const { [k]: _gone, ...rest } = valid;
      variants.push(rest);
      for (const v of bad) variants.push({ ...valid, [k]: v });
    }
    for (const k of Object.keys(facts)) {
      const { [k]: _gone, ...rest } = facts;
      variants.push({ ...valid, facts: rest }, { ...valid, facts: { ...facts, extra: 0 } });
      for (const v of bad) variants.push({ ...valid, facts: { ...facts, [k]: v } });
    }
    const open = [7, T0 + 10, "10.0.0.1", 0, "train"];
    const close = [T0 + 30, "n1", 0, "x"];
    for (const [field, tuple] of [["open", open], ["closes", close]] as const) {
      variants.push({ ...valid, facts: { ...facts, [field]: [tuple] } });
      variants.push({ ...valid, facts: { ...facts, [field]: [[...tuple, 1]] } }, { ...valid, facts: { ...facts, [field]: [tuple.slice(1)] } });
      for (let i = 0; i < tuple.length; i++) for (const v of bad) variants.push({ ...valid, facts: { ...facts, [field]: [tuple.map((x, j) => (j === i ? v : x))] } });
    }
    let accepted = 0;
    for (const v of variants) {
      const z = PhaseIndexFileSchema.safeParse(v);
      const got = parsePhaseIndexFile(v);
      expect(got, JSON.stringify(v)).toEqual(z.success ? z.data : null);
      if (z.success) accepted++;
    }
    expect(accepted).toBeGreaterThan(3);
    expect(accepted).toBeLessThan(variants.length / 4);
  });
});

describe("the writer keeps an index beside the phase hours it has finished with", () => {
  /** A phase record as the writer takes it. */
  const rec = (name: string, t0: number, t1: number) => ({ name, t0, t1, node: "10.0.0.1", gpus: [0], rank: 0, role: "train" as const });
  const indexes = (dash: string) => (fs.existsSync(path.join(dash, "index/phases")) ? fs.readdirSync(path.join(dash, "index/phases")).sort() : []);

  it("two hours behind the newest while it writes, every hour when it closes; an hour written again is indexed again", async () => {
    const dir = makeTmpDir();
    dirs.push(dir);
    const dash = path.join(dir, "dashboard");
    const w = await RunWriter.open({ dashDir: dash, meta: { run_name: "r", start_ts: T0 } });
    for (let h = 0; h < 4; h++) {
      w.add("phases", [rec("train", T0 + h * H + 10, -1), rec("train", T0 + h * H + 10, T0 + h * H + 20)]);
      await w.flush();
    }
    const key = (h: number) => `${hourKeyOf(T0 + h * H)}.json`;
    await waitFor(() => indexes(dash).length === 2);
    expect(indexes(dash)).toEqual([key(0), key(1)]);
    w.add("phases", [rec("late", T0 + 50, T0 + 60)]); // hour 0 again
    await w.close();
    expect(indexes(dash)).toEqual([0, 1, 2, 3].map(key));
    // every index describes its file as it is now
    const store = openMetricStore(dir, { follow: false, statIntervalMs: 0 });
    const f = (await facts(store))!;
    expect(f.map((x) => x.rows)).toEqual([3, 2, 2, 2]);
    expect((await store.phases.files()).every((x) => x.block === null)).toBe(true);
  });

  it("a failing index write is logged and leaves the data and the flush alone", async () => {
    const dir = makeTmpDir();
    dirs.push(dir);
    const dash = path.join(dir, "dashboard");
    const full: WriterFs = {
      ...nodeWriterFs,
      writeFile: async (p, data) => {
        if (p.includes(`${path.sep}index${path.sep}`)) throw Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
        return nodeWriterFs.writeFile(p, data);
      },
    };
    const warnings: string[] = [];
    const w = await RunWriter.open({ dashDir: dash, fs: full, log: { warn: (m) => warnings.push(m), error: () => undefined }, meta: { run_name: "r", start_ts: T0 } });
    w.add("phases", [rec("train", T0 + 10, T0 + 20)]);
    const report = await w.close();
    expect(report.ok).toBe(true);
    expect(warnings.join("\n")).toMatch(/could not write the phase hour index .*ENOSPC.*readers parse that hour instead/);
    expect(indexes(dash)).toEqual([]);
    const f = (await facts(openMetricStore(dir, { follow: false, statIntervalMs: 0 })))!;
    expect(f.map((x) => x.rows)).toEqual([1]);
  });
});

function hourKeyOf(ts: number): string {
  const d = new Date(ts * 1000).toISOString();
  const key = `${d.slice(0, 4)}${d.slice(5, 7)}${d.slice(8, 10)}_${d.slice(11, 13)}`;
  expect(hourStartOfKey(key)).toBe(Math.floor(ts / H) * H);
  return key;
}

async function waitFor(ok: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
}
