/**
 * The WebAssembly loop (gpu-wasm.ts) decodes a subset of what the JS gpu_util scanner
 * decodes, and must leave every block exactly as the JS scanner alone does: same rows,
 * values (with their wrap-around), tick groups, lane ids in order of first sight, corrupt
 * tally and first corrupt offset — whatever the lines, chunking, and scanners sharing the
 * thread's instance.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Dicts, GpuBlock } from "@/lib/store/telemetry/blocks";
import { gpuWasm, setGpuWasm } from "@/lib/store/telemetry/gpu-wasm";
import { GpuLineScanner, setGpuWasmMinBytes, type IngestResult } from "@/lib/store/telemetry/ingest";

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A field value: mostly what the collector writes, sometimes what only the JS path (or no path) takes. */
function num(r: () => number, typical: () => string): string {
  const x = r();
  if (x < 0.9) return typical();
  const odd = ["007", "0", "-3", "12.5", "1e2", "1234567890", "65536", "300", "40000", "99999999", "", " 4", "4 ", "NaN", "0.0", "-0", "2147483648", "18446744073709551616"];
  return odd[Math.floor(r() * odd.length)]!;
}

/** Random gpu_util text: runs of one node's GPUs per tick, odd lines and odd values among them. */
function gpuText(seed: number, lines: number, nodes = 12): string {
  const r = rng(seed);
  const out: string[] = [];
  let ts = 1763913600 + Math.floor(r() * 1000);
  const tsText = () => {
    const x = r();
    if (x < 0.02) return `${ts}e0`;
    if (x < 0.04) return `-${ts}.5`;
    if (x < 0.05) return "1.7639136e9";
    if (x < 0.06) return `${ts}.12345678901234567`;
    // 17 digits in 18 characters: a mantissa past 2^53 (JSON.parse rounds once; a division would round twice)
    if (x < 0.12) return `${ts}.${String(Math.floor(r() * 1e7)).padStart(7, "0")}`;
    return `${ts}.${String(Math.floor(r() * 1000)).padStart(3, "0")}`;
  };
  const names = Array.from({ length: nodes }, (_, i) => (i === 3 ? "h\u00e9te" : i === 4 ? `node-${"x".repeat(80)}` : i === 5 ? 'a\\"b' : `10.1.${i >> 8}.${i & 255}`));
  while (out.length < lines) {
    const t = tsText();
    ts += r() < 0.9 ? 1 : -1;
    for (let n = 0; n < nodes && out.length < lines; n++) {
      const node = names[r() < 0.95 ? n : Math.floor(r() * nodes)]!;
      const gpus = 1 + Math.floor(r() * 8);
      for (let g = 0; g < gpus; g++) {
        const x = r();
        const gpu = num(r, () => String(r() < 0.02 ? 64 + Math.floor(r() * 100) : g));
        const util = num(r, () => String(Math.floor(r() * 101)));
        const mem = num(r, () => String(Math.floor(r() * 81920)));
        const pw = num(r, () => String(Math.floor(r() * 700)));
        let line = `{"ts":${t},"node":"${node}","gpu":${gpu},"util":${util},"mem_mb":${mem},"power_w":${pw}}`;
        if (x < 0.01) line = line.slice(0, Math.floor(r() * line.length));
        else if (x < 0.015) line = line.replace(',"util"', ', "util"');
        else if (x < 0.02) line = line.replace('"mem_mb"', '"mem"');
        else if (x < 0.025) line = "";
        else if (x < 0.03) line += "\r";
        else if (x < 0.035) line = line.replace("}", ',"x":1}');
        out.push(line);
      }
    }
  }
  return out.join("\n") + (r() < 0.5 ? "\n" : "");
}

interface Parsed {
  block: GpuBlock;
  dicts: Dicts;
  results: IngestResult[];
}

/** `text` through one scanner, in chunks ending at line ends (as `ingestChunks` hands them), cut at `cuts` (fractions). */
function parse(text: Buffer, cuts: number[]): Parsed {
  const dicts = new Dicts();
  const block = new GpuBlock();
  const scanner = new GpuLineScanner(dicts);
  const results: IngestResult[] = [];
  let from = 0;
  for (const f of [...cuts, 1]) {
    let to = f >= 1 ? text.length : text.indexOf(10, Math.floor(text.length * f));
    if (to < 0) to = text.length;
    else if (f < 1) to += 1;
    if (to <= from) continue;
    results.push(scanner.ingest(text, from, to, from, block));
    from = to;
  }
  return { block, dicts, results };
}

function snapshot({ block, dicts, results }: Parsed) {
  block.trim();
  const f = block.flat();
  return {
    rows: block.rows,
    sorted: block.sorted,
    minTs: block.minTs,
    maxTs: block.maxTs,
    lanes: [...block.lanes],
    cols: f && [f.gTs, f.gStart, f.lane, f.util, f.mem, f.power].map((a) => Array.from(a)),
    laneKeys: dicts.laneNode.map((n, i) => `${n}/${dicts.laneGpu[i]}`),
    results,
  };
}

