/**
 * The gpu_util scanner's inner loop as WebAssembly (#20: a 1024-GPU hour is 3.7 M lines,
 * ~0.4 s of one core in the JS scanner, most of a whole-fleet view read without the binary
 * cache).
 *
 * It decodes only lines the JS scanner (`GpuLineScanner`, ingest.ts) would decode on its
 * fast path, and only the part after the line head: the head — `{"ts":…,"node":"…","gpu":`
 * — is parsed by the JS scanner, which hands its bytes, ts and node id here; lines that
 * repeat it byte for byte (a node's GPUs, one line each per tick) are decoded here while
 * the rest of the line is in the collector's shape: three small unsigned integers in plain
 * digits after their keys, then `}` and the newline. A new head whose ts is a plain decimal
 * and whose node it has been handed before is taken here too (`scanProgram`), so the JS
 * scanner sees each node's first head only. At anything else it stops and says
 * why, and the JS scanner takes that line: a new head, a number with a sign, a fraction,
 * an exponent, a leading zero or 10+ digits, a lane not in its table, the chunk end. So the
 * JS scanner stays the definition of the grammar and of every value; this loop is a
 * subset of it, and `gpu-wasm.test.ts` holds the two to the same columns.
 *
 * Rows go to column buffers in the module's memory, in the layout `GpuStage.appendScanned`
 * takes: lane (u16), util (u8), mem (i32), power (i16) — a value past its column's width is
 * left to the JS scanner, which counts the line corrupt — and a tick group opened whenever
 * a row's ts differs from the row before's, as `GpuStage.push` opens them.
 */
import { GPU_VALUE_RANGE } from "@/lib/store/format";
import { assemble, F64, I32, I64, op, type Code, type ValType } from "@/lib/store/telemetry/wasm-asm";

/** Why `scan` stopped. */
export const Stop = {
  /** Reached the end of the range. */
  End: 0,
  /** The line's head is not the one handed in: the JS scanner parses it (`setHead`). */
  Head: 1,
  /**
   * The line is not in the shape decoded here, or its (node, gpu) lane is not in the table:
   * the JS scanner takes it (and tells the lane, `setLane`).
   */
  Slow: 2,
  /** The row buffers are full: move them out (`take`) and go on. */
  Full: 3,
} as const;
export type Stop = (typeof Stop)[keyof typeof Stop];

/** Longest head kept (the JS scanner keeps heads up to 96 bytes). */
export const WASM_HEAD_MAX = 96;
/** Node ids below NODE_SLOTS have a lane row and a name kept; GPU indices below GPU_SLOTS a lane (others take the JS path). */
const NODE_SLOTS = 2048;
const GPU_SLOTS = 64;
/** Longest node name kept. */
const NAME_MAX = 64;
/** Rows the buffers hold (a 2 MiB read chunk holds up to ~35 k fast lines: `Full` covers more). */
const CAP = 16384;

/**
 * 10^k for k ≤ 22, each exact: a decimal with a mantissa below 2^53 and k fraction digits
 * is that mantissa / 10^k, one correctly rounded division — what JSON.parse gives (both
 * decoders divide by this table).
 */
export const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

// Memory layout (bytes).
const S_HEADLEN = 0;
const S_NODE = 4;
const S_POS = 8;
const S_ROWS = 12;
const S_GROUPS = 16;
const S_HEADTS = 24;
const S_LASTTS = 32;
const HEAD = 64;
const POW = 256;
const LANES = 512;
/** Node names kept: an open-addressing table of node id + 1 (0: empty) by FNV-1a hash of the name. */
const HASH = LANES + NODE_SLOTS * GPU_SLOTS * 2;
const HASH_SLOTS = 2 * NODE_SLOTS;
/** Node id → its name's length (+ 1; 0: not kept), and the name at NAMES + id · NAME_MAX. */
const NAMELEN = HASH + HASH_SLOTS * 4;
const NAMES = NAMELEN + NODE_SLOTS * 4;
const OUT_LANE = NAMES + NODE_SLOTS * NAME_MAX;
const OUT_UTIL = OUT_LANE + CAP * 2;
const OUT_MEM = OUT_UTIL + CAP;
const OUT_POWER = OUT_MEM + CAP * 4;
const OUT_GTS = OUT_POWER + CAP * 2;
const OUT_GSTART = OUT_GTS + CAP * 8;
const IN = 1 << 20;
const PAGE = 1 << 16;
/** Input room the memory starts with (a read chunk is 2 MiB; it grows for a longer one). */
const IN_START = 4 << 20;

