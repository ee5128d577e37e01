/**
 * Turning complete JSONL bytes into block rows. Callers hand over `[start, end)` where
 * `end` is just past a `\n`; every line in it is complete. Blank lines are ignored; a
 * line that does not parse (lenient: bare NaN/Infinity accepted) or does not decode is
 * counted as corrupt and skipped.
 *
 * gpu_util has a byte-level fast path for the compact collector format
 * (`{"ts":…,"node":"…","gpu":…,"util":…,"mem_mb":…,"power_w":…}`): no string or object
 * per row. Any line that deviates (spaced legacy JSON, escapes, NaN) takes the generic path.
 */
import { parseLenientJson } from "@/lib/store/dumps/lenient-json";
import {
  addEngineRecord,
  addGpuRecord,
  EngineStage,
  GpuStage,
  type Dicts,
  type EngineBlock,
  type GpuBlock,
} from "@/lib/store/telemetry/blocks";
import { ByteInterner } from "@/lib/store/telemetry/columns";

export interface IngestResult {
  corrupt: number;
  /** Byte offset (within the file) of the first corrupt line, or -1. */
  firstCorruptAt: number;
}

/** Generic path: one `consume(parsedJson)` per line; it returns false for a bad record. */
export function ingestLines(
  buf: Buffer,
  start: number,
  end: number,
  fileOffset: number,
  consume: (rec: unknown) => boolean,
): IngestResult {
  const res: IngestResult = { corrupt: 0, firstCorruptAt: -1 };
  // One decode per chunk; telemetry is ASCII so string index == byte index (formats.md 2.2).
  const text = buf.toString("utf8", start, end);
  let pos = 0;
  while (pos < text.length) {
    let nl = text.indexOf("\n", pos);
    if (nl < 0) nl = text.length;
    if (nl > pos) {
      const line = text.slice(pos, nl);
      if (!consumeLine(line, consume)) {
        res.corrupt++;
        if (res.firstCorruptAt < 0) res.firstCorruptAt = fileOffset + pos;
      }
    }
    pos = nl + 1;
  }
  return res;
}

function consumeLine(line: string, consume: (rec: unknown) => boolean): boolean {
  let rec: unknown;
  try {
    rec = parseLenientJson(line);
  } catch {
    return line.trim() === "";
  }
  return consume(rec);
}

// ---------------------------------------------------------------------------------------
// gpu_util fast path

const enc = (s: string) => Uint8Array.from(Buffer.from(s, "latin1"));
const P_TS = enc('{"ts":');
const P_NODE = enc(',"node":"');
const P_GPU = enc('","gpu":');
const P_UTIL = enc(',"util":');
const P_MEM = enc(',"mem_mb":');
const P_POW = enc(',"power_w":');
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

function match(buf: Buffer, pos: number, pat: Uint8Array): boolean {
  if (pos + pat.length > buf.length) return false;
  for (let i = 0; i < pat.length; i++) if (buf[pos + i] !== pat[i]) return false;
  return true;
}

/** Position after the last parsed number; -1 when the number is not plain JSON. */
let cursor = 0;

function readNumber(buf: Buffer, pos: number, end: number): number {
  let i = pos;
  const neg = buf[i] === 45;
  if (neg) i++;
  let m = 0;
  let digits = 0;
  let c = buf[i]!;
  while (i < end && c >= 48 && c <= 57) {
    m = m * 10 + (c - 48);
    digits++;
    c = buf[++i]!;
  }
  if (digits === 0) {
    cursor = -1;
    return 0;
  }
  let frac = 0;
  if (c === 46) {
    c = buf[++i]!;
    while (i < end && c >= 48 && c <= 57) {
      m = m * 10 + (c - 48);
      frac++;
      c = buf[++i]!;
    }
    if (frac === 0) {
      cursor = -1;
      return 0;
    }
  }
  if (c === 101 || c === 69) {
    // exponent: let the engine's correctly rounded parser do it
    i++;
    if (buf[i] === 43 || buf[i] === 45) i++;
    const e0 = i;
    while (i < end && buf[i]! >= 48 && buf[i]! <= 57) i++;
    if (i === e0) {
      cursor = -1;
      return 0;
    }
    cursor = i;
    return Number(buf.toString("latin1", pos, i));
  }
  cursor = i;
  // Exact fast path (Clinger): an integer mantissa < 2^53 divided by an exact power of ten
  // is the correctly rounded decimal value.
  if (m < 9007199254740992 && frac <= 22) {
    const v = frac === 0 ? m : m / POW10[frac]!;
    return neg ? -v : v;
  }
  return Number(buf.toString("latin1", pos, i));
}

function skipString(buf: Buffer, pos: number, end: number): number {
  // pos is just after the opening quote; returns the index of the closing quote or -1
  let i = pos;
  while (i < end) {
    const c = buf[i]!;
    if (c === 34) return i;
    if (c === 92 || c >= 0x80) return -1;
    i++;
  }
  return -1;
}

export class GpuLineScanner {
  private readonly nodes: ByteInterner;
  private nodeNames: string[] = [];
  /** node id → gpu → lane id */
  private readonly laneCache: number[][] = [];
  private readonly stage = new GpuStage();

  constructor(private readonly dicts: Dicts) {
    this.nodes = new ByteInterner((s) => this.nodeNames.push(s) - 1);
  }

