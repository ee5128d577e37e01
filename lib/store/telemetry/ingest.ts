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
import { addGpuRecord, type Dicts, type GpuBlock } from "@/lib/store/telemetry/blocks";

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

export class GpuLineScanner {
  private prevNode = "";
  private prevNodeBytes: Uint8Array = new Uint8Array(0);
  private laneCache = new Map<string, number[]>();

  constructor(private readonly dicts: Dicts) {}

  ingest(buf: Buffer, start: number, end: number, fileOffset: number, block: GpuBlock): IngestResult {
    const res: IngestResult = { corrupt: 0, firstCorruptAt: -1 };
    let pos = start;
    while (pos < end) {
      let nl = buf.indexOf(10, pos);
      if (nl < 0 || nl >= end) nl = end;
      if (nl > pos && !this.fast(buf, pos, nl, block)) {
        const line = buf.toString("utf8", pos, nl);
        const ok = consumeLine(line, (rec) => addGpuRecord(block, this.dicts, rec));
        if (!ok) {
          res.corrupt++;
          if (res.firstCorruptAt < 0) res.firstCorruptAt = fileOffset + (pos - start);
        }
      }
      pos = nl + 1;
    }
    return res;
  }

  private fast(buf: Buffer, pos: number, end: number, block: GpuBlock): boolean {
    if (!match(buf, pos, P_TS)) return false;
    const ts = readNumber(buf, pos + P_TS.length, end);
    if (cursor < 0 || !match(buf, cursor, P_NODE)) return false;
    const ns = cursor + P_NODE.length;
    let ne = ns;
    while (ne < end && buf[ne] !== 34) {
      if (buf[ne] === 92 || buf[ne]! >= 0x80) return false;
      ne++;
    }
    if (!match(buf, ne, P_GPU)) return false;
    const gpu = readNumber(buf, ne + P_GPU.length, end);
    if (cursor < 0 || !match(buf, cursor, P_UTIL)) return false;
    const util = readNumber(buf, cursor + P_UTIL.length, end);
    if (cursor < 0 || !match(buf, cursor, P_MEM)) return false;
    const mem = readNumber(buf, cursor + P_MEM.length, end);
    if (cursor < 0 || !match(buf, cursor, P_POW)) return false;
    const power = readNumber(buf, cursor + P_POW.length, end);
    if (cursor < 0 || cursor + 1 !== end || buf[cursor] !== 125) return false;
    if (!Number.isInteger(gpu)) return false;
    block.add(ts, this.lane(buf, ns, ne, gpu), util, mem, power);
    return true;
  }

  private lane(buf: Buffer, ns: number, ne: number, gpu: number): number {
    const prev = this.prevNodeBytes;
    let same = prev.length === ne - ns;
    for (let i = 0; same && i < prev.length; i++) same = prev[i] === buf[ns + i];
    if (!same) {
      this.prevNode = buf.toString("latin1", ns, ne);
      this.prevNodeBytes = Uint8Array.from(buf.subarray(ns, ne));
    }
    let byGpu = this.laneCache.get(this.prevNode);
    if (!byGpu) this.laneCache.set(this.prevNode, (byGpu = []));
    let id = gpu >= 0 && gpu < 4096 ? byGpu[gpu] : undefined;
    if (id === undefined) {
      id = this.dicts.laneId(this.prevNode, gpu);
      if (gpu >= 0 && gpu < 4096) byGpu[gpu] = id;
    }
    return id;
  }
}