if (OUT_GSTART + CAP * 4 > IN || OUT_GTS % 8 !== 0 || OUT_MEM % 4 !== 0) throw new Error("gpu-wasm layout does not fit");

/** An 8-byte-or-longer literal at local `q` (bounded by local `e`), else branch out `out` levels; q moves past it. */
function literal(text: string, q: number, e: number, out: number): Code {
  const b = Buffer.from(text, "latin1");
  const n = b.length;
  if (n < 8) throw new Error("literal() compares 8-byte words");
  const at = [];
  for (let k = 0; k + 8 <= n; k += 8) at.push(k);
  if (n % 8 !== 0) at.push(n - 8);
  return [
    ...op.get(q), ...op.i32(n), ...op.i32Add, ...op.get(e), ...op.i32GtU, ...op.brIf(out),
    ...at.flatMap((k) => [...op.get(q), ...op.i64Load(k), ...op.i64(b.readBigUInt64LE(k)), ...op.i64Ne, ...op.brIf(out)]),
    ...op.get(q), ...op.i32(n), ...op.i32Add, ...op.set(q),
  ];
}

/** A loop over the digits at local `q` (not past `e`): `each` runs with the digit's value in local `c`, then q moves on. */
function digitLoop(q: number, e: number, c: number, each: Code): Code {
  return op.block(
    op.loop(
      [...op.get(q), ...op.get(e), ...op.i32GeU, ...op.brIf(1)],
      [...op.get(q), ...op.i32Load8u(), ...op.i32(48), ...op.i32Sub, ...op.tee(c), ...op.i32(9), ...op.i32GtU, ...op.brIf(1)],
      each,
      [...op.get(q), ...op.i32(1), ...op.i32Add, ...op.set(q), ...op.br(0)],
    ),
  );
}

/**
 * A run of 1 to 9 digits at local `q` into local `dst` — not empty, no leading zero unless
 * alone, not running to `e` (what `readInt` takes as its own value) — else branch out.
 */
function digits(dst: number, q: number, e: number, v: number, c: number, d0: number, out: number): Code {
  return [
    ...op.i32(0), ...op.set(v),
    ...op.get(q), ...op.set(d0),
    ...digitLoop(q, e, c, [...op.get(v), ...op.i32(10), ...op.i32Mul, ...op.get(c), ...op.i32Add, ...op.set(v)]),
    // c = digit count
    ...op.get(q), ...op.get(d0), ...op.i32Sub, ...op.tee(c), ...op.i32Eqz, ...op.brIf(out),
    ...op.get(c), ...op.i32(9), ...op.i32GtU, ...op.brIf(out),
    ...op.get(q), ...op.get(e), ...op.i32GeU, ...op.brIf(out),
    ...op.get(c), ...op.i32(1), ...op.i32GtU, ...op.get(d0), ...op.i32Load8u(), ...op.i32(48), ...op.i32Eq, ...op.i32And, ...op.brIf(out),
    ...op.get(v), ...op.set(dst),
  ];
}

/** `[src, src + len)` to `[dst, dst + len)` (8 ≤ len), 8 bytes at a time, the last word overlapping: reads nothing outside the source. */
function copyWords(dst: number, src: number, len: number, i: number): Code {
  return [
    ...op.i32(0), ...op.set(i),
    ...op.block(
      op.loop(
        [...op.get(i), ...op.i32(8), ...op.i32Add, ...op.get(len), ...op.i32GeU, ...op.brIf(1)],
        [...op.get(dst), ...op.get(i), ...op.i32Add, ...op.get(src), ...op.get(i), ...op.i32Add, ...op.i64Load(), ...op.i64Store()],
        [...op.get(i), ...op.i32(8), ...op.i32Add, ...op.set(i), ...op.br(0)],
      ),
    ),
    ...op.get(dst), ...op.get(len), ...op.i32Add, ...op.i32(8), ...op.i32Sub,
    ...op.get(src), ...op.get(len), ...op.i32Add, ...op.i32(8), ...op.i32Sub, ...op.i64Load(), ...op.i64Store(),
  ];
}

