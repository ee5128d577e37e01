/**
 * The byte-level line scanners must decode exactly what the generic path (lenient
 * JSON.parse + record decoder) decodes: same rows, same values, same corrupt count. Each
 * case is one line, ingested once through a scanner and once through the generic path.
 */
import { describe, expect, it } from "vitest";
import {
  addEngineRecord,
  addGpuRecord,
  decodePhase,
  Dicts,
  EngineBlock,
  EngineStage,
  GpuBlock,
  GpuStage,
  PhaseBlock,
} from "@/lib/store/telemetry/blocks";
import { EngineLineScanner, FastInterner, GpuLineScanner, ingestLines, numberEnd, PhaseLineScanner, readInt, readNumber } from "@/lib/store/telemetry/ingest";

const bytes = (lines: string[]) => Buffer.from(lines.map((l) => `${l}\n`).join(""), "utf8");

/**
 * `first` ingested, then `second` (as long, other bytes) copied over the same buffer and
 * ingested: a scanner that kept a view of the buffer would read `second` as `first`.
 */
function ingestReused<B>(scanner: { ingest(buf: Buffer, s: number, e: number, off: number, block: B): unknown }, block: B, first: string[], second: string[]): void {
  const a = bytes(first);
  const b = bytes(second);
  expect(b.length).toBe(a.length);
  const buf = Buffer.from(a);
  scanner.ingest(buf, 0, buf.length, 0, block);
  b.copy(buf);
  scanner.ingest(buf, 0, buf.length, buf.length, block);
}

function gpuRows(d: Dicts, b: GpuBlock) {
  const out: unknown[] = [];
  for (let g = 0; g < b.groups; g++)
    for (let r = b.groupStart(g); r < b.groupEnd(g); r++) {
      const lane = b.lane.get(r);
      out.push([b.groupTs(g), d.laneNode[lane], d.laneGpu[lane], b.util.get(r), b.mem.get(r), b.power.get(r)]);
    }
  return out;
}

function engineRows(d: Dicts, b: EngineBlock) {
  const out: unknown[] = [];
  for (const [mid, c] of b.metrics)
    for (let g = 0; g < c.groups; g++)
      for (let r = c.groupStart(g); r < c.groupEnd(g); r++) {
        const sid = c.series.get(r);
        out.push([d.metrics.values[mid], c.groupTs(g), d.seriesAddr[sid], d.seriesLabels[sid], c.value.get(r)]);
      }
  return out;
}

function viaGpu(lines: string[], fast: boolean) {
  const d = new Dicts();
  const block = new GpuBlock();
  const buf = bytes(lines);
  let corrupt: number;
  if (fast) corrupt = new GpuLineScanner(d).ingest(buf, 0, buf.length, 0, block).corrupt;
  else {
    const st = new GpuStage();
    corrupt = ingestLines(buf, 0, buf.length, 0, (rec) => addGpuRecord(st, d, rec)).corrupt;
    block.appendStage(st);
  }
  return { corrupt, rows: gpuRows(d, block) };
}

function viaEngine(lines: string[], fast: boolean) {
  const d = new Dicts();
  const block = new EngineBlock();
  const buf = bytes(lines);
  let corrupt: number;
  if (fast) corrupt = new EngineLineScanner(d).ingest(buf, 0, buf.length, 0, block).corrupt;
  else {
    const st = new EngineStage();
    corrupt = ingestLines(buf, 0, buf.length, 0, (rec) => addEngineRecord(st, d, rec)).corrupt;
    block.appendStage(st);
  }
  return { corrupt, rows: engineRows(d, block) };
}

function viaPhases(lines: string[], fast: boolean) {
  const d = new Dicts();
  const block = new PhaseBlock(d.phaseStrings);
  const buf = bytes(lines);
  let corrupt: number;
  if (fast) corrupt = new PhaseLineScanner(d).ingest(buf, 0, buf.length, 0, block).corrupt;
  else
    corrupt = ingestLines(buf, 0, buf.length, 0, (rec) => {
      const ev = decodePhase(rec);
      if (ev) block.add(ev);
      return ev !== null;
    }).corrupt;
  return { corrupt, rows: block.rows, open: block.open };
}

