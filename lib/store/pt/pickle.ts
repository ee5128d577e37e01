/**
 * A Python pickle VM (protocols 0–5) producing plain JS values.
 *
 * Value mapping (documented policy):
 *   int        → number; LONG values beyond ±2^53 → bigint (exactness over convenience)
 *   float      → number (NaN/±Inf kept)
 *   bool/None  → boolean / null
 *   str        → string (UTF-8; BINSTRING/SHORT_BINSTRING (py2 str) decoded as latin-1)
 *   bytes, bytearray → Uint8Array (a copy; never a view into the pickle buffer)
 *   tuple, list → Array
 *   dict (also OrderedDict/defaultdict/Counter) → plain object. Keys: str as is; int,
 *     bool, None, float → their JSON-style string ("12", "true", "null"); any other key
 *     (tuple, bytes, object) → a repr-like string, with the original keys kept in a
 *     `Map<string, unknown>` under the non-enumerable `PY_DICT_KEYS` symbol. A plain object
 *     (never a Map) is used because a dict's identity is memoised before its items arrive.
 *   set, frozenset → Set
 *   numpy arrays → `NdArray` (decoded row-major typed array); numpy scalars → number
 *     (boolean for bool, bigint for 64-bit ints beyond ±2^53)
 *   any other global → `PyGlobal`; calling it (REDUCE/NEWOBJ/NEWOBJ_EX/OBJ/INST) → an
 *     opaque `PyObject` recording the class name, args, kwargs and BUILD state. Unknown
 *     classes never abort unpickling.
 *
 * Hooks: `findClass(module, name)` may return a `PyCallable` (a JS function invoked for
 * REDUCE/NEWOBJ) or any value to stand for the global; `undefined` falls back to the
 * built-in table then `PyGlobal`. `persistentLoad(pid)` resolves PERSID/BINPERSID.
 * Objects with a `[PY_SETSTATE]` method receive BUILD states.
 *
 * Out-of-band buffers (NEXT_BUFFER/READONLY_BUFFER) and the extension registry
 * (EXT1/2/4) are not supported and raise `PickleError`.
 */
import { PtFormatError } from "./errors";
import {
  decodeContiguous,
  f16ToNumber,
  gatherStrided,
  type DType,
  type TensorArray,
} from "./tensor";

export class PickleError extends Error {
  readonly offset: number;
  constructor(message: string, offset: number) {
    super(`${message} (pickle offset ${offset})`);
    this.name = "PickleError";
    this.offset = offset;
  }
}

export type CallKind = "reduce" | "newobj" | "newobj_ex" | "obj" | "inst" | "reconstructor";
export type PyCallable = (args: unknown[], kwargs: Record<string, unknown> | null, kind: CallKind) => unknown;

export interface PickleHooks {
  findClass?: (module: string, name: string) => unknown;
  persistentLoad?: (pid: unknown) => unknown;
}

/** BUILD handler: objects that implement this receive the state. */
export const PY_SETSTATE: unique symbol = Symbol("pickle.setstate");
/** Original (non str/int) dict keys, see the header comment. */
export const PY_DICT_KEYS: unique symbol = Symbol("pickle.dictKeys");

interface SetStateTarget {
  [PY_SETSTATE](state: unknown): void;
}

/** A global that was referenced but not resolved (e.g. a class used as a value). */
export class PyGlobal {
  constructor(
    readonly module: string,
    readonly name: string,
  ) {}
  get qualname(): string {
    return `${this.module}.${this.name}`;
  }
}

/** An instance of a class this reader does not know. */
export class PyObject {
  /** Items APPENDed / SETITEM-ed into it (list and dict subclasses). */
  listItems?: unknown[];
  dictItems?: Map<unknown, unknown>;
  constructor(
    readonly __class__: string,
    readonly args: unknown[],
    readonly kwargs: Record<string, unknown> | null = null,
    public state: unknown = undefined,
    readonly via: CallKind = "reduce",
  ) {}
}

// ---------------------------------------------------------------------------------
// numpy

const NP_KINDS: Readonly<Record<string, DType>> = {
  f2: "f16", f4: "f32", f8: "f64", i1: "i8", i2: "i16", i4: "i32", i8: "i64", u1: "u8", b1: "bool",
};