/**
 * `scan(p, e)`: decode lines from p up to e; returns a `Stop`, the position reached at
 * S_POS. A line whose head is not the kept one is taken here when its head is in the
 * collector's shape — a plain decimal ts (no sign, no exponent, at most 18 digits, below
 * 2^53 as a mantissa: `readNumber`'s one division), a node name of printable ASCII without
 * escapes — and its node name is one the JS scanner handed over before (`setHead`: the
 * scanner's node ids are its own); otherwise it stops with `Stop.Head`.
 */
function scanProgram(): Code {
  // params
  const p = 0, e = 1;
  // i32 locals
  const H = 2, q = 3, c = 4, v = 5, d0 = 6, gpu = 7, util = 8, mem = 9, pow = 10, rows = 11, groups = 12, lane = 13, i = 14, status = 15, node = 16, ns = 17, cand = 18, h = 19;
  // f64 locals
  const ts = 20, lastTs = 21;
  // i64 locals
  const m = 22;
  const setStatus = (s: Stop): Code => [...op.i32(s), ...op.set(status)];

  // Inside `block $new` (in `block $have`, in the line loop, in `block $out`): $out is 3 up.
  const kept: Code[] = [
    [...setStatus(Stop.Head), ...op.get(H), ...op.i32Eqz, ...op.brIf(3)],
    [...setStatus(Stop.Slow), ...op.get(p), ...op.get(H), ...op.i32Add, ...op.get(e), ...op.i32GeU, ...op.brIf(3)],
    // the head, 8 bytes at a time, the last word overlapping; a difference: try it as a new head
    [...op.i32(0), ...op.set(i)],
    op.block(
      op.loop(
        [...op.get(i), ...op.i32(8), ...op.i32Add, ...op.get(H), ...op.i32GeU, ...op.brIf(1)],
        [...op.get(p), ...op.get(i), ...op.i32Add, ...op.i64Load(), ...op.get(i), ...op.i64Load(HEAD), ...op.i64Ne, ...op.brIf(2)],
        [...op.get(i), ...op.i32(8), ...op.i32Add, ...op.set(i), ...op.br(0)],
      ),
    ),
    [...op.get(p), ...op.get(H), ...op.i32Add, ...op.i32(8), ...op.i32Sub, ...op.i64Load()],
    [...op.get(H), ...op.i32(8), ...op.i32Sub, ...op.i64Load(HEAD), ...op.i64Ne, ...op.brIf(0)],
    op.br(1),
  ];
  // After `block $new`, inside `block $have`: $out is 2 up.
  const OUT = 2;
  const fresh: Code[] = [
    setStatus(Stop.Head),
    // `{"ts":`
    [...op.get(p), ...op.i32(6), ...op.i32Add, ...op.get(e), ...op.i32GeU, ...op.brIf(OUT)],
    [...op.get(p), ...op.i32Load(), ...op.i32(0x7374227b), ...op.i32Ne, ...op.brIf(OUT)],
    [...op.get(p), ...op.i32Load16u(4), ...op.i32(0x3a22), ...op.i32Ne, ...op.brIf(OUT)],
    // the ts: digits, then `.` and digits, as one mantissa
    [...op.get(p), ...op.i32(6), ...op.i32Add, ...op.tee(q), ...op.set(d0), ...op.i64(0n), ...op.set(m)],
    digitLoop(q, e, c, [...op.get(m), ...op.i64(10n), ...op.i64Mul, ...op.get(c), ...op.i64ExtendI32U, ...op.i64Add, ...op.set(m)]),
    [...op.get(q), ...op.get(d0), ...op.i32Sub, ...op.tee(c), ...op.i32Eqz, ...op.brIf(OUT)],
    [...op.get(c), ...op.i32(1), ...op.i32GtU, ...op.get(d0), ...op.i32Load8u(), ...op.i32(48), ...op.i32Eq, ...op.i32And, ...op.brIf(OUT)],
    [...op.i32(0), ...op.set(v)], // v = fraction digits
    [...op.get(q), ...op.get(e), ...op.i32GeU, ...op.brIf(OUT)],
    [...op.get(q), ...op.i32Load8u(), ...op.i32(46), ...op.i32Eq],
    op.if(
      [...op.get(q), ...op.i32(1), ...op.i32Add, ...op.tee(q), ...op.set(ns)],
      digitLoop(q, e, c, [...op.get(m), ...op.i64(10n), ...op.i64Mul, ...op.get(c), ...op.i64ExtendI32U, ...op.i64Add, ...op.set(m)]),
      [...op.get(q), ...op.get(ns), ...op.i32Sub, ...op.tee(v), ...op.i32Eqz, ...op.brIf(OUT + 1)],
    ),
    // at most 18 characters, so 18 digits (exact in i64); a mantissa below 2^53
    [...op.get(q), ...op.get(d0), ...op.i32Sub, ...op.i32(18), ...op.i32GtU, ...op.brIf(OUT)],
    [...op.get(m), ...op.i64(1n << 53n), ...op.i64GeU, ...op.brIf(OUT)],
    literal(',"node":"', q, e, OUT),
    // the node name: printable ASCII, no escapes; its hash on the way
    [...op.get(q), ...op.set(ns), ...op.i32(0x811c9dc5 | 0), ...op.set(h)],
    op.block(
      op.loop(
        [...op.get(q), ...op.get(e), ...op.i32GeU, ...op.brIf(OUT + 2)],
        [...op.get(q), ...op.i32Load8u(), ...op.tee(c), ...op.i32(34), ...op.i32Eq, ...op.brIf(1)],
        [...op.get(c), ...op.i32(92), ...op.i32Eq, ...op.get(c), ...op.i32(0x80), ...op.i32GeU, ...op.i32Or, ...op.get(c), ...op.i32(0x20), ...op.i32LtU, ...op.i32Or, ...op.brIf(OUT + 2)],
        [...op.get(h), ...op.get(c), ...op.i32Xor, ...op.i32(0x01000193), ...op.i32Mul, ...op.set(h)],
        [...op.get(q), ...op.i32(1), ...op.i32Add, ...op.set(q), ...op.br(0)],
      ),
    ),
    [...op.get(q), ...op.get(ns), ...op.i32Sub, ...op.set(c)], // c = name length
    literal('","gpu":', q, e, OUT),
    [...op.get(q), ...op.get(p), ...op.i32Sub, ...op.i32(WASM_HEAD_MAX), ...op.i32GtU, ...op.brIf(OUT)],
    // its node: probe the name table from the hash's slot; an empty slot: not known here
    [...op.get(h), ...op.i32(HASH_SLOTS - 1), ...op.i32And, ...op.set(h)],
    op.block(
      op.loop(
        [...op.get(h), ...op.i32(4), ...op.i32Mul, ...op.i32Load(HASH), ...op.tee(cand), ...op.i32Eqz, ...op.brIf(OUT + 2)],
        [...op.get(cand), ...op.i32(1), ...op.i32Sub, ...op.set(cand)],
        op.block(
          [...op.get(cand), ...op.i32(4), ...op.i32Mul, ...op.i32Load(NAMELEN), ...op.get(c), ...op.i32(1), ...op.i32Add, ...op.i32Ne, ...op.brIf(0)],
          [...op.i32(0), ...op.set(i)],
          op.loop(
            [...op.get(i), ...op.get(c), ...op.i32GeU, ...op.brIf(3)],
            [...op.get(ns), ...op.get(i), ...op.i32Add, ...op.i32Load8u()],
            [...op.get(cand), ...op.i32(NAME_MAX), ...op.i32Mul, ...op.get(i), ...op.i32Add, ...op.i32Load8u(NAMES), ...op.i32Ne, ...op.brIf(1)],
            [...op.get(i), ...op.i32(1), ...op.i32Add, ...op.set(i), ...op.br(0)],
          ),
        ),
        [...op.get(h), ...op.i32(1), ...op.i32Add, ...op.i32(HASH_SLOTS - 1), ...op.i32And, ...op.set(h), ...op.br(0)],
      ),
    ),
    // kept: bytes, ts (the mantissa over 10^fraction digits), node
    [...op.get(q), ...op.get(p), ...op.i32Sub, ...op.set(H)],
    [...op.i32(HEAD), ...op.set(c)],
    copyWords(c, p, H, i),
    [...op.get(m), ...op.f64ConvertI64U, ...op.get(v), ...op.i32(8), ...op.i32Mul, ...op.f64Load(POW), ...op.f64Div, ...op.set(ts)],
    [...op.get(cand), ...op.set(node)],
  ];

  // In the line loop, `$out` (the block around it) is 1 up.
  const line: Code[] = [
    [...setStatus(Stop.End), ...op.get(p), ...op.get(e), ...op.i32GeU, ...op.brIf(1)],
    op.block(op.block(...kept), ...fresh),
    // gpu, util, mem_mb, power_w, `}\n`
    setStatus(Stop.Slow),
    [...op.get(p), ...op.get(H), ...op.i32Add, ...op.set(q)],
    digits(gpu, q, e, v, c, d0, 1),
    literal(',"util":', q, e, 1),
    digits(util, q, e, v, c, d0, 1),
    literal(',"mem_mb":', q, e, 1),
    digits(mem, q, e, v, c, d0, 1),
    literal(',"power_w":', q, e, 1),
    digits(pow, q, e, v, c, d0, 1),
    [...op.get(q), ...op.i32(1), ...op.i32Add, ...op.get(e), ...op.i32GeU, ...op.brIf(1)],
    [...op.get(q), ...op.i32Load16u(), ...op.i32(0x0a7d), ...op.i32Ne, ...op.brIf(1)],
    // values their columns hold as given (`gpuValuesFit`; mem has at most 9 digits)
    [...op.get(util), ...op.i32(GPU_VALUE_RANGE.util[1]), ...op.i32GtU, ...op.brIf(1)],
    [...op.get(pow), ...op.i32(GPU_VALUE_RANGE.power_w[1]), ...op.i32GtU, ...op.brIf(1)],
    // the lane: table entries are lane id + 1, 0 = not known here
    [...op.get(node), ...op.i32(NODE_SLOTS), ...op.i32GeU, ...op.brIf(1)],
    [...op.get(gpu), ...op.i32(GPU_SLOTS), ...op.i32GeU, ...op.brIf(1)],
    [...op.get(node), ...op.i32(GPU_SLOTS), ...op.i32Mul, ...op.get(gpu), ...op.i32Add, ...op.i32(2), ...op.i32Mul, ...op.i32Load16u(LANES), ...op.tee(lane)],
    [...op.i32Eqz, ...op.brIf(1)],
    [...op.get(lane), ...op.i32(1), ...op.i32Sub, ...op.set(lane)],
    [...setStatus(Stop.Full), ...op.get(rows), ...op.i32(CAP), ...op.i32GeU, ...op.brIf(1)],
    // the row: a new tick group when its ts differs from the row before's
    [...op.get(ts), ...op.get(lastTs), ...op.f64Ne],
    op.if(
      [...op.get(groups), ...op.i32(8), ...op.i32Mul, ...op.get(ts), ...op.f64Store(OUT_GTS)],
      [...op.get(groups), ...op.i32(4), ...op.i32Mul, ...op.get(rows), ...op.i32Store(OUT_GSTART)],
      [...op.get(groups), ...op.i32(1), ...op.i32Add, ...op.set(groups)],
      [...op.get(ts), ...op.set(lastTs)],
    ),
    [...op.get(rows), ...op.i32(2), ...op.i32Mul, ...op.get(lane), ...op.i32Store16(OUT_LANE)],
    [...op.get(rows), ...op.get(util), ...op.i32Store8(OUT_UTIL)],
    [...op.get(rows), ...op.i32(4), ...op.i32Mul, ...op.get(mem), ...op.i32Store(OUT_MEM)],
    [...op.get(rows), ...op.i32(2), ...op.i32Mul, ...op.get(pow), ...op.i32Store16(OUT_POWER)],
    [...op.get(rows), ...op.i32(1), ...op.i32Add, ...op.set(rows)],
    [...op.get(q), ...op.i32(2), ...op.i32Add, ...op.set(p), ...op.br(0)],
  ];
  // What lives in memory between calls (JS reads and sets it there): [address, local, is f64].
  const state: [number, number, boolean][] = [
    [S_HEADLEN, H, false],
    [S_NODE, node, false],
    [S_ROWS, rows, false],
    [S_GROUPS, groups, false],
    [S_HEADTS, ts, true],
    [S_LASTTS, lastTs, true],
  ];
  return [
    ...state.flatMap(([at, local, f]) => [...op.i32(0), ...(f ? op.f64Load(at) : op.i32Load(at)), ...op.set(local)]),
    ...op.block(op.loop(...line)),
    ...state.flatMap(([at, local, f]) => [...op.i32(0), ...op.get(local), ...(f ? op.f64Store(at) : op.i32Store(at))]),
    ...op.i32(0), ...op.get(p), ...op.i32Store(S_POS),
    ...op.get(status),
  ];
}

