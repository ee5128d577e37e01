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
 * digits after their keys, then `}` and the newline. At anything else it stops and says
 * why, and the JS scanner takes that line: a new head, a number with a sign, a fraction,
 * an exponent, a leading zero or 10+ digits, a lane not in its table, the chunk end. So the
 * JS scanner stays the definition of the grammar and of every value; this loop is a
 * subset of it, and `gpu-wasm.test.ts` holds the two to the same columns.
 *
 * Rows go to column buffers in the module's memory, in the layout `GpuStage.appendScanned`
 * takes: lane (u16), util (u8), mem (i32), power (i16) as the JS scanner stores them (the
 * same wrap-around for values past the column's width), and a tick group opened whenever
 * a row's ts differs from the row before's, as `GpuStage.push` opens them.
 */
import { assemble, F64, I32, op, type Code, type ValType } from "@/lib/store/telemetry/wasm-asm";

/** Why `scan` stopped. */
export const Stop = {
  /** Reached the end of the range. */
  End: 0,
  /** The line's head is not the one handed in: the JS scanner parses it (`setHead`). */
  Head: 1,
  /** The line is not in the shape decoded here: the JS scanner takes it. */
  Slow: 2,
  /** The (node, gpu) lane is not in the table: the JS scanner takes the line (and `setLane`). */
  Lane: 3,
  /** The row buffers are full: move them out (`take`) and go on. */
  Full: 4,
} as const;
export type Stop = (typeof Stop)[keyof typeof Stop];

/** Longest head handed in (the JS scanner keeps heads up to 96 bytes). */
export const WASM_HEAD_MAX = 96;
/** Lane table: node ids below NODE_SLOTS, GPU indices below GPU_SLOTS (others take the JS path). */
const NODE_SLOTS = 2048;
const GPU_SLOTS = 64;
/** Rows the buffers hold (a 2 MiB read chunk holds up to ~35 k fast lines: `Full` covers more). */
const CAP = 32768;

// Memory layout (bytes).
const S_HEADLEN = 0;
const S_NODE = 4;
const S_POS = 8;
const S_ROWS = 12;
const S_GROUPS = 16;
const S_HEADTS = 24;
const S_LASTTS = 32;
const HEAD = 64;
const LANES = 256;
const OUT_LANE = LANES + NODE_SLOTS * GPU_SLOTS * 2;
const OUT_UTIL = OUT_LANE + CAP * 2;
const OUT_MEM = OUT_UTIL + CAP;
const OUT_POWER = OUT_MEM + CAP * 4;
const OUT_GTS = OUT_POWER + CAP * 2;
const OUT_GSTART = OUT_GTS + CAP * 8;
const IN = 1 << 20;
const PAGE = 1 << 16;
/** Input room the memory starts with (a read chunk is 2 MiB; it grows for a longer one). */
const IN_START = 4 << 20;

if (OUT_GSTART + CAP * 4 > IN) throw new Error("gpu-wasm layout overlaps its input");

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

/**
 * A run of 1 to 9 digits at local `q` into local `dst` — not empty, no leading zero unless
 * alone, not running to `e` (what `readInt` takes as its own value) — else branch out.
 */
function digits(dst: number, q: number, e: number, v: number, c: number, d0: number, out: number): Code {
  return [
    ...op.i32(0), ...op.set(v),
    ...op.get(q), ...op.set(d0),
    ...op.block(
      op.loop(
        [...op.get(q), ...op.get(e), ...op.i32GeU, ...op.brIf(1)],
        [...op.get(q), ...op.i32Load8u(), ...op.i32(48), ...op.i32Sub, ...op.tee(c), ...op.i32(9), ...op.i32GtU, ...op.brIf(1)],
        [...op.get(v), ...op.i32(10), ...op.i32Mul, ...op.get(c), ...op.i32Add, ...op.set(v)],
        [...op.get(q), ...op.i32(1), ...op.i32Add, ...op.set(q), ...op.br(0)],
      ),
    ),
    // c = digit count
    ...op.get(q), ...op.get(d0), ...op.i32Sub, ...op.tee(c), ...op.i32Eqz, ...op.brIf(out),
    ...op.get(c), ...op.i32(9), ...op.i32GtU, ...op.brIf(out),
    ...op.get(q), ...op.get(e), ...op.i32GeU, ...op.brIf(out),
    ...op.get(c), ...op.i32(1), ...op.i32GtU, ...op.get(d0), ...op.i32Load8u(), ...op.i32(48), ...op.i32Eq, ...op.i32And, ...op.brIf(out),
    ...op.get(v), ...op.set(dst),
  ];
}

/** `scan(p, e)`: decode lines from p while they repeat the head, up to e; returns a `Stop`, the position reached at S_POS. */
function scanProgram(): Code {
  // params
  const p = 0, e = 1;
  // i32 locals
  const H = 2, q = 3, c = 4, v = 5, d0 = 6, gpu = 7, util = 8, mem = 9, pow = 10, rows = 11, groups = 12, lane = 13, i = 14, status = 15, node = 16;
  // f64 locals
  const ts = 17, lastTs = 18;
  const at0 = (addr: number): Code => op.i32(addr); // a fixed address (the constant offset does the rest)
  const setStatus = (s: Stop): Code => [...op.i32(s), ...op.set(status)];
  // Inside the line loop, `$out` (the block around it) is 1 level up.
  const OUT = 1;
  const line: Code[] = [
    [...setStatus(Stop.End), ...op.get(p), ...op.get(e), ...op.i32GeU, ...op.brIf(OUT)],
    [...setStatus(Stop.Head), ...op.get(H), ...op.i32Eqz, ...op.brIf(OUT)],
    [...setStatus(Stop.Slow), ...op.get(p), ...op.get(H), ...op.i32Add, ...op.get(e), ...op.i32GeU, ...op.brIf(OUT)],
    // the head, 8 bytes at a time, the last word overlapping
    setStatus(Stop.Head),
    [...op.i32(0), ...op.set(i)],
    op.block(
      op.loop(
        [...op.get(i), ...op.i32(8), ...op.i32Add, ...op.get(H), ...op.i32GeU, ...op.brIf(1)],
        [...op.get(p), ...op.get(i), ...op.i32Add, ...op.i64Load(), ...op.get(i), ...op.i64Load(HEAD), ...op.i64Ne, ...op.brIf(OUT + 2)],
        [...op.get(i), ...op.i32(8), ...op.i32Add, ...op.set(i), ...op.br(0)],
      ),
    ),
    [...op.get(p), ...op.get(H), ...op.i32Add, ...op.i32(8), ...op.i32Sub, ...op.i64Load()],
    [...op.get(H), ...op.i32(8), ...op.i32Sub, ...op.i64Load(HEAD), ...op.i64Ne, ...op.brIf(OUT)],
    // gpu, util, mem_mb, power_w, `}\n`
    setStatus(Stop.Slow),
    [...op.get(p), ...op.get(H), ...op.i32Add, ...op.set(q)],
    digits(gpu, q, e, v, c, d0, OUT + 0),
    literal(',"util":', q, e, OUT),
    digits(util, q, e, v, c, d0, OUT),
    literal(',"mem_mb":', q, e, OUT),
    digits(mem, q, e, v, c, d0, OUT),
    literal(',"power_w":', q, e, OUT),
    digits(pow, q, e, v, c, d0, OUT),
    [...op.get(q), ...op.i32(1), ...op.i32Add, ...op.get(e), ...op.i32GeU, ...op.brIf(OUT)],
    [...op.get(q), ...op.i32Load16u(), ...op.i32(0x0a7d), ...op.i32Ne, ...op.brIf(OUT)],
    [...op.get(gpu), ...op.i32(0xffff), ...op.i32GtU, ...op.brIf(OUT)],
    // the lane: table entries are lane id + 1, 0 = not known here
    [...op.get(node), ...op.i32(NODE_SLOTS), ...op.i32GeU, ...op.brIf(OUT)],
    [...op.get(gpu), ...op.i32(GPU_SLOTS), ...op.i32GeU, ...op.brIf(OUT)],
    setStatus(Stop.Lane),
    [...op.get(node), ...op.i32(GPU_SLOTS), ...op.i32Mul, ...op.get(gpu), ...op.i32Add, ...op.i32(2), ...op.i32Mul, ...op.i32Load16u(LANES), ...op.tee(lane)],
    [...op.i32Eqz, ...op.brIf(OUT)],
    [...op.get(lane), ...op.i32(1), ...op.i32Sub, ...op.set(lane)],
    [...setStatus(Stop.Full), ...op.get(rows), ...op.i32(CAP), ...op.i32GeU, ...op.brIf(OUT)],
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
  return [
    ...at0(0), ...op.i32Load(S_HEADLEN), ...op.set(H),
    ...at0(0), ...op.i32Load(S_NODE), ...op.set(node),
    ...at0(0), ...op.i32Load(S_ROWS), ...op.set(rows),
    ...at0(0), ...op.i32Load(S_GROUPS), ...op.set(groups),
    ...at0(0), ...op.f64Load(S_HEADTS), ...op.set(ts),
    ...at0(0), ...op.f64Load(S_LASTTS), ...op.set(lastTs),
    ...op.block(op.loop(...line)),
    ...at0(0), ...op.get(p), ...op.i32Store(S_POS),
    ...at0(0), ...op.get(rows), ...op.i32Store(S_ROWS),
    ...at0(0), ...op.get(groups), ...op.i32Store(S_GROUPS),
    ...at0(0), ...op.get(lastTs), ...op.f64Store(S_LASTTS),
    ...op.get(status),
  ];
}

let compiled: WebAssembly.Module | null | undefined;

function moduleOnce(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      const bytes = assemble(Math.ceil((IN + IN_START) / PAGE), [
        { name: "scan", params: [I32, I32], results: [I32], locals: [...Array<ValType>(15).fill(I32), F64, F64], body: scanProgram() },
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
  }

  private views(): void {
    const b = this.memory.buffer;
    this.u8 = new Uint8Array(b);
    this.i32 = new Int32Array(b, 0, 16);
    this.f64 = new Float64Array(b, 0, 8);
    this.lanes = new Uint16Array(b, LANES, NODE_SLOTS * GPU_SLOTS);
  }

  /** Make `owner` the scanner whose lanes and head the module holds (true: it already was). */
  claim(owner: object): boolean {
    if (this.owner === owner) return true;
    this.owner = owner;
    this.lanes.fill(0);
    this.i32[S_HEADLEN >> 2] = 0;
    return false;
  }

  isOwner(owner: object): boolean {
    return this.owner === owner;
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

  /** The head that lines must repeat: `[p, p + len)` of the loaded range, its ts and node id. */
  setHead(p: number, len: number, ts: number, node: number): void {
    this.u8.copyWithin(HEAD, p, p + len);
    this.i32[S_HEADLEN >> 2] = len;
    this.i32[S_NODE >> 2] = node;
    this.f64[S_HEADTS >> 3] = ts;
  }

  /** Forget the head (the next line stops with `Stop.Head`). */
  dropHead(): void {
    this.i32[S_HEADLEN >> 2] = 0;
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
