/**
 * The torch `.pt` WRITER of the project (the demo generator and the tests use it).
 *
 * Produces what `torch.save(obj, path)` produces (docs/api.md 1.2): a zip with STORED entries
 * whose data is 64-byte aligned through the local header's extra field, a protocol-2
 * `data.pkl`, one `data/<key>` entry per storage, `version`, and (optionally) `byteorder`.
 *
 * Value mapping (JS → Python): null/undefined → None, boolean → bool, integral number →
 * int (use `pyFloat(x)` to force a float), other number (incl. NaN/±Inf) → float,
 * bigint → int, string → str, Uint8Array → bytes (`_codecs.encode(s, 'latin1')`, the
 * protocol-2 form), Array/typed array → list, `tuple(...)` → tuple, plain object or Map
 * → dict, Set → set, `TensorSpec` → `torch._utils._rebuild_tensor_v2` + BINPERSID
 * storage, `PyCall` → GLOBAL + REDUCE (+ BUILD), `PyGlobalRef` → GLOBAL.
 *
 * Test-only extras: `ZeroFill` storages become holes in the written file (sparse files,
 * CRC written as 0) so multi-GiB/ZIP64 archives can be produced cheaply; `zip64: true`
 * forces ZIP64 records on small archives.
 */
import { open } from "node:fs/promises";
import type { DType } from "@/lib/store/pt/tensor";

// ---------------------------------------------------------------------------------
// Python value wrappers

export class PyTuple {
  constructor(readonly items: readonly unknown[]) {}
}
export const tuple = (...items: unknown[]): PyTuple => new PyTuple(items);

export class PyFloat {
  constructor(readonly value: number) {}
}
export const pyFloat = (v: number): PyFloat => new PyFloat(v);

export class PyGlobalRef {
  constructor(
    readonly module: string,
    readonly name: string,
  ) {}
}
export const pyGlobal = (module: string, name: string): PyGlobalRef => new PyGlobalRef(module, name);

/** `fn(*args)` (REDUCE) or `cls.__new__(cls, *args)` (NEWOBJ), then BUILD `state` if given. */
export class PyCall {
  constructor(
    readonly fn: PyGlobalRef,
    readonly args: readonly unknown[],
    readonly state: unknown = undefined,
    readonly newobj = false,
  ) {}
}
export const pyCall = (module: string, name: string, args: readonly unknown[], state?: unknown): PyCall =>
  new PyCall(new PyGlobalRef(module, name), args, state);

/** Raw bytes to emit as an opcode sequence verbatim (tests of unusual opcodes). */
export class RawPickle {
  constructor(readonly bytes: Uint8Array) {}
}

/** A zero-filled region that is not written (sparse hole). */
export class ZeroFill {
  constructor(readonly size: number) {}
}

export const ITEMSIZE: Readonly<Record<DType, number>> = {
  f32: 4, f16: 2, bf16: 2, f64: 8, i64: 8, i32: 4, i16: 2, i8: 1, u8: 1, bool: 1,
};

const STORAGE_CLASS: Readonly<Record<DType, string>> = {
  f64: "DoubleStorage", f32: "FloatStorage", f16: "HalfStorage", bf16: "BFloat16Storage", i64: "LongStorage",
  i32: "IntStorage", i16: "ShortStorage", i8: "CharStorage", u8: "ByteStorage", bool: "BoolStorage",
};

export class RawStorage {
  /** Assigned at write time when not given ("0", "1", … in order of first use). */
  key: string | undefined;
  constructor(
    readonly dtype: DType,
    readonly data: Uint8Array | ZeroFill,
    key?: string,
    readonly location = "cpu",
  ) {
    this.key = key;
  }
  get nbytes(): number {
    return this.data instanceof ZeroFill ? this.data.size : this.data.length;
  }
  get numel(): number {
    return Math.floor(this.nbytes / ITEMSIZE[this.dtype]);
  }
}

export class TensorSpec {
  constructor(
    readonly storage: RawStorage,
    readonly storageOffset: number,
    readonly shape: readonly number[],
    readonly stride: readonly number[],
    readonly requiresGrad = false,
  ) {}
}

// ---------------------------------------------------------------------------------
// element encoding

const f32buf = new DataView(new ArrayBuffer(4));

