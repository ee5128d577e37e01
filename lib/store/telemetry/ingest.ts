/**
 * Turning complete JSONL bytes into block rows. Callers hand over `[start, end)` where
 * `end` is just past a `\n`; every line in it is complete. Blank lines are ignored; a
 * line that does not parse (lenient: bare NaN/Infinity accepted) or does not decode is
 * counted as corrupt and skipped.
 *
 * gpu_util, engine_series and phases have byte-level scanners for the compact collector
 * format (`{"ts":…,"node":"…","gpu":…,…}` with the keys in the writer's order): no string,
 * object or JSON.parse per row. A scanner accepts a line only when it is plain JSON that
 * the generic path would decode to the very same record; any line that deviates — spaces,
 * reordered or extra keys, escapes, non-ASCII, NaN/Infinity, leading zeros, control
 * characters — falls back to the generic path, which decides (and counts corrupt lines).
 * lib/store/telemetry/ingest.test.ts checks both paths agree on such lines.
 */
import { OPEN_T1, parseLenientJson } from "@/lib/store/format";
import { gpuWasm, POW10, Stop, WASM_HEAD_MAX, type GpuWasmScan } from "@/lib/store/telemetry/gpu-wasm";
import {
  addEngineRecord,
  addGpuRecord,
  decodePhase,
  EngineStage,
  GpuStage,
  gpuValuesFit,
  type Dicts,
  type EngineBlock,
  type GpuBlock,
  type PhaseBlock,
} from "@/lib/store/telemetry/blocks";

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
  // One decode per chunk; telemetry is ASCII so string index == byte index (docs/formats.md 2.2).
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
// byte-level helpers

/**
 * Byte strings of 4 to 16 bytes are compared as four little-endian words, read at offsets
 * 0, 4, 8 and n − 4 (each clamped to n − 4, so they overlap where n < 16) and kept as
 * numbers: four reads and four compares, no loop, no read of the other string's bytes.
 */
function wordsMatch(v: DataView, p: number, n: number, w0: number, w1: number, w2: number, w3: number): boolean {
  return (
    v.getUint32(p, true) === w0 &&
    v.getUint32(p + (n < 8 ? n - 4 : 4), true) === w1 &&
    v.getUint32(p + (n < 12 ? n - 4 : 8), true) === w2 &&
    v.getUint32(p + n - 4, true) === w3
  );
}

/** The four words `wordsMatch` compares for `[p, p + n)` of `v` (4 ≤ n ≤ 16). */
function wordsOf(v: DataView, p: number, n: number): [number, number, number, number] {
  return [v.getUint32(p, true), v.getUint32(p + (n < 8 ? n - 4 : 4), true), v.getUint32(p + (n < 12 ? n - 4 : 8), true), v.getUint32(p + n - 4, true)];
}

/**
 * A literal of a line shape: `wordsOf` it with the offsets they are read at, kept in the
 * object (reading them there measured 1.6× faster in `lit` than working them out from the
 * length on every compare).
 */
interface Lit {
  length: number;
  view: DataView;
  o1: number;
  o2: number;
  o3: number;
  w0: number;
  w1: number;
  w2: number;
  w3: number;
}
const enc = (s: string): Lit => {
  const view = new DataView(Uint8Array.from(Buffer.from(s, "latin1")).buffer);
  const n = view.byteLength;
  if (n < 4 || n > 16) return { length: n, view, o1: 0, o2: 0, o3: 0, w0: 0, w1: 0, w2: 0, w3: 0 };
  const [w0, w1, w2, w3] = wordsOf(view, 0, n);
  return { length: n, view, o1: n < 8 ? n - 4 : 4, o2: n < 12 ? n - 4 : 8, o3: n - 4, w0, w1, w2, w3 };
};

/** DataView over `buf` (one-entry cache: scanners walk one buffer at a time). */
let lastBuf: Uint8Array | null = null;
let lastView: DataView = new DataView(new ArrayBuffer(0));
function viewOf(buf: Uint8Array): DataView {
  if (buf !== lastBuf) {
    lastBuf = buf;
    lastView = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }
  return lastView;
}

/** Bytes `[s, s + b.byteLength)` of `a` equal all of `b` (the caller checked bounds). */
function sameBytes(a: DataView, s: number, b: DataView): boolean {
  const n = b.byteLength;
  let i = 0;
  for (; i + 4 <= n; i += 4) if (a.getUint32(s + i, true) !== b.getUint32(i, true)) return false;
  for (; i < n; i++) if (a.getUint8(s + i) !== b.getUint8(i)) return false;
  return true;
}