/** Object.is per number, so -0 and NaN are told apart. */
function same(a: unknown, b: unknown): boolean {
  if (typeof a === "number" && typeof b === "number") return Object.is(a, b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (a && b && typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return same(ka, kb) && ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
}

const GPU = '{"ts":1763971200.005,"node":"10.1.0.1","gpu":3,"util":95,"mem_mb":74737,"power_w":653}';
const GPU_CASES: string[] = [
  GPU,
  GPU.replace("1763971200.005", "1.7639712e9"),
  GPU.replace("1763971200.005", "17639712000E-1"),
  GPU.replace("1763971200.005", "1763971200.0050000000000000000001"),
  GPU.replace("1763971200.005", "-0"),
  GPU.replace("1763971200.005", "-0.0"),
  GPU.replace("1763971200.005", "0"),
  GPU.replace("1763971200.005", "01763971200"),
  GPU.replace("1763971200.005", "1763971200."),
  GPU.replace("1763971200.005", ".5"),
  GPU.replace("1763971200.005", "+1"),
  GPU.replace("1763971200.005", "NaN"),
  GPU.replace("1763971200.005", "Infinity"),
  GPU.replace("1763971200.005", "1e400"),
  GPU.replace("1763971200.005", "123456789012345678901234567890"),
  GPU.replace('"util":95', '"util":NaN'),
  GPU.replace('"util":95', '"util":95.7'),
  GPU.replace('"util":95', '"util":-Infinity'),
  GPU.replace('"util":95', '"util":1e2'),
  GPU.replace('"mem_mb":74737', '"mem_mb":143771.5'),
  GPU.replace('"power_w":653', '"power_w":1e999'),
  GPU.replace('"gpu":3', '"gpu":3.0'),
  GPU.replace('"gpu":3', '"gpu":3.5'),
  GPU.replace('"gpu":3', '"gpu":-1'),
  GPU.replace('"gpu":3', '"gpu":70000'),
  GPU.replace('"gpu":3', '"gpu":"3"'),
  GPU.replace("10.1.0.1", "10.1.0.\\u0031"),
  GPU.replace("10.1.0.1", 'a\\"b'),
  GPU.replace("10.1.0.1", "nöde"),
  GPU.replace("10.1.0.1", "tab\there"),
  GPU.replace("10.1.0.1", ""),
  '{"node":"10.1.0.1","ts":1763971200.005,"gpu":3,"util":95,"mem_mb":74737,"power_w":653}',
  '{"ts": 1763971200.005, "node": "10.1.0.1", "gpu": 3, "util": 95, "mem_mb": 74737, "power_w": 653}',
  ` ${GPU}`,
  `${GPU} `,
  `${GPU}\r`,
  `${GPU}x`,
  GPU.replace("}", ',"extra":1}'),
  GPU.replace(',"power_w":653', ""),
  GPU.replace('"util":95', '"util":95,"util":96'),
  // each key with one byte changed, wherever in it (the scanner compares keys a word at a time)
  ...["ts", "node", "gpu", "util", "mem_mb", "power_w"].flatMap((k) =>
    Array.from({ length: k.length + 3 }, (_, i) => {
      const key = `"${k}":`;
      return GPU.replace(key, key.slice(0, i) + (key[i] === "X" ? "Y" : "X") + key.slice(i + 1));
    }),
  ),
  "[1,2,3]",
  "{}",
  "not json",
  "   ",
];

describe("gpu_util line scanner", () => {
  it.each(GPU_CASES.map((l) => [l]))("agrees with the generic path: %s", (line) => {
    const fast = viaGpu([line], true);
    const slow = viaGpu([line], false);
    expect(same(fast, slow), JSON.stringify({ fast, slow })).toBe(true);
  });

  it("agrees on a mixed run of lines (interning across lines, node changes)", () => {
    const lines = [...GPU_CASES, ...GPU_CASES.map((l) => l.replace("10.1.0.1", "10.1.0.2")), GPU, GPU.replace("10.1.0.1", "10.1.0.12")];
    const fast = viaGpu(lines, true);
    expect(same(fast, viaGpu(lines, false))).toBe(true);
    expect(fast.rows.length).toBeGreaterThan(20);
  });
});

describe("gpu_util values the columns cannot hold", () => {
  // util is kept in a byte, mem_mb in 32 bits, power_w in 16 (blocks.ts GpuBlock): a value
  // outside would be stored as another number (300 % as 44 %), so such a line is corrupt.
  const outside = [
    GPU.replace('"util":95', '"util":300'),
    GPU.replace('"util":95', '"util":256'),
    GPU.replace('"util":95', '"util":-1'),
    GPU.replace('"util":95', '"util":NaN'),
    GPU.replace('"util":95', '"util":-Infinity'),
    GPU.replace('"power_w":653', '"power_w":40000'),
    GPU.replace('"power_w":653', '"power_w":-32769'),
    GPU.replace('"power_w":653', '"power_w":1e999'),
    GPU.replace('"mem_mb":74737', '"mem_mb":3000000000'),
    GPU.replace('"mem_mb":74737', '"mem_mb":-2147483649'),
  ];
  const inside = [
    GPU.replace('"util":95', '"util":255'),
    GPU.replace('"util":95', '"util":0'),
    GPU.replace('"util":95', '"util":95.7'),
    GPU.replace('"util":95', '"util":-0.5'),
    GPU.replace('"power_w":653', '"power_w":32767'),
    GPU.replace('"power_w":653', '"power_w":-32768'),
    GPU.replace('"mem_mb":74737', '"mem_mb":2147483647'),
    GPU.replace('"mem_mb":74737', '"mem_mb":-2147483648'),
  ];
  it("are corrupt on the scanner's path and the generic one, the rest stored as given", () => {
    for (const fast of [true, false]) {
      const bad = viaGpu(outside, fast);
      expect({ fast, corrupt: bad.corrupt, rows: bad.rows }).toEqual({ fast, corrupt: outside.length, rows: [] });
      const good = viaGpu(inside, fast);
      expect(good.corrupt).toBe(0);
      expect(good.rows.map((r) => (r as number[]).slice(3))).toEqual([
        [255, 74737, 653],
        [0, 74737, 653],
        [95, 74737, 653],
        [0, 74737, 653],
        [95, 74737, 32767],
        [95, 74737, -32768],
        [95, 2147483647, 653],
        [95, -2147483648, 653],
      ]);
    }
  });
});

describe("gpu_util line scanner, lines that repeat the line before's head or ts", () => {
  // The scanner answers a line that starts with the line before's `{"ts":…,"node":"…","gpu":`
  // (or repeats its ts text) from what it read then: only byte-identical text may do that.
  const line = (ts: string, node: string, gpu = 0, rest = '"util":5,"mem_mb":10,"power_w":20') => `{"ts":${ts},"node":"${node}","gpu":${gpu},${rest}}`;
  const SEQUENCES: string[][] = [
    // the same head; then the ts one digit longer, shorter, numerically equal but longer text
    [line("1763971200.005", "10.1.0.1", 0), line("1763971200.005", "10.1.0.1", 1), line("1763971200.0051", "10.1.0.1", 2), line("1763971200.00", "10.1.0.1", 3), line("1763971200.0050", "10.1.0.1", 4)],
    // the same ts text for another node, and a node name that extends the one before
    [line("1763971200.005", "10.1.0.1"), line("1763971200.005", "10.1.0.2"), line("1763971200.005", "10.1.0.22"), line("1763971200.005", "10.1.0.2")],
    // the same head, then the ts as an exponent and a ts followed by something else
    [line("1763971200.005", "n"), line("1763971200.005e0", "n"), line("1763971200.005", "n"), line("1763971200.005 ", "n"), line("1763971200.005", "n", 9)],
    // heads that only differ in the GPU field's key, and a corrupt line between equal heads
    [line("12.5", "a"), '{"ts":12.5,"node":"a","gpU":1,"util":5,"mem_mb":10,"power_w":20}', line("12.5", "a", 2), '{"ts":12.5,"node":"a","gpu":', line("12.5", "a", 3)],
    // short ts texts (below the 4 bytes a repeat is compared in) and a long node name
    [line("1", "x"), line("1", "x", 1), line("12", "x"), line("123", "x"), line("1234", "x"), line("1234", "a-node-name-longer-than-the-head-kept-by-the-scanner-0123456789", 1), line("1234", "a-node-name-longer-than-the-head-kept-by-the-scanner-0123456789", 2)],
  ];
  it.each(SEQUENCES.map((s, i) => [i, s]))("agrees with the generic path on sequence %i", (_i, lines) => {
    const fast = viaGpu(lines, true);
    const slow = viaGpu(lines, false);
    expect(same(fast, slow), JSON.stringify({ fast, slow })).toBe(true);
  });

  it("keeps no byte of a read buffer: a reused buffer holding other lines is read afresh", () => {
    const first = [line("1763971200.005", "10.1.0.1", 0), line("1763971200.005", "10.1.0.1", 1)];
    // same length, other bytes: the head the scanner kept must not match this by position
    const second = [line("1763971201.005", "10.1.0.1", 2), line("1763971200.005", "10.1.0.3", 3)];
    const d = new Dicts();
    const block = new GpuBlock();
    ingestReused(new GpuLineScanner(d), block, first, second);
    expect(same(gpuRows(d, block), viaGpu([...first, ...second], false).rows)).toBe(true);
  });
});

describe("GpuStage tick groups", () => {
  it("are what one pass over every row's ts gives, across stages and across chunk cuts", () => {
    let seed = 3;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let trial = 0; trial < 40; trial++) {
      const ts: number[] = [];
      let t = 100;
      for (let i = 0; i < 500; i++) {
        const r = rnd();
        if (r > 0.7) t += r > 0.97 ? -3 : 1; // mostly repeats, now and then backwards
        ts.push(t);
      }
      const block = new GpuBlock();
      const st = new GpuStage(4);
      for (let i = 0; i < ts.length; i++) {
        st.push(ts[i]!, i % 7, 1, 2, 3);
        if (rnd() < 0.05) block.appendStage(st);
      }
      block.appendStage(st);
      const want: [number, number][] = [];
      for (let i = 0; i < ts.length; i++) if (i === 0 || ts[i] !== ts[i - 1]) want.push([ts[i]!, i]);
      const got: [number, number][] = [];
      for (let g = 0; g < block.groups; g++) got.push([block.groupTs(g), block.groupStart(g)]);
      expect(got).toEqual(want);
      expect(block.sorted).toBe(want.every(([x], i) => i === 0 || x >= want[i - 1]![0]));
      expect([block.minTs, block.maxTs, block.rows]).toEqual([Math.min(...ts), Math.max(...ts), ts.length]);
      expect([...block.lanes].sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    }
  });
});

const ENG = '{"ts":1763971200.003,"addr":"http://10.1.0.1:30000","metric":"sglang_num_running_reqs","labels":{"dp_rank":"0"},"value":12.0}';
const ENGINE_CASES: string[] = [
  ENG,
  ENG.replace('{"dp_rank":"0"}', "{}"),
  ENG.replace('{"dp_rank":"0"}', '{"dp_rank":0}'),
  ENG.replace('{"dp_rank":"0"}', '{"dp_rank":"0","engine_type":"prefill"}'),
  ENG.replace('{"dp_rank":"0"}', '{"engine_type":null}'),
  ENG.replace('{"dp_rank":"0"}', '{"dp_rank": "0"}'),
  ENG.replace('{"dp_rank":"0"}', '{"a":}'),
  ENG.replace('{"dp_rank":"0"}', '{"a":{"b":1}}'),
  ENG.replace('{"dp_rank":"0"}', '{"a":[1,2]}'),
  ENG.replace('{"dp_rank":"0"}', '{"a":"}"}'),
  ENG.replace('{"dp_rank":"0"}', '{"a":"\\u00e9"}'),
  ENG.replace('{"dp_rank":"0"}', '{"a":NaN}'),
  ENG.replace('{"dp_rank":"0"}', "null"),
  ENG.replace('{"dp_rank":"0"}', "[]"),
  ENG.replace(',"labels":{"dp_rank":"0"}', ""),
  ENG.replace('"value":12.0', '"value":NaN'),
  ENG.replace('"value":12.0', '"value":Infinity'),
  ENG.replace('"value":12.0', '"value":-1.5e-7'),
  ENG.replace('"value":12.0', '"value":1E+21'),
  ENG.replace('"value":12.0', '"value":"12"'),
  ENG.replace('"value":12.0', '"value":00'),
  ENG.replace("1763971200.003", "NaN"),
  ENG.replace("sglang_num_running_reqs", "sglang_\\u006eum"),
  ENG.replace("http://10.1.0.1:30000", "http://[::1]:30000"),
  '{"addr":"http://10.1.0.1:30000","ts":1763971200.003,"metric":"m","labels":{},"value":1.0}',
  '{"ts": 1763971200.003, "addr": "http://10.1.0.1:30000", "metric": "m", "labels": {}, "value": 1.0}',
  `${ENG}\r`,
  ENG.replace("}", ',"x":1}').replace('"0",', '"0"},').replace('"0"}}', '"0"}'),
  "garbage",
];

describe("engine_series line scanner", () => {
  it.each(ENGINE_CASES.map((l) => [l]))("agrees with the generic path: %s", (line) => {
    const fast = viaEngine([line], true);
    const slow = viaEngine([line], false);
    expect(same(fast, slow), JSON.stringify({ fast, slow })).toBe(true);
  });

  it("agrees on a cyclic scrape (predicted interning) and on mixed lines", () => {
    const lines: string[] = [];
    for (let t = 0; t < 5; t++)
      for (const addr of ["http://a:1", "http://b:1"])
        for (const m of ["sglang_token_usage", "sglang_num_requests_total", "sglang_gen_throughput"])
          for (let dp = 0; dp < 3; dp++)
            lines.push(`{"ts":${1000 + t * 2}.25,"addr":"${addr}","metric":"${m}","labels":{"dp_rank":"${dp}"},"value":${t * 1.5 + dp}}`);
    lines.push(...ENGINE_CASES);
    expect(same(viaEngine(lines, true), viaEngine(lines, false))).toBe(true);
  });
});

const PH = '{"name":"actor_train","t0":1763971175.206,"t1":1763971218.855,"node":"10.1.0.6","gpus":[3],"rank":43,"role":"train"}';
const PHASE_CASES: string[] = [
  PH,
  PH.replace("1763971218.855", "-1.0"),
  PH.replace("1763971218.855", "-1"),
  PH.replace("[3]", "[]"),
  PH.replace("[3]", "[0,1,2,3,4,5,6,7]"),
  PH.replace("[3]", "[3.0]"),
  PH.replace("[3]", "[3.5]"),
  PH.replace("[3]", "[1e1]"),
  PH.replace("[3]", "[-0]"),
  PH.replace("[3]", "[3,]"),
  PH.replace("[3]", "[ 3 ]"),
  PH.replace("[3]", '["3"]'),
  PH.replace("[3]", "[12345678901234]"),
  PH.replace('"rank":43', '"rank":-1'),
  PH.replace('"rank":43', '"rank":43.0'),
  PH.replace('"rank":43', '"rank":4.3'),
  PH.replace('"rank":43', '"rank":99999999999'),
  PH.replace("1763971175.206", "NaN"),
  PH.replace("1763971175.206", "1.763971175206E9"),
  PH.replace("actor_train", "actor\\u005ftrain"),
  PH.replace("actor_train", "träin"),
  PH.replace("actor_train", ""),
  PH.replace('"role":"train"', '"role":"rollout_manager"'),
  PH.replace('"role":"train"', '"role":"train","extra":1'),
  PH.replace('"node":"10.1.0.6",', ""),
  '{"t0":1763971175.206,"name":"actor_train","t1":1763971218.855,"node":"10.1.0.6","gpus":[3],"rank":43,"role":"train"}',
  '{"name": "actor_train", "t0": 1763971175.206, "t1": 1763971218.855, "node": "10.1.0.6", "gpus": [3], "rank": 43, "role": "train"}',
  `${PH}\r`,
  `${PH}}`,
  "{",
];

describe("phases line scanner", () => {
  it.each(PHASE_CASES.map((l) => [l]))("agrees with the generic path: %s", (line) => {
    const fast = viaPhases([line], true);
    const slow = viaPhases([line], false);
    expect(same(fast, slow), JSON.stringify({ fast, slow })).toBe(true);
  });

  it("agrees on a mixed run", () => {
    const lines = [...PHASE_CASES, ...PHASE_CASES.map((l) => l.replace("10.1.0.6", "10.1.0.7").replace("actor_train", "log_probs"))];
    expect(same(viaPhases(lines, true), viaPhases(lines, false))).toBe(true);
  });
});

describe("phases line scanner, lines that repeat the line before's head", () => {
  // The scanner answers a line that starts with the line before's `{"name":"…","t0":…,"t1":`
  // from what it read then, and an OPEN marker's `-1.0,` without reading a number: only
  // byte-identical text may do that.
  const line = (name: string, t0: string, t1: string, node = "10.1.0.6", rank = 43) =>
    `{"name":"${name}","t0":${t0},"t1":${t1},"node":"${node}","gpus":[${rank & 7}],"rank":${rank},"role":"train"}`;
  const long = "a-phase-name-longer-than-the-head-kept-by-the-scanner-0123456789-0123456789";
  const SEQUENCES: string[][] = [
    // the same head; then t0 one digit longer, shorter, numerically equal but longer text
    [line("actor_train", "1763971175.206", "-1.0"), line("actor_train", "1763971175.206", "-1.0", "10.1.0.7", 44), line("actor_train", "1763971175.2061", "-1.0"), line("actor_train", "1763971175.20", "-1.0"), line("actor_train", "1763971175.2060", "-1.0")],
    // OPEN marker look-alikes after an equal head
    [line("a", "5.5", "-1.0"), line("a", "5.5", "-1.00"), line("a", "5.5", "-1.0e0"), line("a", "5.5", "-10"), line("a", "5.5", "-1.05"), line("a", "5.5", "-1"), line("a", "5.5", "-1.0 "), line("a", "5.5", "-1.")],
    // names that extend or shorten the one before; a head longer than the scanner keeps
    [line("train", "7", "8"), line("train_wait", "7", "8"), line("train", "7", "8"), line(long, "7", "8"), line(long, "7", "9", "10.1.0.9", 9), line(long, "7", "8")],
    // heads that only differ in a key, and a corrupt line between equal heads
    [line("a", "5.5", "6"), '{"name":"a","t0":5.5,"T1":6,"node":"10.1.0.6","gpus":[3],"rank":43,"role":"train"}', line("a", "5.5", "7"), '{"name":"a","t0":5.5,"t1":', line("a", "5.5", "8")],
    // short t0 texts, and a head followed by another key order
    [line("a", "1", "2"), line("a", "1", "2", "n", 1), '{"name":"a","t0":1,"t1":2,"gpus":[1],"node":"n","rank":1,"role":"train"}', line("a", "12", "-1.0")],
  ];
  it.each(SEQUENCES.map((s, i) => [i, s]))("agrees with the generic path on sequence %i", (_i, lines) => {
    const fast = viaPhases(lines, true);
    const slow = viaPhases(lines, false);
    expect(same(fast, slow), JSON.stringify({ fast, slow })).toBe(true);
  });

  it("interns 700 node names in no order, as the generic path does", () => {
    let seed = 11;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const lines: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const n = Math.floor(rnd() * 700);
      lines.push(line(i % 7 === 0 ? "log_probs" : "actor_train", String(1763971175 + (i >> 9)), i % 2 ? "-1.0" : String(1763971300 + i), `10.${n >> 8}.${n & 255}.${n % 3 ? "1" : "100"}`, n));
    }
    const fast = viaPhases(lines, true);
    expect(fast.rows.length).toBe(5000);
    expect(new Set(fast.rows.map((r) => r.node)).size).toBeGreaterThan(690);
    expect(same(fast, viaPhases(lines, false))).toBe(true);
  });

  it("hands each distinct byte string to its dictionary once, however many there are and in whatever order", () => {
    const seen: string[] = [];
    const interner = new FastInterner((text) => seen.push(text) - 1);
    const names = Array.from({ length: 700 }, (_, n) => `10.${n >> 8}.${n & 255}.${n % 3 ? "1" : "100"}`).concat(["", "x", "a-name-of-more-than-sixteen-bytes"]);
    let seed = 5;
    const order = [...names, ...names, ...names].map((t) => [t, (seed = (seed * 1103515245 + 12345) & 0x7fffffff)] as const).sort((a, b) => a[1] - b[1]);
    for (const [text] of order) {
      const b = Buffer.from(`"${text}"`, "latin1");
      expect(seen[interner.id(b, 1, b.length - 1)]).toBe(text);
    }
    expect(seen.length).toBe(names.length);
  });

  it("keeps no byte of a read buffer: a reused buffer holding other lines is read afresh", () => {
    const first = [line("actor_train", "1763971175.206", "-1.0"), line("actor_train", "1763971175.206", "-1.0", "10.1.0.7", 44)];
    // same length, other bytes where the kept head was
    const second = [line("actor_train", "1763971175.207", "-1.0"), line("actor_trAin", "1763971175.206", "-1.0", "10.1.0.7", 44)];
    const d = new Dicts();
    const block = new PhaseBlock(d.phaseStrings);
    ingestReused(new PhaseLineScanner(d), block, first, second);
    expect(same({ rows: block.rows }, { rows: viaPhases([...first, ...second], false).rows })).toBe(true);
  });
});

describe("fast paths", () => {
  it("take the collector's compact lines (no fallback)", () => {
    const d = new Dicts();
    const one = (l: string) => Buffer.from(`${l}\n`, "latin1");
    for (const l of [GPU, GPU.replace("1763971200.005", "1.7639712e9"), GPU.replace('"util":95', '"util":95.7')]) {
      const b = one(l);
      expect(new GpuLineScanner(d).fast(b, 0, b.length), l).toBe(b.length - 1);
    }
    for (const l of [ENG, ENG.replace('{"dp_rank":"0"}', "{}"), ENG.replace('"value":12.0', '"value":-1.5e-7')]) {
      const b = one(l);
      expect(new EngineLineScanner(d).fast(b, 0, b.length), l).toBe(b.length - 1);
    }
    for (const l of [PH, PH.replace("[3]", "[]"), PH.replace("[3]", "[0,1,2,3]"), PH.replace("1763971218.855", "-1.0")]) {
      const b = one(l);
      expect(new PhaseLineScanner(d).fast(b, 0, b.length, new PhaseBlock(d.phaseStrings)), l).toBe(b.length - 1);
    }
  });
});

describe("readInt", () => {
  it("reads what readNumber reads, to the same end, on integers and on everything else", () => {
    const cases = ["0", "7", "42", "100", "123456789", "1234567890", "12345678901234567890", "01", "00", "-1", "-0", "1.5", "1e3", "1E3", "9.", "", "x", "99999999", "1.0"];
    let seed = 11;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let i = 0; i < 2000; i++) cases.push(String(Math.floor(rnd() * 10 ** Math.floor(rnd() * 12))));
    for (const s of cases)
      for (const after of [",", "}", ".5", "e2", ""]) {
        const buf = Buffer.from(s + after, "latin1");
        const n = readNumber(buf, 0, buf.length);
        const nEnd = numberEnd();
        const i = readInt(buf, 0, buf.length);
        expect([Object.is(i, n), numberEnd()], `${s}${after}`).toEqual([true, nEnd]);
      }
  });
});