/** `numpy.dtype(...)` (+ BUILD for the byte order). */
export class NpDtype implements SetStateTarget {
  /** '<' little, '>' big, '|' not applicable, '=' native. */
  byteorder = "=";
  readonly kind: string;
  readonly itemsize: number;
  constructor(readonly descr: string) {
    const m = /^([<>|=]?)([a-zA-Z?])(\d*)/.exec(descr);
    if (m?.[1]) this.byteorder = m[1];
    this.kind = m?.[2] === "?" ? "b" : (m?.[2] ?? "?");
    this.itemsize = m?.[2] === "?" ? 1 : Number(m?.[3] ?? "0") || 0;
  }
  /** numpy typestr, e.g. "<f4". */
  get str(): string {
    return `${this.byteorder === "=" ? "<" : this.byteorder}${this.kind}${this.itemsize}`;
  }
  get bigEndian(): boolean {
    return this.byteorder === ">";
  }
  [PY_SETSTATE](state: unknown): void {
    if (Array.isArray(state) && typeof state[1] === "string") this.byteorder = state[1];
  }
}

export type NdData = TensorArray | Uint16Array | Uint32Array | unknown[];

/**
 * A numpy ndarray. `data` is row-major (Fortran-ordered input is reordered); element
 * types follow tensor.ts (int64/uint64 → Float64Array, f16 → Float32Array). Unknown
 * element kinds (strings, datetimes, complex, records) keep the raw bytes in `data`
 * (a Uint8Array) with `decoded = false`; object arrays hold their Python objects.
 */
export class NdArray implements SetStateTarget {
  shape: number[] = [];
  dtype: NpDtype | null = null;
  data: NdData = new Uint8Array(0);
  decoded = false;
  constructor(readonly __class__ = "numpy.ndarray") {}

  [PY_SETSTATE](state: unknown): void {
    if (!Array.isArray(state)) return;
    // (version, shape, dtype, is_fortran, rawdata) or the legacy 4-tuple without version.
    const s = state.length >= 5 ? state.slice(1) : state;
    const [shape, dtype, fortran, raw] = s;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d))) return;
    this.shape = shape as number[];
    if (dtype instanceof NpDtype) this.dtype = dtype;
    const n = this.shape.reduce((a, b) => a * b, 1);
    if (Array.isArray(raw)) {
      this.data = reorder(raw, this.shape, fortran === true);
      this.decoded = true;
      return;
    }
    const bytes = typeof raw === "string" ? latin1Bytes(raw) : raw instanceof Uint8Array ? raw : null;
    if (bytes === null || this.dtype === null) return;
    const dt = this.dtype;
    if (bytes.length !== n * dt.itemsize) {
      throw new Error(`numpy array data has ${bytes.length} bytes, expected ${n} × ${dt.itemsize}`);
    }
    const flat = decodeNumpy(dt, bytes, n);
    if (flat === null) {
      this.data = bytes;
      return;
    }
    this.data = reorder(flat, this.shape, fortran === true);
    this.decoded = true;
  }
}

function reorder<T extends NdData>(flat: T, shape: number[], fortran: boolean): T {
  if (!fortran || shape.length < 2) return flat;
  const stride: number[] = [];
  let acc = 1;
  for (const d of shape) {
    stride.push(acc);
    acc *= d;
  }
  if (Array.isArray(flat)) {
    const out = new Array<unknown>(acc);
    const idx = new Array<number>(shape.length).fill(0);
    for (let i = 0; i < acc; i++) {
      let pos = 0;
      for (let k = 0; k < shape.length; k++) pos += (idx[k] ?? 0) * (stride[k] ?? 0);
      out[i] = flat[pos];
      for (let k = shape.length - 1; k >= 0; k--) {
        const v = (idx[k] ?? 0) + 1;
        if (v < (shape[k] ?? 1)) { idx[k] = v; break; }
        idx[k] = 0;
      }
    }
    return out as T;
  }
  return gatherStrided(flat as TensorArray, 0, 0, shape, stride) as T;
}