function lit(buf: Uint8Array, pos: number, pat: Lit): boolean {
  const n = pat.length;
  if (pos < 0 || pos + n > buf.length) return false;
  const v = viewOf(buf);
  if (n < 4 || n > 16) return sameBytes(v, pos, pat.view);
  return v.getUint32(pos, true) === pat.w0 && v.getUint32(pos + pat.o1, true) === pat.w1 && v.getUint32(pos + pat.o2, true) === pat.w2 && v.getUint32(pos + pat.o3, true) === pat.w3;
}

/** Position after the last number read by `readNumber`; -1 when it was not plain JSON. */
let cursor = 0;

/** End of the number last read by `readNumber` (-1: not a JSON number). */
export function numberEnd(): number {
  return cursor;
}

/**
 * A JSON number at `pos` (strict grammar: optional `-`, no leading zeros, digits after a
 * dot, optional exponent). Exactly JSON.parse's value: mantissas below 2^53 with at most
 * 22 decimals are one correctly rounded division; anything else (exponents, long
 * mantissas) goes through Number() in `readNumberSlow`. Kept small so it inlines.
 */
export function readNumber(buf: Uint8Array, pos: number, end: number): number {
  let i = pos;
  const neg = buf[i] === 45;
  if (neg) i++;
  const d0 = i;
  let m = 0;
  let c = i < end ? buf[i]! : 0;
  while (c >= 48 && c <= 57) {
    m = m * 10 + (c - 48);
    c = ++i < end ? buf[i]! : 0;
  }
  if (i === d0 || (i - d0 > 1 && buf[d0] === 48)) {
    cursor = -1;
    return 0;
  }
  let frac = 0;
  if (c === 46) {
    c = ++i < end ? buf[i]! : 0;
    const f0 = i;
    while (c >= 48 && c <= 57) {
      m = m * 10 + (c - 48);
      c = ++i < end ? buf[i]! : 0;
    }
    frac = i - f0;
    if (frac === 0) {
      cursor = -1;
      return 0;
    }
  }
  if (c === 101 || c === 69 || m >= 9007199254740992 || frac > 22) return readNumberSlow(buf, pos, i, end);
  cursor = i;
  const v = frac === 0 ? m : m / POW10[frac]!;
  return neg ? -v : v;
}

/**
 * `readNumber` for the fields that hold small integers (a GPU index, util, MB, W): a run of
 * at most 9 digits without a leading zero, ended by anything but `.`, `e`, `E` or the chunk
 * end, is its own value; everything else goes to `readNumber`. Small enough to inline at
 * each field, which `readNumber` is not.
 */
export function readInt(buf: Uint8Array, pos: number, end: number): number {
  let i = pos;
  let m = 0;
  let c = 0;
  while (i < end) {
    c = buf[i]!;
    if (c < 48 || c > 57) break;
    m = m * 10 + (c - 48);
    i++;
  }
  const n = i - pos;
  if (n === 0 || n > 9 || i === end || c === 46 || c === 101 || c === 69 || (n > 1 && buf[pos] === 48)) return readNumber(buf, pos, end);
  cursor = i;
  return m;
}

/** The rest of a number whose mantissa ends at `i`: exponent and/or Number() parsing. */
function readNumberSlow(buf: Uint8Array, pos: number, i: number, end: number): number {
  if (i < end && (buf[i] === 101 || buf[i] === 69)) {
    i++;
    if (i < end && (buf[i] === 43 || buf[i] === 45)) i++;
    const e0 = i;
    while (i < end && buf[i]! >= 48 && buf[i]! <= 57) i++;
    if (i === e0) {
      cursor = -1;
      return 0;
    }
  }
  cursor = i;
  return Number(Buffer.from(buf.buffer, buf.byteOffset + pos, i - pos).toString("latin1"));
}

/**
 * `pos` is just after an opening quote: index of the closing quote, or -1 when the string
 * holds anything but plain printable ASCII (escapes, control characters, UTF-8).
 */
export function skipString(buf: Uint8Array, pos: number, end: number): number {
  for (let i = pos; i < end; i++) {
    const c = buf[i]!;
    if (c === 34) return i;
    if (c === 92 || c >= 0x80 || c < 0x20) return -1;
  }
  return -1;
}

/**
 * Byte string → value id, predicting the answer from the previous lookup (the same value
 * again, or whatever followed it last time): telemetry repeats its strings in fixed
 * cycles, so most lookups are one short byte comparison. Misses go to a hash table.
 */