function both(text: Buffer, cuts: number[]) {
  setGpuWasm(false);
  const js = snapshot(parse(text, cuts));
  setGpuWasm(true);
  const w = gpuWasm()!;
  const before = w.decoded;
  const wasm = snapshot(parse(text, cuts));
  return { js, wasm, decoded: w.decoded - before };
}

afterEach(() => {
  setGpuWasm(true);
  setGpuWasmMinBytes(64 << 10);
});

describe("gpu_util WebAssembly loop", () => {
  it("is available in this runtime", () => {
    expect(gpuWasm()).not.toBeNull();
  });

  it("leaves the same block as the JS scanner on random lines and chunkings", () => {
    setGpuWasmMinBytes(0);
    let decoded = 0;
    let rows = 0;
    let corrupt = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const text = Buffer.from(gpuText(seed, 200 + seed * 37, 1 + (seed % 14)), "utf8");
      const r = rng(seed * 7);
      const cuts = Array.from({ length: seed % 5 }, () => r()).sort((a, b) => a - b);
      const { js, wasm, decoded: d } = both(text, cuts);
      expect(wasm, `seed ${seed}`).toEqual(js);
      decoded += d;
      rows += js.rows;
      corrupt += js.results.reduce((s, x) => s + x.corrupt, 0);
    }
    // the cases exercise both paths: most rows decoded in WebAssembly, the odd ones not, some lines corrupt
    expect(decoded / rows).toBeGreaterThan(0.5);
    expect(decoded).toBeLessThan(rows);
    expect(corrupt).toBeGreaterThan(20);
  });

  it("fills its row buffers more than once in one range, and a nodes' table past its slots", () => {
    setGpuWasmMinBytes(0);
    const lines: string[] = [];
    for (let t = 0; t < 50; t++)
      for (let n = 0; n < 2100; n++) lines.push(`{"ts":${1763913600 + t}.25,"node":"n${n}","gpu":${n % 3},"util":${(t * n) % 256},"mem_mb":${n},"power_w":${n * 7}}`);
    const text = Buffer.from(lines.join("\n") + "\n");
    const { js, wasm, decoded } = both(text, [0.5]);
    expect(wasm).toEqual(js);
    expect(js.rows).toBe(105_000);
    expect(decoded).toBeGreaterThan(60_000);
  });

  it("takes a range longer than its memory (which grows), and leaves a much longer one to the JS scanner", () => {
    const line = (t: number, g: number) => `{"ts":${1763913600 + t}.5,"node":"10.1.0.1","gpu":${g},"util":${(t + g) % 101},"mem_mb":${t},"power_w":${g}}`;
    const text = (bytes: number) => {
      const out: string[] = [];
      let n = 0;
      for (let t = 0; n < bytes; t++)
        for (let g = 0; g < 8; g++) {
          const l = line(t, g);
          out.push(l);
          n += l.length + 1;
        }
      return Buffer.from(out.join("\n") + "\n");
    };
    for (const [mb, viaWasm] of [
      [6, true],
      [17, false],
    ] as const) {
      const { js, wasm, decoded } = both(text(mb << 20), []);
      expect(wasm).toEqual(js);
      expect(js.rows).toBeGreaterThan(mb * 10_000);
      expect(decoded > 0, `${mb} MiB`).toBe(viaWasm);
    }
  });

  it("hands over between scanners that share the thread's instance", () => {
    setGpuWasmMinBytes(0);
    const a = Buffer.from(gpuText(101, 3000, 6));
    const b = Buffer.from(gpuText(202, 3000, 9));
    const run = () => {
      const pa = { dicts: new Dicts(), block: new GpuBlock(), results: [] as IngestResult[] };
      const pb = { dicts: new Dicts(), block: new GpuBlock(), results: [] as IngestResult[] };
      const sa = new GpuLineScanner(pa.dicts);
      const sb = new GpuLineScanner(pb.dicts);
      // alternate chunks of the two files through their own scanners
      const cut = (t: Buffer, k: number) => t.indexOf(10, Math.floor((t.length * k) / 4)) + 1;
      for (let k = 0; k < 4; k++) {
        const [a0, a1] = [k === 0 ? 0 : cut(a, k), k === 3 ? a.length : cut(a, k + 1)];
        const [b0, b1] = [k === 0 ? 0 : cut(b, k), k === 3 ? b.length : cut(b, k + 1)];
        pa.results.push(sa.ingest(a, a0, a1, a0, pa.block));
        pb.results.push(sb.ingest(b, b0, b1, b0, pb.block));
      }
      return [snapshot(pa), snapshot(pb)];
    };
    setGpuWasm(false);
    const js = run();
    setGpuWasm(true);
    expect(run()).toEqual(js);
  });
});