/** float → IEEE half bits, round-to-nearest-even (via float32, like torch). */
export function toF16Bits(v: number): number {
  f32buf.setFloat32(0, v);
  const x = f32buf.getUint32(0);
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1) !== 0)) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1) !== 0)) h++; // a carry may reach Inf: correct
  return sign | h;
}

/** float → bfloat16 bits, round-to-nearest-even (NaN stays NaN). */
export function toBf16Bits(v: number): number {
  f32buf.setFloat32(0, v);
  const x = f32buf.getUint32(0);
  if (Number.isNaN(v)) return ((x >>> 16) | 0x40) & 0xffff;
  const lsb = (x >>> 16) & 1;
  return ((x + 0x7fff + lsb) >>> 16) & 0xffff;
}

/** Little-endian bytes of `values` as `dtype` (i64 accepts numbers or bigints). */
export function encodeElements(dtype: DType, values: ArrayLike<number | bigint>): Uint8Array {
  const size = ITEMSIZE[dtype];
  const out = new Uint8Array(values.length * size);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < values.length; i++) {
    const raw = values[i] ?? 0;
    const o = i * size;
    if (dtype === "i64") {
      dv.setBigInt64(o, typeof raw === "bigint" ? raw : BigInt(Math.trunc(raw)), true);
      continue;
    }
    const v = Number(raw);
    switch (dtype) {
      case "f32": dv.setFloat32(o, v, true); break;
      case "f64": dv.setFloat64(o, v, true); break;
      case "f16": dv.setUint16(o, toF16Bits(v), true); break;
      case "bf16": dv.setUint16(o, toBf16Bits(v), true); break;
      case "i32": dv.setInt32(o, v, true); break;
      case "i16": dv.setInt16(o, v, true); break;
      case "i8": dv.setInt8(o, v); break;
      case "u8": dv.setUint8(o, v); break;
      case "bool": dv.setUint8(o, v ? 1 : 0); break;
    }
  }
  return out;
}

export function storageOf(dtype: DType, values: ArrayLike<number | bigint>, key?: string): RawStorage {
  return new RawStorage(dtype, encodeElements(dtype, values), key);
}

function contiguousStride(shape: readonly number[]): number[] {
  const stride = new Array<number>(shape.length);
  let acc = 1;
  for (let k = shape.length - 1; k >= 0; k--) {
    stride[k] = acc;
    acc *= shape[k] ?? 1;
  }
  return stride;
}

/** A contiguous tensor with its own storage; `shape` defaults to 1-D. */
export function tensorOf(dtype: DType, values: ArrayLike<number | bigint>, shape: readonly number[] = [values.length]): TensorSpec {
  return new TensorSpec(storageOf(dtype, values), 0, shape, contiguousStride(shape));
}

/** A view on an existing storage (contiguous strides unless given). */
export function viewOf(storage: RawStorage, storageOffset: number, shape: readonly number[], stride?: readonly number[]): TensorSpec {
  return new TensorSpec(storage, storageOffset, shape, stride ?? contiguousStride(shape));
}

/** numpy array as numpy (1.x or 2.x) pickles it under protocol 2. */
export function numpyArray(descr: string, shape: readonly number[], data: Uint8Array, opts: { numpy2?: boolean; fortran?: boolean } = {}): PyCall {
  const mod = opts.numpy2 ? "numpy._core.multiarray" : "numpy.core.multiarray";
  const m = /^([<>|=]?)(.*)$/.exec(descr);
  const order = m?.[1] || (descr.endsWith("1") || descr === "b1" ? "|" : "<");
  const dtype = pyCall("numpy", "dtype", [m?.[2] ?? descr, false, true], tuple(3, order, null, null, null, -1, -1, 0));
  return pyCall(mod, "_reconstruct", [pyGlobal("numpy", "ndarray"), tuple(0), new Uint8Array([98])],
    tuple(1, tuple(...shape), dtype, opts.fortran === true, data));
}

// ---------------------------------------------------------------------------------
// pickler (protocol 2)

const UTF8 = new TextEncoder();