export class FastInterner {
  private readonly keys: DataView[] = [];
  private readonly vals: number[] = [];
  private readonly succ: number[] = [];
  private readonly buckets = new Map<number, number[]>();
  private last = -1;

  /** `onNew(text)` returns the value id of a new byte string (or throws: not interned). */
  constructor(private readonly onNew: (s: string) => number) {}

  /** Per key: its length and, for keys of 4 to 16 bytes, `wordsOf` it (four numbers a key). */
  private readonly lens: number[] = [];
  private readonly words: number[] = [];

  private eq(k: number, v: DataView, s: number, e: number): boolean {
    const n = e - s;
    if (this.lens[k] !== n) return false;
    if (n < 4 || n > 16) return sameBytes(v, s, this.keys[k]!);
    const w = this.words;
    const at = k << 2;
    // `wordsMatch` written out: called from here it was not inlined (~5 % of a phase parse).
    return (
      v.getUint32(s, true) === w[at] &&
      v.getUint32(s + (n < 8 ? n - 4 : 4), true) === w[at + 1] &&
      v.getUint32(s + (n < 12 ? n - 4 : 8), true) === w[at + 2] &&
      v.getUint32(e - 4, true) === w[at + 3]
    );
  }

  id(buf: Uint8Array, s: number, e: number): number {
    const v = viewOf(buf);
    const last = this.last;
    if (last >= 0) {
      if (this.eq(last, v, s, e)) return this.vals[last]!;
      const p = this.succ[last]!;
      if (p >= 0 && this.eq(p, v, s, e)) {
        this.last = p;
        return this.vals[p]!;
      }
    }
    let h = Math.imul(0x811c9dc5 ^ (e - s), 0x01000193);
    for (let i = s; i < e; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
    h &= 0x3fffffff;
    let list = this.buckets.get(h);
    let k = -1;
    if (list) for (const c of list) if (this.eq(c, v, s, e)) k = c;
    if (k < 0) {
      const val = this.onNew(Buffer.from(buf.buffer, buf.byteOffset + s, e - s).toString("latin1"));
      k = this.keys.length;
      // a copy: a view would pin the whole read buffer
      const key = new DataView(Uint8Array.prototype.slice.call(buf, s, e).buffer);
      this.keys.push(key);
      const n = e - s;
      this.lens.push(n);
      this.words.push(...(n >= 4 && n <= 16 ? wordsOf(key, 0, n) : [0, 0, 0, 0]));
      this.vals.push(val);
      this.succ.push(-1);
      if (list) list.push(k);
      else this.buckets.set(h, (list = [k]));
    }
    if (last >= 0) this.succ[last] = k;
    this.last = k;
    return this.vals[k]!;
  }
}

/**
 * Split `[start, end)` into lines. `fast(pos)` decodes the line at `pos` and returns the
 * index of its terminating `\n`, or -1 when the line is not in the fast shape — then the
 * generic `slow(record)` decides. Fast paths scan with the chunk end as bound; a newline
 * inside a field always fails them (strings reject control characters, numbers and
 * literals stop at it), so they never read into the next line. Returns the corrupt tally.
 */
function scanLines(
  buf: Buffer,
  start: number,
  end: number,
  fileOffset: number,
  fast: (pos: number, end: number) => number,
  slow: (rec: unknown) => boolean,
): IngestResult {
  const res: IngestResult = { corrupt: 0, firstCorruptAt: -1 };
  let pos = start;
  while (pos < end) {
    const done = fast(pos, end);
    if (done >= 0) {
      pos = done + 1;
      continue;
    }
    let nl = buf.indexOf(10, pos);
    if (nl < 0 || nl >= end) nl = end;
    if (nl > pos) {
      const line = buf.toString("utf8", pos, nl);
      if (!consumeLine(line, slow)) {
        res.corrupt++;
        if (res.firstCorruptAt < 0) res.firstCorruptAt = fileOffset + (pos - start);
      }
    }
    pos = nl + 1;
  }
  return res;
}

/** The line's closing `}` at `at` followed by its `\n`: index of the newline, else -1. */
function lineEnd(buf: Uint8Array, at: number, end: number): number {
  return at >= 0 && at + 1 < end && buf[at] === 125 && buf[at + 1] === 10 ? at + 1 : -1;
}

/**
 * What the three scanners share: one chunk at a time, the fast decoder for the stream's
 * own compact line shape and the generic JSON path for anything else, into `block`.
 * The two callbacks are created once (no closure per chunk on this hot path).
 */
abstract class LineScanner<B> {
  private buf: Buffer = Buffer.alloc(0);
  private block: B | null = null;
  private readonly fastFn = (pos: number, end: number) => this.fast(this.buf, pos, end, this.block!);
  private readonly slowFn = (rec: unknown) => this.slow(rec, this.block!);