let compiled: WebAssembly.Module | null | undefined;

function moduleOnce(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      const bytes = assemble(Math.ceil((IN + IN_START) / PAGE), [
        { name: "scan", params: [I32, I32], results: [I32], locals: [...Array<ValType>(18).fill(I32), F64, F64, I64], body: scanProgram() },
      ]);
      compiled = new WebAssembly.Module(bytes);
    } catch {
      // No WebAssembly here (or a runtime that refuses the module): the JS scanner does it all.
      compiled = null;
    }
  }
  return compiled;
}

/** Rows moved out of the module: views into its memory, valid until the next `scan`. */
export interface ScannedRows {
  n: number;
  lane: Uint16Array;
  util: Uint8Array;
  mem: Int32Array;
  power: Int16Array;
  /** Tick groups opened by these rows: ts and first row (the rows before the first group continue the group before). */
  g: number;
  gTs: Float64Array;
  gStart: Uint32Array;
}

/**
 * One module instance per thread, lent to one scanner at a time (`claim`): a scanner that
 * claims it from another starts with an empty lane table and no head.
 */
export class GpuWasmScan {
  private readonly memory: WebAssembly.Memory;
  private readonly scanFn: (p: number, e: number) => number;
  private u8!: Uint8Array;
  private i32!: Int32Array;
  private f64!: Float64Array;
  private lanes!: Uint16Array;
  /** HASH then NAMELEN, one view */
  private nodeTabs!: Int32Array;
  private owner: object | null = null;
  /** Rows decoded here so far (tests: the path was taken). */
  decoded = 0;
  /** Byte offset in the module's memory where `load` puts a range. */
  readonly base = IN;