  ingest(buf: Buffer, start: number, end: number, fileOffset: number, block: GpuBlock): IngestResult {
    const res: IngestResult = { corrupt: 0, firstCorruptAt: -1 };
    const st = this.stage;
    let pos = start;
    while (pos < end) {
      let nl = buf.indexOf(10, pos);
      if (nl < 0 || nl >= end) nl = end;
      if (nl > pos && !this.fast(buf, pos, nl)) {
        const line = buf.toString("utf8", pos, nl);
        if (!consumeLine(line, (rec) => addGpuRecord(st, this.dicts, rec))) {
          res.corrupt++;
          if (res.firstCorruptAt < 0) res.firstCorruptAt = fileOffset + (pos - start);
        }
      }
      pos = nl + 1;
    }
    block.appendStage(st);
    return res;
  }

  private fast(buf: Buffer, pos: number, end: number): boolean {
    if (!match(buf, pos, P_TS)) return false;
    const ts = readNumber(buf, pos + P_TS.length, end);
    if (cursor < 0 || !match(buf, cursor, P_NODE)) return false;
    const ns = cursor + P_NODE.length;
    const ne = skipString(buf, ns, end);
    if (ne < 0 || !match(buf, ne, P_GPU)) return false;
    const gpu = readNumber(buf, ne + P_GPU.length, end);
    if (cursor < 0 || !match(buf, cursor, P_UTIL)) return false;
    const util = readNumber(buf, cursor + P_UTIL.length, end);
    if (cursor < 0 || !match(buf, cursor, P_MEM)) return false;
    const mem = readNumber(buf, cursor + P_MEM.length, end);
    if (cursor < 0 || !match(buf, cursor, P_POW)) return false;
    const power = readNumber(buf, cursor + P_POW.length, end);
    if (cursor < 0 || cursor + 1 !== end || buf[cursor] !== 125) return false;
    if (!Number.isInteger(gpu) || gpu < 0 || gpu > 0xffff) return false;
    const node = this.nodes.id(buf, ns, ne);
    const byGpu = (this.laneCache[node] ??= []);
    let lane = byGpu[gpu];
    if (lane === undefined) byGpu[gpu] = lane = this.dicts.laneId(this.nodeNames[node]!, gpu);
    this.stage.push(ts, lane, util, mem, power);
    return true;
  }
}

// ---------------------------------------------------------------------------------------
// engine_series fast path: {"ts":…,"addr":"…","metric":"…","labels":{…},"value":…}

const E_TS = P_TS;
const E_ADDR = enc(',"addr":"');
const E_METRIC = enc('","metric":"');
const E_LABELS = enc('","labels":');
const E_VALUE = enc(',"value":');

export class EngineLineScanner {
  private readonly addrNames: string[] = [];
  private readonly addrs = new ByteInterner((s) => this.addrNames.push(s) - 1);
  private readonly metrics: ByteInterner;
  private readonly labelObjs: Record<string, string | null>[] = [];
  private readonly labels = new ByteInterner((s) => {
    const o = JSON.parse(s) as Record<string, unknown>;
    const clean: Record<string, string | null> = {};
    for (const [k, v] of Object.entries(o)) clean[k] = v === null ? null : typeof v === "string" ? v : JSON.stringify(v);
    return this.labelObjs.push(clean) - 1;
  });
  /** addr id * 2^16 + labels id → series id */
  private readonly series = new Map<number, number>();
  private readonly stage = new EngineStage();

  constructor(private readonly dicts: Dicts) {
    this.metrics = new ByteInterner((s) => dicts.metrics.id(s));
  }

  ingest(buf: Buffer, start: number, end: number, fileOffset: number, block: EngineBlock): IngestResult {
    const res: IngestResult = { corrupt: 0, firstCorruptAt: -1 };
    const st = this.stage;
    let pos = start;
    while (pos < end) {
      let nl = buf.indexOf(10, pos);
      if (nl < 0 || nl >= end) nl = end;
      if (nl > pos && !this.fast(buf, pos, nl)) {
        const line = buf.toString("utf8", pos, nl);
        if (!consumeLine(line, (rec) => addEngineRecord(st, this.dicts, rec))) {
          res.corrupt++;
          if (res.firstCorruptAt < 0) res.firstCorruptAt = fileOffset + (pos - start);
        }
      }
      pos = nl + 1;
    }
    block.appendStage(st);
    return res;
  }

  private fast(buf: Buffer, pos: number, end: number): boolean {
    if (!match(buf, pos, E_TS)) return false;
    const ts = readNumber(buf, pos + E_TS.length, end);
    if (cursor < 0 || !match(buf, cursor, E_ADDR)) return false;
    const as = cursor + E_ADDR.length;
    const ae = skipString(buf, as, end);
    if (ae < 0 || !match(buf, ae, E_METRIC)) return false;
    const ms = ae + E_METRIC.length;
    const me = skipString(buf, ms, end);
    if (me < 0 || !match(buf, me, E_LABELS)) return false;
    const ls = me + E_LABELS.length;
    if (buf[ls] !== 123) return false;
    let le = ls + 1;
    while (le < end && buf[le] !== 125) {
      const c = buf[le]!;
      if (c === 123 || c === 92 || c >= 0x80) return false;
      le++;
    }
    le++; // past "}"
    if (!match(buf, le, E_VALUE)) return false;
    const value = readNumber(buf, le + E_VALUE.length, end);
    if (cursor < 0 || cursor + 1 !== end || buf[cursor] !== 125 || !Number.isFinite(ts)) return false;
    const addr = this.addrs.id(buf, as, ae);
    const lab = this.labels.id(buf, ls, le);
    const key = addr * 65536 + lab;
    let sid = this.series.get(key);
    if (sid === undefined) {
      sid = this.dicts.seriesId(this.addrNames[addr]!, this.labelObjs[lab]!);
      this.series.set(key, sid);
    }
    this.stage.push(this.metrics.id(buf, ms, me), ts, sid, value);
    return true;
  }
}