  ingest(buf: Buffer, start: number, end: number, fileOffset: number, block: B): IngestResult {
    this.buf = buf;
    this.block = block;
    try {
      return this.scan(buf, start, end, fileOffset);
    } finally {
      this.buf = Buffer.alloc(0);
      this.block = null;
      this.flush(block);
    }
  }

  /** The lines of `[start, end)` into the block `ingest` was given: the fast decoder, else the generic path. */
  protected scan(buf: Buffer, start: number, end: number, fileOffset: number): IngestResult {
    return scanLines(buf, start, end, fileOffset, this.fastFn, this.slowFn);
  }

  /**
   * The line at `pos` (bounded by the chunk end): index of its `\n` when it is in the
   * compact shape and decoded, else -1 (the generic path decides).
   */
  abstract fast(buf: Uint8Array, pos: number, end: number, block: B): number;
  /** One generically parsed record; false = not a record of this stream. */
  protected abstract slow(rec: unknown, block: B): boolean;
  /** After the chunk: move staged rows into the block (scanners that stage). */
  protected flush(_block: B): void {}
}

// ---------------------------------------------------------------------------------------
// gpu_util: {"ts":…,"node":"…","gpu":…,"util":…,"mem_mb":…,"power_w":…}

const P_TS = enc('{"ts":');
const P_NODE = enc(',"node":"');
const P_GPU = enc('","gpu":');
const P_UTIL = enc(',"util":');
const P_MEM = enc(',"mem_mb":');
const P_POW = enc(',"power_w":');

/** Longest line head a GPU scanner keeps: 37 bytes of keys and ts, a node name of up to 59 (longer heads are read every time). */
const HEAD_MAX = 96;

/**
 * `[p, p + n)` of `v` copied to `[0, n)` of `head` (4 ≤ n); returns n, or 0 when it is
 * longer than HEAD_MAX (no head kept). Word by word: a `subarray` + `set` cost more than
 * the whole head comparison it saves.
 */
function copyHead(v: DataView, p: number, n: number, head: DataView): number {
  if (n > HEAD_MAX) return 0;
  for (let i = 0; i + 4 < n; i += 4) head.setUint32(i, v.getUint32(p + i, true), true);
  head.setUint32(n - 4, v.getUint32(p + n - 4, true), true);
  return n;
}

/** `[p, p + n)` of `v` equals `[0, n)` of `head` (4 ≤ n): n/4 word compares, the last one overlapping. */
function sameHead(v: DataView, p: number, head: DataView, n: number): boolean {
  let i = 0;
  for (; i + 4 < n; i += 4) if (v.getUint32(p + i, true) !== head.getUint32(i, true)) return false;
  return v.getUint32(p + n - 4, true) === head.getUint32(n - 4, true);
}

export class GpuLineScanner extends LineScanner<GpuBlock> {
  private readonly nodeNames: string[] = [];
  private readonly nodes = new FastInterner((s) => this.nodeNames.push(s) - 1);
  /** node id → gpu → lane id */
  private readonly laneCache: number[][] = [];
  private readonly stage = new GpuStage();
  /**
   * The text of the last timestamp `readNumber` read (4 to 16 bytes, as `wordsOf` reads it)
   * and its value: every node writes the same sampler tick, so a new head mostly repeats
   * the ts of the head before.
   */
  private tsLen = 0;
  private tsW0 = 0;
  private tsW1 = 0;
  private tsW2 = 0;
  private tsW3 = 0;
  private tsValue = 0;

  /**
   * The last line's head — `{"ts":…,"node":"…","gpu":` — copied (the read buffer is reused),
   * with its ts and node id: a node's GPUs write one line each per tick, so most lines
   * start with the line before's head and skip to the GPU index.
   */
  private headLen = 0;
  private readonly headView = new DataView(new ArrayBuffer(HEAD_MAX));
  private headTs = 0;
  private headNode = 0;
  /** Where the last head `parseHead` read has its node name. */
  private nameAt = 0;
  private nameEnd = 0;

  constructor(private readonly dicts: Dicts) {
    super();
  }