  constructor(mod: WebAssembly.Module) {
    const inst = new WebAssembly.Instance(mod, {});
    this.memory = inst.exports.memory as WebAssembly.Memory;
    this.scanFn = inst.exports.scan as (p: number, e: number) => number;
    this.views();
    new Float64Array(this.memory.buffer, POW, POW10.length).set(POW10);
  }

  private views(): void {
    const b = this.memory.buffer;
    this.u8 = new Uint8Array(b);
    this.i32 = new Int32Array(b, 0, 16);
    this.f64 = new Float64Array(b, 0, 8);
    this.lanes = new Uint16Array(b, LANES, NODE_SLOTS * GPU_SLOTS);
    this.nodeTabs = new Int32Array(b, HASH, HASH_SLOTS + NODE_SLOTS);
  }

  /** Make `owner` the scanner whose lanes, node names and head the module holds (another's are dropped). */
  claim(owner: object): void {
    if (this.owner === owner) return;
    this.owner = owner;
    this.lanes.fill(0);
    this.nodeTabs.fill(0);
    this.i32[S_HEADLEN >> 2] = 0;
  }

  /** Copy `[start, end)` of `buf` to `base`; returns the end offset in the module's memory. */
  load(buf: Uint8Array, start: number, end: number): number {
    const need = IN + (end - start);
    if (need > this.u8.length) {
      this.memory.grow(Math.ceil((need - this.u8.length) / PAGE));
      this.views();
    }
    this.u8.set(buf.subarray(start, end), IN);
    this.i32[S_ROWS >> 2] = 0;
    this.i32[S_GROUPS >> 2] = 0;
    return need;
  }