function swapBytes(bytes: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(bytes); // copy (Buffer#slice would be a view)
  if (size <= 1) return out;
  for (let i = 0; i + size <= out.length; i += size) out.subarray(i, i + size).reverse();
  return out;
}

/** Decode `n` numpy elements; null for kinds this reader keeps as raw bytes. */
function decodeNumpy(dt: NpDtype, raw: Uint8Array, n: number): NdData | null {
  const bytes = dt.bigEndian ? swapBytes(raw, dt.itemsize) : raw;
  const key = `${dt.kind}${dt.itemsize}`;
  const dtype = Object.hasOwn(NP_KINDS, key) ? NP_KINDS[key] : undefined;
  if (dtype !== undefined) return decodeContiguous(bytes, dtype, n);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (key === "u2") return Uint16Array.from({ length: n }, (_, i) => dv.getUint16(2 * i, true));
  if (key === "u4") return Uint32Array.from({ length: n }, (_, i) => dv.getUint32(4 * i, true));
  if (key === "u8") return Float64Array.from({ length: n }, (_, i) => dv.getUint32(8 * i + 4, true) * 4294967296 + dv.getUint32(8 * i, true));
  return null;
}

/** numpy scalar: `numpy.core.multiarray.scalar(dtype, bytes)`. */
function numpyScalar(args: unknown[]): unknown {
  const [dt, raw] = args;
  if (!(dt instanceof NpDtype)) return new PyObject("numpy.core.multiarray.scalar", args);
  if (dt.kind === "O") return raw;
  const b0 = typeof raw === "string" ? latin1Bytes(raw) : raw instanceof Uint8Array ? raw : null;
  if (b0 === null || b0.length < dt.itemsize) return new PyObject("numpy.core.multiarray.scalar", args);
  const b = dt.bigEndian ? swapBytes(b0.subarray(0, dt.itemsize), dt.itemsize) : b0;
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  switch (`${dt.kind}${dt.itemsize}`) {
    case "b1": return b[0] !== 0;
    case "f2": return f16ToNumber(dv.getUint16(0, true));
    case "f4": return dv.getFloat32(0, true);
    case "f8": return dv.getFloat64(0, true);
    case "i1": return dv.getInt8(0);
    case "i2": return dv.getInt16(0, true);
    case "i4": return dv.getInt32(0, true);
    case "u1": return dv.getUint8(0);
    case "u2": return dv.getUint16(0, true);
    case "u4": return dv.getUint32(0, true);
    case "i8": return narrowBig(dv.getBigInt64(0, true));
    case "u8": return narrowBig(dv.getBigUint64(0, true));
    default: return new PyObject("numpy.core.multiarray.scalar", args);
  }
}

// ---------------------------------------------------------------------------------
// helpers

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function narrowBig(v: bigint): number | bigint {
  return v <= MAX_SAFE && v >= -MAX_SAFE ? Number(v) : v;
}

function latin1Bytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 0xff;
  return out;
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (typeof x !== "object" || x === null) return false;
  const proto: unknown = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

function pyRepr(k: unknown): string {
  if (k === null) return "None";
  if (k === true) return "True";
  if (k === false) return "False";
  if (typeof k === "string") return `'${k}'`;
  if (typeof k === "number" || typeof k === "bigint") return String(k);
  if (Array.isArray(k)) return `(${k.map(pyRepr).join(", ")}${k.length === 1 ? "," : ""})`;
  if (k instanceof Uint8Array) return `b'${Buffer.from(k).toString("latin1")}'`;
  if (k instanceof PyGlobal) return k.qualname;
  if (k instanceof PyObject) return `<${k.__class__}>`;
  return String(k);
}

/** Dict key → plain-object property name (see header). */
function keyString(k: unknown): { key: string; simple: boolean } {
  if (typeof k === "string") return { key: k, simple: true };
  if (typeof k === "number") {
    if (Number.isFinite(k)) return { key: String(k), simple: true };
    return { key: Number.isNaN(k) ? "NaN" : k > 0 ? "Infinity" : "-Infinity", simple: true };
  }
  if (typeof k === "bigint") return { key: String(k), simple: true };
  if (typeof k === "boolean") return { key: k ? "true" : "false", simple: true };
  if (k === null) return { key: "null", simple: true };
  return { key: pyRepr(k), simple: false };
}