  private keepHead(v: DataView, pos: number, len: number, ts: number, node: number): void {
    this.headLen = copyHead(v, pos, len, this.headView);
    this.headTs = ts;
    this.headNode = node;
  }

  /** `readNumber` at `p` (sets `cursor` the same way), answered from the last ts when the bytes repeat it. */
  private tsAt(buf: Uint8Array, p: number, end: number): number {
    const n = this.tsLen;
    // The same bytes followed by the ',' that ends the number: the same value.
    if (n > 0 && p + n < end && buf[p + n] === 44 && wordsMatch(viewOf(buf), p, n, this.tsW0, this.tsW1, this.tsW2, this.tsW3)) {
      cursor = p + n;
      return this.tsValue;
    }
    const ts = readNumber(buf, p, end);
    const len = cursor - p;
    if (cursor >= 0 && len >= 4 && len <= 16) {
      // `wordsOf` written out: its array would be garbage once per new head
      const v = viewOf(buf);
      this.tsW0 = v.getUint32(p, true);
      this.tsW1 = v.getUint32(p + (len < 8 ? len - 4 : 4), true);
      this.tsW2 = v.getUint32(p + (len < 12 ? len - 4 : 8), true);
      this.tsW3 = v.getUint32(p + len - 4, true);
      this.tsLen = len;
      this.tsValue = ts;
    } else this.tsLen = 0;
    return ts;
  }

  protected slow(rec: unknown): boolean {
    return addGpuRecord(this.stage, this.dicts, rec);
  }

  protected flush(block: GpuBlock): void {
    block.appendStage(this.stage);
  }

  /**
   * The head `{"ts":…,"node":"…","gpu":` of the line at `pos` parsed and kept (`headTs`,
   * `headNode`): the offset after it, or -1 when the line does not start in that shape.
   */
  private parseHead(buf: Uint8Array, pos: number, end: number): number {
    if (!lit(buf, pos, P_TS)) return -1;
    const ts = this.tsAt(buf, pos + P_TS.length, end);
    if (cursor < 0 || !lit(buf, cursor, P_NODE)) return -1;
    const ns = cursor + P_NODE.length;
    const ne = skipString(buf, ns, end);
    if (ne < 0 || !lit(buf, ne, P_GPU)) return -1;
    const node = this.nodes.id(buf, ns, ne);
    const at = ne + P_GPU.length;
    this.keepHead(viewOf(buf), pos, at - pos, ts, node);
    this.nameAt = ns;
    this.nameEnd = ne;
    return at;
  }

  fast(buf: Uint8Array, pos: number, end: number): number {
    let at: number;
    const L = this.headLen;
    if (L > 0 && pos + L < end && sameHead(viewOf(buf), pos, this.headView, L)) {
      // `{"ts":…,"node":"…","gpu":` as the line before had it, byte for byte: its ts and node.
      at = pos + L;
    } else {
      at = this.parseHead(buf, pos, end);
      if (at < 0) return -1;
    }
    const ts = this.headTs;
    const node = this.headNode;
    // The three keys after the GPU index are compared here, word by word (as `lit` does:
    // called, it was not inlined into this function, and cost ~15 % of a 1024-GPU hour).
    const v = viewOf(buf);
    const gpu = readInt(buf, at, end);
    let c = cursor;
    if (c < 0 || c + 8 > end || v.getUint32(c, true) !== P_UTIL.w0 || v.getUint32(c + 4, true) !== P_UTIL.w1) return -1;
    const util = readInt(buf, c + 8, end);
    c = cursor;
    if (c < 0 || c + 10 > end || v.getUint32(c, true) !== P_MEM.w0 || v.getUint32(c + 4, true) !== P_MEM.w1 || v.getUint32(c + 6, true) !== P_MEM.w3) return -1;
    const mem = readInt(buf, c + 10, end);
    c = cursor;
    if (c < 0 || c + 11 > end || v.getUint32(c, true) !== P_POW.w0 || v.getUint32(c + 4, true) !== P_POW.w1 || v.getUint32(c + 7, true) !== P_POW.w3) return -1;
    const power = readInt(buf, c + 11, end);
    const nl = lineEnd(buf, cursor, end);
    if (nl < 0 || !Number.isFinite(ts) || !Number.isInteger(gpu) || gpu < 0 || gpu > 0xffff || !gpuValuesFit(util, mem, power)) return -1;
    const byGpu = (this.laneCache[node] ??= []);
    let lane = byGpu[gpu];
    if (lane === undefined) byGpu[gpu] = lane = this.dicts.laneId(this.nodeNames[node]!, gpu);
    if (this.lending !== null) this.lending.setLane(node, gpu, lane);
    this.stage.push(ts, lane, util, mem, power);
    return nl;
  }