  /**
   * The head that lines must repeat: `[p, p + len)` of the loaded range, its ts and node id,
   * the node's name at `[name, nameEnd)`, which is kept (once) so the loop can take the
   * next head of this node itself.
   */
  setHead(p: number, len: number, ts: number, node: number, name: number, nameEnd: number): void {
    const i32 = this.i32;
    this.u8.copyWithin(HEAD, p, p + len);
    i32[S_HEADLEN >> 2] = len;
    i32[S_NODE >> 2] = node;
    this.f64[S_HEADTS >> 3] = ts;
    const n = nameEnd - name;
    const tabs = this.nodeTabs;
    if (node >= NODE_SLOTS || n > NAME_MAX || tabs[HASH_SLOTS + node] !== 0) return;
    const u8 = this.u8;
    u8.copyWithin(NAMES + node * NAME_MAX, name, nameEnd);
    tabs[HASH_SLOTS + node] = n + 1;
    let h = 0x811c9dc5 | 0;
    for (let k = name; k < nameEnd; k++) h = Math.imul(h ^ u8[k]!, 0x01000193);
    h &= HASH_SLOTS - 1;
    while (tabs[h] !== 0) h = (h + 1) & (HASH_SLOTS - 1);
    tabs[h] = node + 1;
  }

  /** Lane id of (node id, gpu) for the rows decoded here (ignored outside the table or above 0xfffe). */
  setLane(node: number, gpu: number, lane: number): void {
    if (node < NODE_SLOTS && gpu < GPU_SLOTS && lane < 0xffff) this.lanes[node * GPU_SLOTS + gpu] = lane + 1;
  }