function setItem(target: unknown, k: unknown, v: unknown, pos: number): void {
  if (isPlainObject(target)) {
    const { key, simple } = keyString(k);
    if (key === "__proto__") Object.defineProperty(target, key, { value: v, enumerable: true, writable: true, configurable: true });
    else target[key] = v;
    if (!simple) {
      let keys = (target as { [PY_DICT_KEYS]?: Map<string, unknown> })[PY_DICT_KEYS];
      if (keys === undefined) {
        keys = new Map();
        Object.defineProperty(target, PY_DICT_KEYS, { value: keys, enumerable: false });
      }
      keys.set(key, k);
    }
  } else if (target instanceof Map) {
    target.set(k, v);
  } else if (target instanceof PyObject) {
    (target.dictItems ??= new Map()).set(k, v);
  } else {
    throw new PickleError(`SETITEM on a non-dict (${typeof target})`, pos);
  }
}

function appendItems(target: unknown, items: unknown[], pos: number): void {
  if (Array.isArray(target)) {
    for (const it of items) target.push(it);
  } else if (target instanceof Set) {
    for (const it of items) target.add(it);
  } else if (target instanceof PyObject) {
    const l = (target.listItems ??= []);
    for (const it of items) l.push(it);
  } else {
    throw new PickleError(`APPEND on a non-list (${typeof target})`, pos);
  }
}

function iterableItems(x: unknown): unknown[] {
  if (Array.isArray(x)) return x;
  if (x instanceof Set) return [...x];
  if (isPlainObject(x)) return Object.keys(x);
  if (typeof x === "string") return [...x];
  if (x instanceof Uint8Array) return [...x];
  return [];
}

function toBytes(args: unknown[]): Uint8Array | null {
  const [src, enc] = args;
  if (src === undefined) return new Uint8Array(0);
  if (src instanceof Uint8Array) return new Uint8Array(src);
  if (Array.isArray(src) && src.every((v) => Number.isInteger(v))) return Uint8Array.from(src as number[]);
  if (typeof src === "string") return encodeStr(src, typeof enc === "string" ? enc : "utf-8");
  return null;
}

function encodeStr(s: string, encoding: string): Uint8Array | null {
  const e = encoding.toLowerCase().replace(/[-_]/g, "");
  if (e === "latin1" || e === "iso88591" || e === "l1") {
    for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) return null;
    return latin1Bytes(s);
  }
  if (e === "utf8" || e === "ascii") return new Uint8Array(Buffer.from(s, "utf8"));
  return null;
}

function dictFrom(args: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const [src] = args;
  if (isPlainObject(src)) Object.assign(out, src);
  else if (Array.isArray(src)) {
    for (const pair of src) if (Array.isArray(pair) && pair.length === 2) setItem(out, pair[0], pair[1], 0);
  }
  return out;
}

function callableName(c: unknown): string {
  if (c instanceof PyGlobal) return c.qualname;
  if (typeof c === "function") return c.name || "<function>";
  if (typeof c === "object" && c !== null) {
    const n = (c as { name?: unknown; __class__?: unknown }).name ?? (c as { __class__?: unknown }).__class__;
    if (typeof n === "string") return n;
  }
  return "<unknown>";
}

/** Apply a pickled callable: JS function → call it, anything else → opaque PyObject. */
export function callPy(callable: unknown, args: unknown[], kwargs: Record<string, unknown> | null, kind: CallKind): unknown {
  if (typeof callable === "function") return (callable as PyCallable)(args, kwargs, kind);
  return new PyObject(callableName(callable), args, kwargs, undefined, kind);
}

function reconstructor(args: unknown[]): unknown {
  // copy_reg._reconstructor(cls, base, state): cls.__new__ (+ base.__init__(obj, state)).
  const [cls, base, state] = args;
  if (typeof cls === "function") return (cls as PyCallable)([], null, "reconstructor");
  const obj = new PyObject(callableName(cls), [], null, undefined, "reconstructor");
  if (base instanceof PyGlobal && base.name !== "object" && state !== null && state !== undefined) obj.args.push(state);
  return obj;
}

const NP_MODULES = new Set(["numpy.core.multiarray", "numpy._core.multiarray"]);