  /** The WebAssembly loop this scanner drives while `scan` runs it (it learns lanes from the lines taken here). */
  private lending: GpuWasmScan | null = null;

  /**
   * With WebAssembly (gpu-wasm.ts): its loop decodes the lines that repeat the head kept
   * there; every line it stops at is taken here — a new head is parsed and handed to it,
   * any other line goes through `fast` / the generic path, after the rows before it.
   */
  protected scan(buf: Buffer, start: number, end: number, fileOffset: number): IngestResult {
    const w = end - start >= wasmMinBytes && end - start <= WASM_MAX_RANGE ? gpuWasm() : null;
    if (!w) return super.scan(buf, start, end, fileOffset);
    w.claim(this);
    const base = w.base;
    const e = w.load(buf, start, end);
    const res: IngestResult = { corrupt: 0, firstCorruptAt: -1 };
    const stage = this.stage;
    w.lastTs = stage.lastTs;
    this.lending = w;
    try {
      let p = base;
      for (;;) {
        const stop = w.scan(p, e);
        p = w.pos;
        if (stop === Stop.End) break;
        if (stop === Stop.Full) {
          this.takeRows(w);
          continue;
        }
        const at = p - base + start;
        if (stop === Stop.Head) {
          const after = this.parseHead(buf, at, end);
          const len = after - at;
          if (after >= 0 && len >= 8 && len <= WASM_HEAD_MAX && Number.isFinite(this.headTs)) {
            w.setHead(p, len, this.headTs, this.headNode, this.nameAt - at + p, this.nameEnd - at + p);
            continue;
          }
        }
        this.takeRows(w);
        const nl = buf.indexOf(10, at);
        const next = nl < 0 || nl >= end ? end : nl + 1;
        const r = super.scan(buf, at, next, fileOffset + (at - start));
        if (r.corrupt > 0) {
          res.corrupt += r.corrupt;
          if (res.firstCorruptAt < 0) res.firstCorruptAt = r.firstCorruptAt;
        }
        w.lastTs = stage.lastTs;
        p = base + (next - start);
      }
      this.takeRows(w);
    } finally {
      this.lending = null;
    }
    return res;
  }

  private takeRows(w: GpuWasmScan): void {
    const rows = w.take();
    if (rows) this.stage.appendScanned(rows);
  }
}

/** Ranges shorter than this skip the WebAssembly loop (a followed file's few new lines). */
let wasmMinBytes = 64 << 10;
/**
 * Ranges longer than this skip it too: a read chunk is 2 MiB and only a line longer than
 * that widens one, and a module's memory never shrinks once grown for a range.
 */
const WASM_MAX_RANGE = 16 << 20;

/** Tests: the smallest range the gpu_util scanner hands to WebAssembly. */
export function setGpuWasmMinBytes(n: number): void {
  wasmMinBytes = n;
}

// ---------------------------------------------------------------------------------------
// engine_series: {"ts":…,"addr":"…","metric":"…","labels":{…},"value":…}

const E_TS = P_TS;
const E_ADDR = enc(',"addr":"');
const E_METRIC = enc('","metric":"');
const E_LABELS = enc('","labels":');
const E_VALUE = enc(',"value":');

export class EngineLineScanner extends LineScanner<EngineBlock> {
  private readonly addrNames: string[] = [];
  private readonly addrs = new FastInterner((s) => this.addrNames.push(s) - 1);
  private readonly metrics: FastInterner;
  private readonly labelObjs: Record<string, string | null>[] = [];
  /** Label objects that are not plain JSON objects throw: the line takes the generic path. */
  private readonly labels = new FastInterner((s) => {
    const o = JSON.parse(s) as unknown;
    if (!o || typeof o !== "object" || Array.isArray(o)) throw new TypeError("labels");
    const clean: Record<string, string | null> = {};
    for (const [k, v] of Object.entries(o as Record<string, unknown>))
      clean[k] = v === null ? null : typeof v === "string" ? v : JSON.stringify(v);
    return this.labelObjs.push(clean) - 1;
  });
  /** addr id * 2^16 + labels id → series id */
  private readonly series = new Map<number, number>();
  private readonly stage = new EngineStage();

  constructor(private readonly dicts: Dicts) {
    super();
    this.metrics = new FastInterner((s) => dicts.metrics.id(s));
  }