  /** The ts of the last row, as a new row's tick group is judged against (NaN: none). */
  set lastTs(ts: number) {
    this.f64[S_LASTTS >> 3] = ts;
  }

  /** Decode from `p` to `e` (offsets in the module's memory); returns why it stopped, and the position (`pos`). */
  scan(p: number, e: number): Stop {
    return this.scanFn(p, e) as Stop;
  }

  get pos(): number {
    return this.i32[S_POS >> 2]!;
  }

  /** The rows decoded since the last `take` (or `load`): views valid until the next `scan`, then empty. */
  take(): ScannedRows | null {
    const n = this.i32[S_ROWS >> 2]!;
    const g = this.i32[S_GROUPS >> 2]!;
    if (n === 0) return null;
    const b = this.memory.buffer;
    this.decoded += n;
    this.i32[S_ROWS >> 2] = 0;
    this.i32[S_GROUPS >> 2] = 0;
    return {
      n,
      lane: new Uint16Array(b, OUT_LANE, n),
      util: new Uint8Array(b, OUT_UTIL, n),
      mem: new Int32Array(b, OUT_MEM, n),
      power: new Int16Array(b, OUT_POWER, n),
      g,
      gTs: new Float64Array(b, OUT_GTS, g),
      gStart: new Uint32Array(b, OUT_GSTART, g),
    };
  }
}

let enabled = true;
let shared: GpuWasmScan | null | undefined;

/** This thread's instance, or null where WebAssembly is not available (or `setGpuWasm(false)`). */
export function gpuWasm(): GpuWasmScan | null {
  if (!enabled) return null;
  if (shared === undefined) {
    const mod = moduleOnce();
    shared = mod ? new GpuWasmScan(mod) : null;
  }
  return shared;
}

/** Turn the WebAssembly path on or off in this thread (tests compare the two). */
export function setGpuWasm(on: boolean): void {
  enabled = on;
}