/** Built-in globals (applied after the `findClass` hook). */
export function builtinGlobal(module: string, name: string): unknown {
  if (module === "builtins" || module === "__builtin__") {
    switch (name) {
      case "set": return (a: unknown[]) => new Set(iterableItems(a[0]));
      case "frozenset": return (a: unknown[]) => new Set(iterableItems(a[0]));
      case "list": case "tuple": return (a: unknown[]) => iterableItems(a[0]).slice();
      case "dict": return (a: unknown[], kw: Record<string, unknown> | null) => Object.assign(dictFrom(a), kw ?? {});
      case "bytes": case "bytearray":
        return (a: unknown[]) => toBytes(a) ?? new PyObject(`builtins.${name}`, a);
      default: return undefined;
    }
  }
  if (module === "_codecs" && name === "encode") {
    return (a: unknown[]) => (typeof a[0] === "string" ? encodeStr(a[0], typeof a[1] === "string" ? a[1] : "utf-8") : null) ?? new PyObject("_codecs.encode", a);
  }
  if (module === "collections" && (name === "OrderedDict" || name === "defaultdict")) {
    return (a: unknown[]) => (name === "OrderedDict" ? dictFrom(a) : {});
  }
  if (module === "collections" && name === "Counter") return (a: unknown[]) => dictFrom(a);
  if ((module === "copy_reg" || module === "copyreg") && name === "_reconstructor") return reconstructor;
  if (NP_MODULES.has(module)) {
    if (name === "_reconstruct") {
      return (a: unknown[]) => new NdArray(a[0] instanceof PyGlobal ? a[0].qualname : "numpy.ndarray");
    }
    if (name === "scalar") return numpyScalar;
  }
  if (module === "numpy" && name === "dtype") {
    return (a: unknown[]) => (typeof a[0] === "string" ? new NpDtype(a[0]) : new PyObject("numpy.dtype", a));
  }
  return undefined;
}

// ---------------------------------------------------------------------------------
// the VM

/** Parse a Python repr'd byte string literal (protocol 0 STRING), latin-1 result. */
function unescapePyString(lit: string, pos: number): string {
  const q = lit[0];
  if (lit.length < 2 || (q !== "'" && q !== '"') || lit[lit.length - 1] !== q) throw new PickleError("bad STRING literal", pos);
  const body = lit.slice(1, -1);
  return body.replace(/\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)/g, (_, e: string) => {
    if (e[0] === "x") return String.fromCharCode(parseInt(e.slice(1), 16));
    if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8) & 0xff);
    const map: Record<string, string> = { n: "\n", r: "\r", t: "\t", "\\": "\\", "'": "'", '"': '"', a: "\x07", b: "\b", f: "\f", v: "\v" };
    return map[e] ?? `\\${e}`;
  });
}

/** raw-unicode-escape (protocol 0 UNICODE). */
function unescapeRawUnicode(s: string): string {
  return s.replace(/\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})/g, (_, u4?: string, u8?: string) =>
    String.fromCodePoint(parseInt(u4 ?? u8 ?? "0", 16)));
}

function parseIntText(s: string, pos: number): number | bigint {
  const t = s.endsWith("L") ? s.slice(0, -1) : s;
  if (!/^[+-]?\d+$/.test(t)) throw new PickleError(`bad integer literal ${JSON.stringify(s)}`, pos);
  return narrowBig(BigInt(t));
}

/**
 * Unpickle `data`. Throws `PickleError` on malformed/truncated input; never throws for
 * unknown classes.
 */