  protected slow(rec: unknown): boolean {
    return addEngineRecord(this.stage, this.dicts, rec);
  }

  protected flush(block: EngineBlock): void {
    block.appendStage(this.stage);
  }

  fast(buf: Uint8Array, pos: number, end: number): number {
    if (!lit(buf, pos, E_TS)) return -1;
    const ts = readNumber(buf, pos + E_TS.length, end);
    if (cursor < 0 || !lit(buf, cursor, E_ADDR)) return -1;
    const as = cursor + E_ADDR.length;
    const ae = skipString(buf, as, end);
    if (ae < 0 || !lit(buf, ae, E_METRIC)) return -1;
    const ms = ae + E_METRIC.length;
    const me = skipString(buf, ms, end);
    if (me < 0 || !lit(buf, me, E_LABELS)) return -1;
    const ls = me + E_LABELS.length;
    if (buf[ls] !== 123) return -1;
    let le = ls + 1;
    while (le < end && buf[le] !== 125) {
      const c = buf[le]!;
      if (c === 123 || c === 91 || c === 92 || c >= 0x80 || c < 0x20) return -1;
      le++;
    }
    le++; // past "}"
    if (!lit(buf, le, E_VALUE)) return -1;
    const value = readNumber(buf, le + E_VALUE.length, end);
    const nl = lineEnd(buf, cursor, end);
    if (nl < 0 || !Number.isFinite(ts)) return -1;
    let lab: number;
    try {
      lab = this.labels.id(buf, ls, le);
    } catch {
      return -1;
    }
    const addr = this.addrs.id(buf, as, ae);
    const key = addr * 65536 + lab;
    let sid = this.series.get(key);
    if (sid === undefined) {
      sid = this.dicts.seriesId(this.addrNames[addr]!, this.labelObjs[lab]!);
      this.series.set(key, sid);
    }
    this.stage.push(this.metrics.id(buf, ms, me), ts, sid, value);
    return nl;
  }
}

// ---------------------------------------------------------------------------------------
// phases: {"name":"…","t0":…,"t1":…,"node":"…","gpus":[…],"rank":…,"role":"…"}

const F_NAME = enc('{"name":"');
const F_T0 = enc('","t0":');
const F_T1 = enc(',"t1":');
const F_NODE = enc(',"node":"');
const F_GPUS = enc('","gpus":[');
const F_RANK = enc(',"rank":');
const F_ROLE = enc(',"role":"');

/** `-1.0`, an OPEN marker's t1 as writers put it, as one word. */
const OPEN_T1_WORD = new DataView(Uint8Array.from(Buffer.from("-1.0", "latin1")).buffer).getUint32(0, true);

/** Slots of the phase scanner's node cache (a 1024-GPU run has 128 nodes). */
const NODE_BITS = 10;
const NODE_SLOTS = 1 << NODE_BITS;

export class PhaseLineScanner extends LineScanner<PhaseBlock> {
  private readonly strings: FastInterner[];
  private gpus = new Float64Array(64);
  /**
   * The last line's head — `{"name":"…","t0":…,"t1":` — copied, with its name id and t0:
   * every rank of a step opens (and then closes) its phase at one t0, so most lines repeat
   * the head of the line before and skip to t1.
   */
  private headLen = 0;
  private readonly headView = new DataView(new ArrayBuffer(HEAD_MAX));
  private headName = 0;
  private headT0 = 0;
  /**
   * Node names seen, by a hash of their first and last word: a direct-mapped cache in
   * front of the interner. A step's ranks finish in no fixed order, so the interner's
   * guess (the name before, or what followed it) misses on nearly every line. The four
   * words are read in `fast`, not through `wordsOf`, whose array would be garbage a line.
   */
  private readonly nodeLen = new Int32Array(NODE_SLOTS).fill(-1);
  private readonly nodeW = new Int32Array(NODE_SLOTS * 4);
  private readonly nodeId = new Int32Array(NODE_SLOTS);

  constructor(dicts: Dicts) {
    super();
    // one predictor per field (name, node, role), one shared string table
    const s = dicts.phaseStrings;
    this.strings = [0, 1, 2].map(() => new FastInterner((text) => s.id(text)));
  }

  protected slow(rec: unknown, block: PhaseBlock): boolean {
    const ev = decodePhase(rec);
    if (ev === null) return false;
    block.add(ev);
    return true;
  }