class ByteSink {
  buf = new Uint8Array(1 << 16);
  len = 0;
  private dv = new DataView(this.buf.buffer);
  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const nb = new Uint8Array(cap);
    nb.set(this.buf.subarray(0, this.len));
    this.buf = nb;
    this.dv = new DataView(nb.buffer);
  }
  byte(b: number): void {
    this.ensure(1);
    this.buf[this.len++] = b;
  }
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }
  u16(v: number): void {
    this.ensure(2);
    this.dv.setUint16(this.len, v, true);
    this.len += 2;
  }
  u32(v: number): void {
    this.ensure(4);
    this.dv.setUint32(this.len, v, true);
    this.len += 4;
  }
  i32(v: number): void {
    this.ensure(4);
    this.dv.setInt32(this.len, v, true);
    this.len += 4;
  }
  u64(v: number): void {
    this.ensure(8);
    this.dv.setBigUint64(this.len, BigInt(v), true);
    this.len += 8;
  }
  f64be(v: number): void {
    this.ensure(8);
    this.dv.setFloat64(this.len, v, false);
    this.len += 8;
  }
  ascii(s: string): void {
    this.bytes(UTF8.encode(s));
  }
  result(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

export interface PickleOptions {
  /** Called for every storage in order of first use (assigns keys). */
  onStorage?: (s: RawStorage) => void;
}

function longBytes(v: bigint): Uint8Array {
  if (v === 0n) return new Uint8Array(0);
  const out: number[] = [];
  let x = v;
  for (;;) {
    const b = Number(x & 0xffn);
    out.push(b);
    x >>= 8n;
    if ((x === 0n && (b & 0x80) === 0) || (x === -1n && (b & 0x80) !== 0)) break;
  }
  return Uint8Array.from(out);
}

/** Pickle `value` with protocol 2 (torch.save's default). */
export function pickleDumps(value: unknown, opts: PickleOptions = {}): Uint8Array {
  const w = new ByteSink();
  const memo = new Map<unknown, number>();
  const strMemo = new Map<string, number>();
  const globalMemo = new Map<string, number>();
  const put = (): number => {
    const i = memo.size + strMemo.size + globalMemo.size;
    if (i < 256) {
      w.byte(0x71);
      w.byte(i);
    } else {
      w.byte(0x72);
      w.u32(i);
    }
    return i;
  };
  const get = (i: number): void => {
    if (i < 256) {
      w.byte(0x68);
      w.byte(i);
    } else {
      w.byte(0x6a);
      w.u32(i);
    }
  };
  const global = (module: string, name: string): void => {
    const k = `${module}\n${name}`;
    const m = globalMemo.get(k);
    if (m !== undefined) return get(m);
    w.byte(0x63);
    w.ascii(`${module}\n${name}\n`);
    globalMemo.set(k, put());
  };
  const int = (v: number | bigint): void => {
    if (typeof v === "number" && v >= 0 && v < 256) {
      w.byte(0x4b);
      w.byte(v);
    } else if (typeof v === "number" && v >= 0 && v < 65536) {
      w.byte(0x4d);
      w.u16(v);
    } else if (typeof v === "number" && v >= -0x80000000 && v <= 0x7fffffff) {
      w.byte(0x4a);
      w.i32(v);
    } else {
      const b = longBytes(typeof v === "bigint" ? v : BigInt(v));
      if (b.length < 256) {
        w.byte(0x8a);
        w.byte(b.length);
      } else {
        w.byte(0x8b);
        w.u32(b.length);
      }
      w.bytes(b);
    }
  };
  const float = (v: number): void => {
    w.byte(0x47);
    w.f64be(v);
  };
  const str = (s: string): void => {
    const m = strMemo.get(s);
    if (m !== undefined) return get(m);
    const b = UTF8.encode(s);
    w.byte(0x58);
    w.u32(b.length);
    w.bytes(b);
    strMemo.set(s, put());
  };
  const tupleOf = (items: readonly unknown[]): void => {
    if (items.length === 0) return w.byte(0x29);
    if (items.length <= 3) {
      for (const it of items) save(it);
      w.byte([0x85, 0x86, 0x87][items.length - 1] ?? 0);
      return;
    }
    w.byte(0x28);
    for (const it of items) save(it);
    w.byte(0x74);
  };
  const batched = (items: readonly unknown[], each: (x: unknown) => void, opMany: number, opOne: number): void => {
    for (let i = 0; i < items.length; i += 1000) {
      const chunk = items.slice(i, i + 1000);
      if (chunk.length === 1) {
        each(chunk[0]);
        w.byte(opOne);
      } else {
        w.byte(0x28);
        for (const it of chunk) each(it);
        w.byte(opMany);
      }
    }
  };
  const dictItems = (pairs: [unknown, unknown][]): void => {
    batched(pairs, (p) => {
      const [k, v] = p as [unknown, unknown];
      save(k);
      save(v);
    }, 0x75, 0x73);
  };
  const bytesValue = (b: Uint8Array): void => {
    if (b.length === 0) {
      global("__builtin__", "bytes");
      w.byte(0x29);
      w.byte(0x52);
      return;
    }
    global("_codecs", "encode");
    str(Buffer.from(b).toString("latin1"));
    str("latin1");
    w.byte(0x86);
    w.byte(0x52);
  };
  const tensor = (t: TensorSpec): void => {
    global("torch._utils", "_rebuild_tensor_v2");
    w.byte(0x28);
    const s = t.storage;
    opts.onStorage?.(s);
    w.byte(0x28);
    str("storage");
    global("torch", STORAGE_CLASS[s.dtype]);
    str(s.key ?? "0");
    str(s.location);
    int(s.numel);
    w.byte(0x74);
    w.byte(0x51); // BINPERSID
    int(t.storageOffset);
    tupleOf(t.shape);
    tupleOf(t.stride);
    w.byte(t.requiresGrad ? 0x88 : 0x89);
    global("collections", "OrderedDict");
    w.byte(0x29);
    w.byte(0x52);
    w.byte(0x74);
    w.byte(0x52);
  };

  function save(v: unknown): void {
    if (v === null || v === undefined) return w.byte(0x4e);
    if (v === true) return w.byte(0x88);
    if (v === false) return w.byte(0x89);
    if (typeof v === "number") return Number.isInteger(v) && !Object.is(v, -0) ? int(v) : float(v);
    if (typeof v === "bigint") return int(v);
    if (typeof v === "string") return str(v);
    if (v instanceof PyFloat) return float(v.value);
    if (v instanceof RawPickle) return w.bytes(v.bytes);
    if (v instanceof PyGlobalRef) return global(v.module, v.name);
    if (typeof v !== "object") throw new TypeError(`cannot pickle ${typeof v}`);
    const m = memo.get(v);
    if (m !== undefined) return get(m);
    if (v instanceof PyTuple) {
      tupleOf(v.items);
      memo.set(v, put());
      return;
    }
    if (v instanceof Uint8Array && !(v instanceof Uint8ClampedArray)) {
      bytesValue(v);
      memo.set(v, put());
      return;
    }
    if (v instanceof TensorSpec) {
      tensor(v);
      memo.set(v, put());
      return;
    }
    if (v instanceof PyCall) {
      save(v.fn);
      tupleOf(v.args);
      w.byte(v.newobj ? 0x81 : 0x52);
      memo.set(v, put());
      if (v.state !== undefined) {
        save(v.state);
        w.byte(0x62);
      }
      return;
    }
    if (Array.isArray(v) || ArrayBuffer.isView(v)) {
      const items: unknown[] = Array.isArray(v) ? v : Array.from(v as unknown as ArrayLike<number>);
      w.byte(0x5d);
      memo.set(v, put());
      batched(items, save, 0x65, 0x61);
      return;
    }
    if (v instanceof Set) {
      global("__builtin__", "set");
      w.byte(0x5d);
      for (const it of v) {
        save(it);
        w.byte(0x61);
      }
      w.byte(0x85);
      w.byte(0x52);
      memo.set(v, put());
      return;
    }
    if (v instanceof Map) {
      w.byte(0x7d);
      memo.set(v, put());
      dictItems([...v.entries()]);
      return;
    }
    w.byte(0x7d);
    memo.set(v, put());
    dictItems(Object.entries(v as Record<string, unknown>));
  }

  w.byte(0x80);
  w.byte(2);
  save(value);
  w.byte(0x2e);
  return w.result();
}

// ---------------------------------------------------------------------------------
// zip writer

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(b: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < b.length; i++) c = (CRC_TABLE[(c ^ (b[i] ?? 0)) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export interface ZipInput {
  name: string;
  data: Uint8Array | ZeroFill;
}

export interface ZipOptions {
  /** Force ZIP64 extra fields and end records even for small archives. */
  zip64?: boolean;
  /** Data alignment through the local extra field (torch: 64). */
  align?: number;
}

interface Chunk {
  offset: number;
  data: Uint8Array | ZeroFill;
}

function layoutZip(entries: readonly ZipInput[], opts: ZipOptions): { chunks: Chunk[]; total: number } {
  const align = opts.align ?? 64;
  const chunks: Chunk[] = [];
  const central: Uint8Array[] = [];
  let off = 0;
  let needZip64 = opts.zip64 === true || entries.length >= 0xffff;
  for (const e of entries) {
    const name = UTF8.encode(e.name);
    const size = e.data instanceof ZeroFill ? e.data.size : e.data.length;
    const crc = e.data instanceof ZeroFill ? 0 : crc32(e.data);
    const z64 = opts.zip64 === true || size >= 0xffffffff || off >= 0xffffffff;
    needZip64 ||= z64;
    const z64Local = z64 ? 20 : 0;
    const base = off + 30 + name.length + z64Local + 4;
    const pad = align > 1 ? (align - (base % align)) % align : 0;
    const extraLen = z64Local + 4 + pad;
    const h = new Uint8Array(30 + name.length + extraLen);
    const dv = new DataView(h.buffer);
    dv.setUint32(0, 0x04034b50, true);
    dv.setUint16(4, z64 ? 45 : 20, true);
    dv.setUint16(6, 0x0800, true);
    dv.setUint16(8, 0, true);
    dv.setUint32(14, crc, true);
    dv.setUint32(18, z64 ? 0xffffffff : size, true);
    dv.setUint32(22, z64 ? 0xffffffff : size, true);
    dv.setUint16(26, name.length, true);
    dv.setUint16(28, extraLen, true);
    h.set(name, 30);
    let x = 30 + name.length;
    if (z64) {
      dv.setUint16(x, 0x0001, true);
      dv.setUint16(x + 2, 16, true);
      dv.setBigUint64(x + 4, BigInt(size), true);
      dv.setBigUint64(x + 12, BigInt(size), true);
      x += 20;
    }
    dv.setUint16(x, 0x4246, true); // "FB" padding record, as torch writes
    dv.setUint16(x + 2, pad, true);
    h.fill(0x5a, x + 4, x + 4 + pad);
    chunks.push({ offset: off, data: h });
    chunks.push({ offset: off + h.length, data: e.data });

    const cExtra = z64 ? 28 : 0;
    const c = new Uint8Array(46 + name.length + cExtra);
    const cv = new DataView(c.buffer);
    cv.setUint32(0, 0x02014b50, true);
    cv.setUint16(4, z64 ? 45 : 20, true);
    cv.setUint16(6, z64 ? 45 : 20, true);
    cv.setUint16(8, 0x0800, true);
    cv.setUint32(16, crc, true);
    cv.setUint32(20, z64 ? 0xffffffff : size, true);
    cv.setUint32(24, z64 ? 0xffffffff : size, true);
    cv.setUint16(28, name.length, true);
    cv.setUint16(30, cExtra, true);
    cv.setUint32(42, z64 ? 0xffffffff : off, true);
    c.set(name, 46);
    if (z64) {
      const q = 46 + name.length;
      cv.setUint16(q, 0x0001, true);
      cv.setUint16(q + 2, 24, true);
      cv.setBigUint64(q + 4, BigInt(size), true);
      cv.setBigUint64(q + 12, BigInt(size), true);
      cv.setBigUint64(q + 20, BigInt(off), true);
    }
    central.push(c);
    off += h.length + size;
  }
  const cdOffset = off;
  let cdSize = 0;
  for (const c of central) {
    chunks.push({ offset: off, data: c });
    off += c.length;
    cdSize += c.length;
  }
  needZip64 ||= cdOffset >= 0xffffffff;
  if (needZip64) {
    const rec = new Uint8Array(56);
    const rv = new DataView(rec.buffer);
    rv.setUint32(0, 0x06064b50, true);
    rv.setBigUint64(4, 44n, true);
    rv.setUint16(12, 45, true);
    rv.setUint16(14, 45, true);
    rv.setBigUint64(24, BigInt(entries.length), true);
    rv.setBigUint64(32, BigInt(entries.length), true);
    rv.setBigUint64(40, BigInt(cdSize), true);
    rv.setBigUint64(48, BigInt(cdOffset), true);
    const loc = new Uint8Array(20);
    const lv = new DataView(loc.buffer);
    lv.setUint32(0, 0x07064b50, true);
    lv.setBigUint64(8, BigInt(off), true);
    lv.setUint32(16, 1, true);
    chunks.push({ offset: off, data: rec });
    chunks.push({ offset: off + 56, data: loc });
    off += 76;
  }
  const eocd = new Uint8Array(22);
  const ev = new DataView(eocd.buffer);
  ev.setUint32(0, 0x06054b50, true);
  ev.setUint16(8, needZip64 ? 0xffff : entries.length, true);
  ev.setUint16(10, needZip64 ? 0xffff : entries.length, true);
  ev.setUint32(12, needZip64 ? 0xffffffff : cdSize, true);
  ev.setUint32(16, needZip64 ? 0xffffffff : cdOffset, true);
  chunks.push({ offset: off, data: eocd });
  off += 22;
  return { chunks, total: off };
}

/** Zip archive bytes in memory (ZeroFill entries are materialised as zeros). */
export function zipBytes(entries: readonly ZipInput[], opts: ZipOptions = {}): Uint8Array {
  const { chunks, total } = layoutZip(entries, opts);
  const out = new Uint8Array(total);
  for (const c of chunks) if (c.data instanceof Uint8Array) out.set(c.data, c.offset);
  return out;
}

/** Write a zip archive with positional writes; ZeroFill entries stay sparse holes. */
export async function writeZip(path: string, entries: readonly ZipInput[], opts: ZipOptions = {}): Promise<void> {
  const { chunks, total } = layoutZip(entries, opts);
  const fh = await open(path, "w");
  try {
    for (const c of chunks) {
      if (c.data instanceof Uint8Array && c.data.length > 0) await fh.write(c.data, 0, c.data.length, c.offset);
    }
    await fh.truncate(total);
  } finally {
    await fh.close();
  }
}

// ---------------------------------------------------------------------------------
// .pt

export interface PtWriteOptions extends ZipOptions {
  /** Archive root prefix (torch: file name without extension, or "archive"). */
  prefix?: string;
  /** `byteorder` record; null omits it (torch < 2.1). Default "little". */
  byteorder?: "little" | "big" | null;
}

function swapped(b: Uint8Array, size: number): Uint8Array {
  const out = b.slice();
  if (size > 1) for (let i = 0; i + size <= out.length; i += size) out.subarray(i, i + size).reverse();
  return out;
}

/** The zip entries torch.save would produce for `root`. */
export function ptEntries(root: unknown, opts: PtWriteOptions = {}): ZipInput[] {
  const prefix = opts.prefix ?? "archive";
  const storages: RawStorage[] = [];
  const seen = new Set<RawStorage>();
  const used = new Set<string>();
  const pkl = pickleDumps(root, {
    onStorage: (s) => {
      if (seen.has(s)) return;
      seen.add(s);
      if (s.key === undefined) {
        let i = storages.length;
        while (used.has(String(i))) i++;
        s.key = String(i);
      }
      used.add(s.key);
      storages.push(s);
    },
  });
  const bo = opts.byteorder === undefined ? "little" : opts.byteorder;
  const entries: ZipInput[] = [{ name: `${prefix}/data.pkl`, data: pkl }];
  if (bo !== null) entries.push({ name: `${prefix}/byteorder`, data: UTF8.encode(bo) });
  for (const s of storages) {
    const data = bo === "big" && s.data instanceof Uint8Array ? swapped(s.data, ITEMSIZE[s.dtype]) : s.data;
    entries.push({ name: `${prefix}/data/${s.key ?? ""}`, data });
  }
  entries.push({ name: `${prefix}/version`, data: UTF8.encode("3\n") });
  return entries;
}

/** `.pt` bytes in memory. */
export function ptBytes(root: unknown, opts: PtWriteOptions = {}): Uint8Array {
  return zipBytes(ptEntries(root, opts), opts);
}

/** Write a `.pt` file (prefix defaults to the file name without directory/extension). */
export async function writePt(path: string, root: unknown, opts: PtWriteOptions = {}): Promise<void> {
  const base = path.split(/[\\/]/).pop() ?? "archive";
  const prefix = opts.prefix ?? base.replace(/\.[^.]*$/, "");
  await writeZip(path, ptEntries(root, { ...opts, prefix }), opts);
}