export function unpickle(data: Uint8Array, hooks: PickleHooks = {}): unknown {
  const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const len = buf.length;
  let pos = 0;
  let opPos = 0;
  const stack: unknown[] = [];
  const marks: number[] = [];
  const memo = new Map<number, unknown>();
  const globals = new Map<string, unknown>();

  const fail = (msg: string): never => {
    throw new PickleError(msg, opPos);
  };
  const need = (n: number): void => {
    if (pos + n > len) fail(`unexpected end of data (truncated pickle): need ${n} bytes`);
  };
  const pop = (): unknown => {
    if (stack.length === 0 || (marks.length > 0 && stack.length <= (marks[marks.length - 1] ?? 0))) fail("stack underflow");
    return stack.pop();
  };
  const top = (): unknown => {
    if (stack.length === 0) fail("stack underflow");
    return stack[stack.length - 1];
  };
  const popMark = (): unknown[] => {
    const m = marks.pop();
    if (m === undefined) fail("MARK expected");
    return stack.splice(m as number);
  };
  const u8 = (): number => {
    need(1);
    return buf[pos++] ?? 0;
  };
  const u32 = (): number => {
    need(4);
    const v = dv.getUint32(pos, true);
    pos += 4;
    return v;
  };
  const u64 = (): number => {
    need(8);
    const lo = dv.getUint32(pos, true);
    const hi = dv.getUint32(pos + 4, true);
    pos += 8;
    if (hi >= 0x200000) fail("length too large");
    return hi * 4294967296 + lo;
  };
  const line = (): string => {
    const end = buf.indexOf(10, pos);
    if (end < 0) fail("unexpected end of data (unterminated line)");
    const s = buf.toString("latin1", pos, end);
    pos = end + 1;
    return s.endsWith("\r") ? s.slice(0, -1) : s;
  };
  const utf8 = (n: number): string => {
    need(n);
    const s = buf.toString("utf8", pos, pos + n);
    pos += n;
    return s;
  };
  const bytes = (n: number): Uint8Array => {
    need(n);
    const b = new Uint8Array(buf.subarray(pos, pos + n)); // copy
    pos += n;
    return b;
  };
  const findGlobal = (module: string, name: string): unknown => {
    const k = `${module}\n${name}`;
    if (globals.has(k)) return globals.get(k);
    let v = hooks.findClass?.(module, name);
    if (v === undefined) v = builtinGlobal(module, name);
    if (v === undefined) v = new PyGlobal(module, name);
    globals.set(k, v);
    return v;
  };
  const persistent = (pid: unknown): unknown => {
    if (hooks.persistentLoad === undefined) fail("persistent id encountered but no persistentLoad hook");
    return hooks.persistentLoad?.(pid);
  };
  const getMemo = (i: number): unknown => {
    if (!memo.has(i)) fail(`memo key ${i} not found`);
    return memo.get(i);
  };
  const call = (callable: unknown, args: unknown, kwargs: unknown, kind: CallKind): unknown => {
    const a = Array.isArray(args) ? args : [args];
    const kw = isPlainObject(kwargs) ? kwargs : null;
    try {
      return callPy(callable, a, kw, kind);
    } catch (e) {
      if (e instanceof PickleError || e instanceof PtFormatError) throw e;
      throw new PickleError(`calling ${callableName(callable)} failed: ${e instanceof Error ? e.message : String(e)}`, opPos);
    }
  };

  for (;;) {
    if (pos >= len) fail("unexpected end of data (no STOP opcode; truncated pickle)");
    opPos = pos;
    const op = buf[pos++] ?? 0;
    switch (op) {
      case 0x80: // PROTO
        if (u8() > 5) fail("unsupported pickle protocol");
        break;
      case 0x95: // FRAME
        u64();
        break;
      case 0x2e: // STOP
        if (stack.length === 0) fail("STOP with an empty stack");
        return stack.pop();
      // ---- constants
      case 0x4e: stack.push(null); break; // NONE
      case 0x88: stack.push(true); break; // NEWTRUE
      case 0x89: stack.push(false); break; // NEWFALSE
      case 0x4a: // BININT
        need(4);
        stack.push(dv.getInt32(pos, true));
        pos += 4;
        break;
      case 0x4b: // BININT1
        if (pos >= len) fail("unexpected end of data (truncated pickle)");
        stack.push(buf[pos++]);
        break;
      case 0x4d: // BININT2
        need(2);
        stack.push(dv.getUint16(pos, true));
        pos += 2;
        break;
      case 0x8a: case 0x8b: { // LONG1, LONG4
        const n = op === 0x8a ? u8() : u32();
        need(n);
        if (n === 0) stack.push(0);
        else if (n <= 6) stack.push(buf.readIntLE(pos, n));
        else {
          let v = 0n;
          for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(buf[pos + i] ?? 0);
          if ((buf[pos + n - 1] ?? 0) & 0x80) v -= 1n << BigInt(8 * n);
          stack.push(narrowBig(v));
        }
        pos += n;
        break;
      }
      case 0x47: // BINFLOAT (big-endian)
        if (pos + 8 > len) fail("unexpected end of data (truncated pickle)");
        stack.push(dv.getFloat64(pos, false));
        pos += 8;
        break;
      case 0x49: { // INT (text); I01/I00 are protocol-0 booleans
        const s = line();
        if (s === "01") stack.push(true);
        else if (s === "00") stack.push(false);
        else stack.push(parseIntText(s, opPos));
        break;
      }
      case 0x4c: // LONG (text)
        stack.push(parseIntText(line(), opPos));
        break;
      case 0x46: { // FLOAT (text)
        const s = line().trim().toLowerCase();
        const v = s === "nan" ? Number.NaN : s === "inf" ? Infinity : s === "-inf" ? -Infinity : Number(s);
        if (Number.isNaN(v) && s !== "nan") fail(`bad float literal ${JSON.stringify(s)}`);
        stack.push(v);
        break;
      }
      // ---- strings and bytes
      case 0x58: stack.push(utf8(u32())); break; // BINUNICODE
      case 0x8c: stack.push(utf8(u8())); break; // SHORT_BINUNICODE
      case 0x8d: stack.push(utf8(u64())); break; // BINUNICODE8
      case 0x56: stack.push(unescapeRawUnicode(line())); break; // UNICODE (text)
      case 0x53: stack.push(unescapePyString(line(), opPos)); break; // STRING (text)
      case 0x54: { // BINSTRING (signed length)
        need(4);
        const n = dv.getInt32(pos, true);
        pos += 4;
        if (n < 0) fail("negative BINSTRING length");
        need(n);
        stack.push(buf.toString("latin1", pos, pos + n));
        pos += n;
        break;
      }
      case 0x55: { // SHORT_BINSTRING
        const n = u8();
        need(n);
        stack.push(buf.toString("latin1", pos, pos + n));
        pos += n;
        break;
      }
      case 0x42: stack.push(bytes(u32())); break; // BINBYTES
      case 0x43: stack.push(bytes(u8())); break; // SHORT_BINBYTES
      case 0x8e: stack.push(bytes(u64())); break; // BINBYTES8
      case 0x96: stack.push(bytes(u64())); break; // BYTEARRAY8
      case 0x97: case 0x98: fail("out-of-band pickle buffers are not supported"); break;
      // ---- containers
      case 0x28: marks.push(stack.length); break; // MARK
      case 0x29: stack.push([]); break; // EMPTY_TUPLE
      case 0x5d: stack.push([]); break; // EMPTY_LIST
      case 0x7d: stack.push({}); break; // EMPTY_DICT
      case 0x8f: stack.push(new Set()); break; // EMPTY_SET
      case 0x74: case 0x6c: stack.push(popMark()); break; // TUPLE, LIST
      case 0x85: stack.push([pop()]); break; // TUPLE1
      case 0x86: { // TUPLE2
        const b = pop();
        const a = pop();
        stack.push([a, b]);
        break;
      }
      case 0x87: { // TUPLE3
        const c = pop();
        const b = pop();
        const a = pop();
        stack.push([a, b, c]);
        break;
      }
      case 0x64: { // DICT
        const items = popMark();
        const d: Record<string, unknown> = {};
        for (let i = 0; i + 1 < items.length; i += 2) setItem(d, items[i], items[i + 1], opPos);
        stack.push(d);
        break;
      }
      case 0x91: stack.push(new Set(popMark())); break; // FROZENSET
      case 0x61: { // APPEND
        const v = pop();
        appendItems(top(), [v], opPos);
        break;
      }
      case 0x65: case 0x90: { // APPENDS, ADDITEMS
        const m = marks.pop();
        if (m === undefined || m === 0) fail("MARK expected");
        const target = stack[(m as number) - 1];
        if (Array.isArray(target)) {
          // hot path (token lists): copy straight from the stack, no temporary array
          for (let i = m as number; i < stack.length; i++) target.push(stack[i]);
          stack.length = m as number;
        } else {
          appendItems(target, stack.splice(m as number), opPos);
        }
        break;
      }
      case 0x73: { // SETITEM
        const v = pop();
        const k = pop();
        setItem(top(), k, v, opPos);
        break;
      }
      case 0x75: { // SETITEMS
        const m = marks.pop();
        if (m === undefined || m === 0) fail("MARK expected");
        const target = stack[(m as number) - 1];
        if (((stack.length - (m as number)) & 1) !== 0) fail("odd number of items for SETITEMS");
        for (let i = m as number; i < stack.length; i += 2) setItem(target, stack[i], stack[i + 1], opPos);
        stack.length = m as number;
        break;
      }
      // ---- stack manipulation and memo
      case 0x32: stack.push(top()); break; // DUP
      case 0x30: // POP
        if (marks.length > 0 && marks[marks.length - 1] === stack.length) marks.pop();
        else pop();
        break;
      case 0x31: popMark(); break; // POP_MARK
      case 0x67: stack.push(getMemo(Number(line()))); break; // GET
      case 0x68: { // BINGET
        if (pos >= len) fail("unexpected end of data (truncated pickle)");
        const i = buf[pos++] ?? 0;
        const v = memo.get(i);
        stack.push(v === undefined ? getMemo(i) : v);
        break;
      }
      case 0x6a: stack.push(getMemo(u32())); break; // LONG_BINGET
      case 0x70: { // PUT
        const i = Number(line());
        if (!Number.isInteger(i) || i < 0) fail("bad PUT index");
        memo.set(i, top());
        break;
      }
      case 0x71: memo.set(u8(), top()); break; // BINPUT
      case 0x72: memo.set(u32(), top()); break; // LONG_BINPUT
      case 0x94: memo.set(memo.size, top()); break; // MEMOIZE
      // ---- objects
      case 0x63: { // GLOBAL
        const module = line();
        const name = line();
        stack.push(findGlobal(module, name));
        break;
      }
      case 0x93: { // STACK_GLOBAL
        const name = pop();
        const module = pop();
        if (typeof module !== "string" || typeof name !== "string") fail("STACK_GLOBAL needs two strings");
        stack.push(findGlobal(module as string, name as string));
        break;
      }
      case 0x52: { // REDUCE
        const args = pop();
        const callable = pop();
        stack.push(call(callable, args, null, "reduce"));
        break;
      }
      case 0x81: { // NEWOBJ
        const args = pop();
        const cls = pop();
        stack.push(call(cls, args, null, "newobj"));
        break;
      }
      case 0x92: { // NEWOBJ_EX
        const kwargs = pop();
        const args = pop();
        const cls = pop();
        stack.push(call(cls, args, kwargs, "newobj_ex"));
        break;
      }
      case 0x6f: { // OBJ
        const items = popMark();
        if (items.length === 0) fail("OBJ without a class");
        stack.push(call(items[0], items.slice(1), null, "obj"));
        break;
      }
      case 0x69: { // INST
        const module = line();
        const name = line();
        const args = popMark();
        stack.push(call(findGlobal(module, name), args, null, "inst"));
        break;
      }
      case 0x62: { // BUILD
        const state = pop();
        const obj = top();
        if (typeof obj === "object" && obj !== null && typeof (obj as Partial<SetStateTarget>)[PY_SETSTATE] === "function") {
          try {
            (obj as SetStateTarget)[PY_SETSTATE](state);
          } catch (e) {
            fail(`BUILD failed: ${e instanceof Error ? e.message : String(e)}`);
          }
        } else if (obj instanceof PyObject) {
          if (isPlainObject(obj.state) && isPlainObject(state)) Object.assign(obj.state, state);
          else obj.state = state;
        } else if (isPlainObject(obj) && isPlainObject(state)) {
          Object.assign(obj, state);
        }
        break;
      }
      case 0x51: stack.push(persistent(pop())); break; // BINPERSID
      case 0x50: stack.push(persistent(line())); break; // PERSID
      case 0x82: case 0x83: case 0x84: fail("pickle extension registry (EXT1/2/4) is not supported"); break;
      default:
        fail(`unknown opcode 0x${op.toString(16).padStart(2, "0")}`);
    }
  }
}