  fast(buf: Uint8Array, pos: number, end: number, block: PhaseBlock): number {
    const v = viewOf(buf);
    const [names, nodes, roles] = this.strings as [FastInterner, FastInterner, FastInterner];
    let name: number;
    let t0: number;
    let at: number;
    const L = this.headLen;
    if (L > 0 && pos + L < end && sameHead(v, pos, this.headView, L)) {
      name = this.headName;
      t0 = this.headT0;
      at = pos + L;
    } else {
      if (!lit(buf, pos, F_NAME)) return -1;
      const as = pos + F_NAME.length;
      const ae = skipString(buf, as, end);
      if (ae < 0 || !lit(buf, ae, F_T0)) return -1;
      t0 = readNumber(buf, ae + F_T0.length, end);
      if (cursor < 0 || !lit(buf, cursor, F_T1)) return -1;
      name = names.id(buf, as, ae);
      at = cursor + F_T1.length;
      this.headLen = copyHead(v, pos, at - pos, this.headView);
      this.headName = name;
      this.headT0 = t0;
    }
    let t1: number;
    let c: number;
    // (`-1.05` reads as -1.0 here, and then fails the `,"node":"` check below: generic path)
    if (at + 4 <= end && v.getUint32(at, true) === OPEN_T1_WORD) {
      t1 = OPEN_T1;
      c = at + 4;
    } else {
      t1 = readNumber(buf, at, end);
      c = cursor;
    }
    // The keys compared here, word by word, as `lit` does (called, it was not inlined).
    if (c < 0 || c + 9 > end || v.getUint32(c, true) !== F_NODE.w0 || v.getUint32(c + 4, true) !== F_NODE.w1 || v.getUint32(c + 5, true) !== F_NODE.w3) return -1;
    const ns = c + 9;
    const ne = skipString(buf, ns, end);
    if (ne < 0 || ne + 10 > end || v.getUint32(ne, true) !== F_GPUS.w0 || v.getUint32(ne + 4, true) !== F_GPUS.w1 || v.getUint32(ne + 6, true) !== F_GPUS.w3) return -1;
    at = ne + 10;
    let ng = 0;
    if (buf[at] === 93) at++;
    else
      for (;;) {
        const g = readInt(buf, at, end);
        if (cursor < 0 || !Number.isInteger(g)) return -1;
        if (ng === this.gpus.length) {
          const grown = new Float64Array(ng * 2);
          grown.set(this.gpus);
          this.gpus = grown;
        }
        this.gpus[ng++] = g;
        const d = buf[cursor];
        at = cursor + 1;
        if (d === 93) break;
        if (d !== 44) return -1;
      }
    if (at + 8 > end || v.getUint32(at, true) !== F_RANK.w0 || v.getUint32(at + 4, true) !== F_RANK.w1) return -1;
    const rank = readInt(buf, at + 8, end);
    c = cursor;
    if (c < 0 || !Number.isInteger(rank) || c + 9 > end || v.getUint32(c, true) !== F_ROLE.w0 || v.getUint32(c + 4, true) !== F_ROLE.w1 || v.getUint32(c + 5, true) !== F_ROLE.w3) return -1;
    const rs = c + 9;
    const re = skipString(buf, rs, end);
    const nl = re < 0 ? -1 : lineEnd(buf, re + 1, end);
    if (nl < 0) return -1;
    let node: number;
    const n = ne - ns;
    if (n >= 4 && n <= 16) {
      const w0 = v.getUint32(ns, true) | 0;
      const w1 = v.getUint32(ns + (n < 8 ? n - 4 : 4), true) | 0;
      const w2 = v.getUint32(ns + (n < 12 ? n - 4 : 8), true) | 0;
      const w3 = v.getUint32(ne - 4, true) | 0;
      const slot = Math.imul(w0 ^ Math.imul(w3 ^ n, 0x9e3779b1), 0x85ebca6b) >>> (32 - NODE_BITS);
      const W = this.nodeW;
      const k = slot << 2;
      if (this.nodeLen[slot] === n && W[k] === w0 && W[k + 1] === w1 && W[k + 2] === w2 && W[k + 3] === w3) node = this.nodeId[slot]!;
      else {
        node = nodes.id(buf, ns, ne);
        this.nodeLen[slot] = n;
        W[k] = w0;
        W[k + 1] = w1;
        W[k + 2] = w2;
        W[k + 3] = w3;
        this.nodeId[slot] = node;
      }
    } else node = nodes.id(buf, ns, ne);
    block.push(name, t0, t1, node, this.gpus, 0, ng, rank, roles.id(buf, rs, re));
    return nl;
  }
}