describe("readNumber", () => {
  /** value and end of the token as the scanners see it (end -1: rejected) */
  const scan = (s: string) => {
    const buf = Buffer.from(`${s},`, "latin1");
    const v = readNumber(buf, 0, buf.length);
    return { v, end: numberEnd() };
  };
  const check = (s: string) => {
    const parsed = JSON.parse(s) as number;
    const { v, end } = scan(s);
    expect(end, s).toBe(s.length);
    expect(Object.is(v, parsed), `${s}: ${v} vs ${parsed}`).toBe(true);
  };

  it("matches JSON.parse bit for bit (tricky and random numbers)", () => {
    for (const s of ["0", "-0", "0.0", "-0.0", "1", "10", "1.5", "0.1", "0.3", "1e0", "1E5", "1e-5", "1E+2", "1.7976931348623157e308", "5e-324", "1e400", "9007199254740993", "9007199254740992.5", "0.1000000000000000055511151231257827", "123456789.123456789", "1763971200.123456", "2.2250738585072014e-308", "12345678901234567890123"])
      check(s);
    let seed = 12345;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let i = 0; i < 5000; i++) {
      const x = (rnd() - 0.5) * 10 ** Math.floor(rnd() * 40 - 20);
      check(String(x));
      check(x.toFixed(Math.floor(rnd() * 12)));
      check((Math.floor(rnd() * 2e9) + rnd()).toFixed(Math.floor(rnd() * 9)));
    }
  });

  it("never accepts what JSON rejects", () => {
    for (const s of ["01", "-", "1.", ".5", "+1", "-01", "1e", "1e+", "NaN", "Infinity", "-Infinity", "--1", "00.5", "0x10", "1.e5"]) {
      expect(() => void JSON.parse(s), s).toThrow();
      const { end } = scan(s);
      expect(end === -1 || end !== s.length, s).toBe(true);
    }
  });
});
