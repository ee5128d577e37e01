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
  /**
   * Projection for callers that only need the length of some big lists: a list that is
   * the value of one of these str keys inside a dict literal (a SETITEMS batch) is not
   * materialised — it unpickles as a `SkippedList` that only counts its items.
   */
  skipListItems?: ReadonlySet<string>;
}

/** A list whose items were dropped by `PickleHooks.skipListItems`; `length` is its item count. */
export class SkippedList {
  length = 0;
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
    const s: unknown[] = state.length >= 5 ? state.slice(1) : state;
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
  if (k === undefined) return "undefined";
  if (typeof k === "symbol") return k.toString();
  return Object.prototype.toString.call(k); // other objects: "[object …]", as String() gave
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
  if (typeof k === "string" && k !== "__proto__" && isPlainObject(target)) {
    target[k] = v; // the common case: a str key (no repr, no key map)
    return;
  }
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
  if (target instanceof SkippedList) {
    target.length += items.length;
  } else if (Array.isArray(target)) {
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

/**
 * A name read from the pickle (GLOBAL module/class), fit for an error message: dotted
 * identifiers pass, anything else is replaced — messages describe structure, never
 * echo arbitrary bytes of the file.
 */
function messageLabel(name: string): string {
  return /^[A-Za-z_<][\w.<>]{0,119}$/.test(name) ? name : "<unprintable name>";
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
  if (!/^[+-]?\d+$/.test(t)) throw new PickleError(`bad integer literal (${s.length} characters)`, pos);
  return narrowBig(BigInt(t));
}

/**
 * Speculative fast path of `MARK <primitive items> APPENDS` into `target` (the stack top
 * at MARK): BININT1/BININT2/BININT/LONG1 (≤ 6 bytes)/BINFLOAT/NONE/NEWTRUE/NEWFALSE
 * items are appended directly, in one tight loop with no per-item allocation. Returns
 * the position after APPENDS, or −1 — with `target` restored — on any other opcode or
 * at the end of the data, so the general VM re-executes from MARK (same result, and
 * the same errors for truncated input).
 */
function appendPrimitiveBatch(buf: Buffer, dv: DataView, start: number, len: number, target: unknown[]): number {
  const base = target.length;
  let p = start;
  while (p < len) {
    const op = buf[p] as number;
    if (op === 0x4b) { // BININT1
      if (p + 2 > len) break;
      target.push(buf[p + 1]);
      p += 2;
    } else if (op === 0x4d) { // BININT2
      if (p + 3 > len) break;
      target.push(dv.getUint16(p + 1, true));
      p += 3;
    } else if (op === 0x4a) { // BININT
      if (p + 5 > len) break;
      target.push(dv.getInt32(p + 1, true));
      p += 5;
    } else if (op === 0x47) { // BINFLOAT
      if (p + 9 > len) break;
      target.push(dv.getFloat64(p + 1, false));
      p += 9;
    } else if (op === 0x65) { // APPENDS
      return p + 1;
    } else if (op === 0x4e) { // NONE
      target.push(null);
      p += 1;
    } else if (op === 0x88 || op === 0x89) { // NEWTRUE, NEWFALSE
      target.push(op === 0x88);
      p += 1;
    } else if (op === 0x8a) { // LONG1
      if (p + 2 > len) break;
      const n = buf[p + 1] as number;
      if (n > 6 || p + 2 + n > len) break;
      target.push(n === 0 ? 0 : buf.readIntLE(p + 2, n));
      p += 2 + n;
    } else {
      break;
    }
  }
  target.length = base;
  return -1;
}

/** Mutable VM state shared by the hot loop and the out-of-line opcode handlers. */
interface Vm {
  readonly buf: Buffer;
  readonly dv: DataView;
  readonly len: number;
  /** Read position (synchronised with the hot loop's local around out-of-line calls). */
  pos: number;
  /** Position of the opcode being executed (error offsets). */
  opPos: number;
  readonly stack: unknown[];
  readonly marks: number[];
  /** Memo as a (normally dense) array; a missing key is a hole (`!(i in memo)`). */
  readonly memo: unknown[];
  memoSize: number;
  readonly globals: Map<string, unknown>;
  readonly hooks: PickleHooks;
}

function vmFail(vm: Vm, msg: string): never {
  throw new PickleError(msg, vm.opPos);
}

function vmNeed(vm: Vm, n: number): void {
  if (vm.pos + n > vm.len) vmFail(vm, `unexpected end of data (truncated pickle): need ${n} bytes`);
}

/** Pop with the mark floor check (a pop below the innermost MARK is an underflow). */
function vmPop(vm: Vm): unknown {
  const { stack, marks } = vm;
  if (stack.length === 0 || (marks.length > 0 && stack.length <= (marks[marks.length - 1] ?? 0))) vmFail(vm, "stack underflow");
  return stack.pop();
}

function vmTop(vm: Vm): unknown {
  const { stack } = vm;
  if (stack.length === 0) vmFail(vm, "stack underflow");
  return stack[stack.length - 1];
}

function vmPopMark(vm: Vm): unknown[] {
  const m = vm.marks.pop();
  if (m === undefined) vmFail(vm, "MARK expected");
  return vm.stack.splice(m);
}

function vmU8(vm: Vm): number {
  vmNeed(vm, 1);
  return vm.buf[vm.pos++] ?? 0;
}

function vmU32(vm: Vm): number {
  vmNeed(vm, 4);
  const v = vm.dv.getUint32(vm.pos, true);
  vm.pos += 4;
  return v;
}

function vmU64(vm: Vm): number {
  vmNeed(vm, 8);
  const lo = vm.dv.getUint32(vm.pos, true);
  const hi = vm.dv.getUint32(vm.pos + 4, true);
  vm.pos += 8;
  if (hi >= 0x200000) vmFail(vm, "length too large");
  return hi * 4294967296 + lo;
}

function vmLine(vm: Vm): string {
  const end = vm.buf.indexOf(10, vm.pos);
  if (end < 0) vmFail(vm, "unexpected end of data (unterminated line)");
  const s = vm.buf.toString("latin1", vm.pos, end);
  vm.pos = end + 1;
  return s.endsWith("\r") ? s.slice(0, -1) : s;
}

function vmUtf8(vm: Vm, n: number): string {
  vmNeed(vm, n);
  const s = vm.buf.toString("utf8", vm.pos, vm.pos + n);
  vm.pos += n;
  return s;
}

function vmBytes(vm: Vm, n: number): Uint8Array {
  vmNeed(vm, n);
  const b = new Uint8Array(vm.buf.subarray(vm.pos, vm.pos + n)); // copy
  vm.pos += n;
  return b;
}

function vmGetMemo(vm: Vm, i: number): unknown {
  const v = vm.memo[i];
  if (v === undefined && !(i in vm.memo)) vmFail(vm, `memo key ${i} not found`);
  return v;
}

function vmSetMemo(vm: Vm, i: number, v: unknown): void {
  const memo = vm.memo;
  if (i >= memo.length || (memo[i] === undefined && !(i in memo))) vm.memoSize++;
  memo[i] = v;
}

function vmFindGlobal(vm: Vm, module: string, name: string): unknown {
  const k = `${module}\n${name}`;
  if (vm.globals.has(k)) return vm.globals.get(k);
  let v = vm.hooks.findClass?.(module, name);
  if (v === undefined) v = builtinGlobal(module, name);
  if (v === undefined) v = new PyGlobal(module, name);
  vm.globals.set(k, v);
  return v;
}

function vmPersistent(vm: Vm, pid: unknown): unknown {
  if (vm.hooks.persistentLoad === undefined) vmFail(vm, "persistent id encountered but no persistentLoad hook");
  return vm.hooks.persistentLoad?.(pid);
}

function vmCall(vm: Vm, callable: unknown, args: unknown, kwargs: unknown, kind: CallKind): unknown {
  const a = Array.isArray(args) ? args : [args];
  const kw = isPlainObject(kwargs) ? kwargs : null;
  try {
    return callPy(callable, a, kw, kind);
  } catch (e) {
    if (e instanceof PickleError || e instanceof PtFormatError) throw e;
    throw new PickleError(`calling ${messageLabel(callableName(callable))} failed: ${e instanceof Error ? e.message : String(e)}`, vm.opPos);
  }
}

/**
 * The less frequent opcodes, out of line so that the hot loop in `unpickle` stays small
 * (it reaches optimised code sooner in a fresh process). Reads and advances `vm.pos`.
 */
function rareOp(vm: Vm, op: number): void {
  const { buf, dv, stack } = vm;
  switch (op) {
    case 0x80: // PROTO
      if (vmU8(vm) > 5) vmFail(vm, "unsupported pickle protocol");
      return;
    case 0x95: // FRAME
      vmU64(vm);
      return;
    case 0x8a: case 0x8b: { // LONG1, LONG4
      const n = op === 0x8a ? vmU8(vm) : vmU32(vm);
      vmNeed(vm, n);
      const pos = vm.pos;
      if (n === 0) stack.push(0);
      else if (n <= 6) stack.push(buf.readIntLE(pos, n));
      else {
        let v = 0n;
        for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(buf[pos + i] ?? 0);
        if ((buf[pos + n - 1] ?? 0) & 0x80) v -= 1n << BigInt(8 * n);
        stack.push(narrowBig(v));
      }
      vm.pos += n;
      return;
    }
    case 0x49: { // INT (text); I01/I00 are protocol-0 booleans
      const s = vmLine(vm);
      if (s === "01") stack.push(true);
      else if (s === "00") stack.push(false);
      else stack.push(parseIntText(s, vm.opPos));
      return;
    }
    case 0x4c: // LONG (text)
      stack.push(parseIntText(vmLine(vm), vm.opPos));
      return;
    case 0x46: { // FLOAT (text)
      const s = vmLine(vm).trim().toLowerCase();
      const v = s === "nan" ? Number.NaN : s === "inf" ? Infinity : s === "-inf" ? -Infinity : Number(s);
      if (Number.isNaN(v) && s !== "nan") vmFail(vm, `bad float literal (${s.length} characters)`);
      stack.push(v);
      return;
    }
    // ---- strings and bytes
    case 0x8d: stack.push(vmUtf8(vm, vmU64(vm))); return; // BINUNICODE8
    case 0x56: stack.push(unescapeRawUnicode(vmLine(vm))); return; // UNICODE (text)
    case 0x53: stack.push(unescapePyString(vmLine(vm), vm.opPos)); return; // STRING (text)
    case 0x54: { // BINSTRING (signed length)
      vmNeed(vm, 4);
      const n = dv.getInt32(vm.pos, true);
      vm.pos += 4;
      if (n < 0) vmFail(vm, "negative BINSTRING length");
      vmNeed(vm, n);
      stack.push(buf.toString("latin1", vm.pos, vm.pos + n));
      vm.pos += n;
      return;
    }
    case 0x55: { // SHORT_BINSTRING
      const n = vmU8(vm);
      vmNeed(vm, n);
      stack.push(buf.toString("latin1", vm.pos, vm.pos + n));
      vm.pos += n;
      return;
    }
    case 0x42: stack.push(vmBytes(vm, vmU32(vm))); return; // BINBYTES
    case 0x43: stack.push(vmBytes(vm, vmU8(vm))); return; // SHORT_BINBYTES
    case 0x8e: stack.push(vmBytes(vm, vmU64(vm))); return; // BINBYTES8
    case 0x96: stack.push(vmBytes(vm, vmU64(vm))); return; // BYTEARRAY8
    case 0x97: case 0x98: vmFail(vm, "out-of-band pickle buffers are not supported"); return;
    // ---- containers
    case 0x8f: stack.push(new Set()); return; // EMPTY_SET
    case 0x64: { // DICT
      const items = vmPopMark(vm);
      const d: Record<string, unknown> = {};
      for (let i = 0; i + 1 < items.length; i += 2) setItem(d, items[i], items[i + 1], vm.opPos);
      stack.push(d);
      return;
    }
    case 0x91: stack.push(new Set(vmPopMark(vm))); return; // FROZENSET
    case 0x90: { // ADDITEMS
      const m = vm.marks.pop();
      if (m === undefined || m === 0) vmFail(vm, "MARK expected");
      appendItems(stack[(m) - 1], stack.splice(m), vm.opPos);
      return;
    }
    // ---- stack manipulation and memo
    case 0x32: stack.push(vmTop(vm)); return; // DUP
    case 0x30: { // POP
      const marks = vm.marks;
      if (marks.length > 0 && marks[marks.length - 1] === stack.length) marks.pop();
      else vmPop(vm);
      return;
    }
    case 0x31: vmPopMark(vm); return; // POP_MARK
    case 0x67: stack.push(vmGetMemo(vm, Number(vmLine(vm)))); return; // GET
    case 0x70: { // PUT
      const i = Number(vmLine(vm));
      if (!Number.isInteger(i) || i < 0) vmFail(vm, "bad PUT index");
      vmSetMemo(vm, i, vmTop(vm));
      return;
    }
    case 0x94: vmSetMemo(vm, vm.memoSize, vmTop(vm)); return; // MEMOIZE
    // ---- objects
    case 0x63: { // GLOBAL
      const module = vmLine(vm);
      const name = vmLine(vm);
      stack.push(vmFindGlobal(vm, module, name));
      return;
    }
    case 0x93: { // STACK_GLOBAL
      const name = vmPop(vm);
      const module = vmPop(vm);
      if (typeof module !== "string" || typeof name !== "string") vmFail(vm, "STACK_GLOBAL needs two strings");
      stack.push(vmFindGlobal(vm, module, name));
      return;
    }
    case 0x81: { // NEWOBJ
      const args = vmPop(vm);
      const cls = vmPop(vm);
      stack.push(vmCall(vm, cls, args, null, "newobj"));
      return;
    }
    case 0x92: { // NEWOBJ_EX
      const kwargs = vmPop(vm);
      const args = vmPop(vm);
      const cls = vmPop(vm);
      stack.push(vmCall(vm, cls, args, kwargs, "newobj_ex"));
      return;
    }
    case 0x6f: { // OBJ
      const items = vmPopMark(vm);
      if (items.length === 0) vmFail(vm, "OBJ without a class");
      stack.push(vmCall(vm, items[0], items.slice(1), null, "obj"));
      return;
    }
    case 0x69: { // INST
      const module = vmLine(vm);
      const name = vmLine(vm);
      const args = vmPopMark(vm);
      stack.push(vmCall(vm, vmFindGlobal(vm, module, name), args, null, "inst"));
      return;
    }
    case 0x62: { // BUILD
      const state = vmPop(vm);
      const obj = vmTop(vm);
      if (typeof obj === "object" && obj !== null && typeof (obj as Partial<SetStateTarget>)[PY_SETSTATE] === "function") {
        try {
          (obj as SetStateTarget)[PY_SETSTATE](state);
        } catch (e) {
          vmFail(vm, `BUILD failed: ${e instanceof Error ? e.message : String(e)}`);
        }
      } else if (obj instanceof PyObject) {
        if (isPlainObject(obj.state) && isPlainObject(state)) Object.assign(obj.state, state);
        else obj.state = state;
      } else if (isPlainObject(obj) && isPlainObject(state)) {
        Object.assign(obj, state);
      }
      return;
    }
    case 0x50: stack.push(vmPersistent(vm, vmLine(vm))); return; // PERSID
    case 0x82: case 0x83: case 0x84: vmFail(vm, "pickle extension registry (EXT1/2/4) is not supported"); return;
    default:
      vmFail(vm, `unknown opcode 0x${op.toString(16).padStart(2, "0")}`);
  }
}

/**
 * Count-only twin of `appendPrimitiveBatch` for a `SkippedList`: returns the position
 * after APPENDS and adds the item count, or −1 (nothing counted) on any other opcode.
 */
function skipPrimitiveBatch(buf: Buffer, start: number, len: number, target: SkippedList): number {
  let p = start;
  let n = 0;
  while (p < len) {
    const op = buf[p] as number;
    let w: number;
    if (op === 0x4b) w = 2; // BININT1
    else if (op === 0x4d) w = 3; // BININT2
    else if (op === 0x4a) w = 5; // BININT
    else if (op === 0x47) w = 9; // BINFLOAT
    else if (op === 0x4e || op === 0x88 || op === 0x89) w = 1; // NONE, NEWTRUE, NEWFALSE
    else if (op === 0x8a && p + 1 < len && (buf[p + 1] as number) <= 6) w = 2 + (buf[p + 1] as number); // LONG1
    else if (op === 0x65) { // APPENDS
      target.length += n;
      return p + 1;
    } else break;
    if (p + w > len) break;
    p += w;
    n++;
  }
  return -1;
}

/** EMPTY_LIST as the pending value of a skipped key in a SETITEMS batch (see `skipListItems`). */
function isSkippedSlot(stack: unknown[], marks: number[], skip: ReadonlySet<string>): boolean {
  const m = marks.length > 0 ? (marks[marks.length - 1] as number) : -1;
  if (m < 1 || ((stack.length - m) & 1) !== 1) return false;
  const key = stack[stack.length - 1];
  return typeof key === "string" && skip.has(key) && isPlainObject(stack[m - 1]);
}

/**
 * Unpickle `data`. Throws `PickleError` on malformed/truncated input; never throws for
 * unknown classes.
 *
 * The loop below executes the opcodes that dominate torch pickles (ints, floats, short
 * strings, memo get/put, tuples, list/dict building, REDUCE, BINPERSID) inline with the
 * read position in a local; everything else goes through `rareOp`.
 */
export function unpickle(data: Uint8Array, hooks: PickleHooks = {}): unknown {
  const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const len = buf.length;
  const stack: unknown[] = [];
  const marks: number[] = [];
  const memo: unknown[] = [];
  const vm: Vm = { buf, dv, len, pos: 0, opPos: 0, stack, marks, memo, memoSize: 0, globals: new Map(), hooks };
  const skip = hooks.skipListItems && hooks.skipListItems.size > 0 ? hooks.skipListItems : null;
  let pos = 0;

  for (;;) {
    if (pos >= len) {
      vm.opPos = pos;
      vmFail(vm, "unexpected end of data (no STOP opcode; truncated pickle)");
    }
    const opPos = pos;
    const op = buf[pos++] as number;
    switch (op) {
      case 0x4b: // BININT1
        if (pos >= len) break;
        stack.push(buf[pos++]);
        continue;
      case 0x68: { // BINGET
        if (pos >= len) break;
        const i = buf[pos++] as number;
        const v = memo[i];
        if (v === undefined && !(i in memo)) {
          vm.opPos = opPos;
          vmFail(vm, `memo key ${i} not found`);
        }
        stack.push(v);
        continue;
      }
      case 0x6a: { // LONG_BINGET
        if (pos + 4 > len) break;
        const i = dv.getUint32(pos, true);
        pos += 4;
        const v = memo[i];
        if (v === undefined && !(i in memo)) {
          vm.opPos = opPos;
          vmFail(vm, `memo key ${i} not found`);
        }
        stack.push(v);
        continue;
      }
      case 0x71: // BINPUT
      case 0x72: { // LONG_BINPUT
        const w = op === 0x71 ? 1 : 4;
        if (pos + w > len) break;
        const i = w === 1 ? (buf[pos] as number) : dv.getUint32(pos, true);
        pos += w;
        if (stack.length === 0) {
          vm.opPos = opPos;
          vmFail(vm, "stack underflow");
        }
        if (i >= memo.length || (memo[i] === undefined && !(i in memo))) vm.memoSize++;
        memo[i] = stack[stack.length - 1];
        continue;
      }
      case 0x28: { // MARK
        // Hot path: a batch of primitive list items (token ids, log-probs) between MARK
        // and APPENDS goes straight into the list, skipping the stack.
        const target = stack.length > 0 ? stack[stack.length - 1] : undefined;
        if (Array.isArray(target)) {
          const next = appendPrimitiveBatch(buf, dv, pos, len, target);
          if (next >= 0) {
            pos = next;
            continue;
          }
        } else if (target instanceof SkippedList) {
          const next = skipPrimitiveBatch(buf, pos, len, target);
          if (next >= 0) {
            pos = next;
            continue;
          }
        }
        marks.push(stack.length);
        continue;
      }
      case 0x4d: // BININT2
        if (pos + 2 > len) break;
        stack.push(dv.getUint16(pos, true));
        pos += 2;
        continue;
      case 0x4a: // BININT
        if (pos + 4 > len) break;
        stack.push(dv.getInt32(pos, true));
        pos += 4;
        continue;
      case 0x47: // BINFLOAT (big-endian)
        if (pos + 8 > len) break;
        stack.push(dv.getFloat64(pos, false));
        pos += 8;
        continue;
      case 0x4e: stack.push(null); continue; // NONE
      case 0x88: stack.push(true); continue; // NEWTRUE
      case 0x89: stack.push(false); continue; // NEWFALSE
      case 0x58: // BINUNICODE
      case 0x8c: { // SHORT_BINUNICODE
        const w = op === 0x8c ? 1 : 4;
        if (pos + w > len) break;
        const n = w === 1 ? (buf[pos] as number) : dv.getUint32(pos, true);
        pos += w;
        if (pos + n > len) {
          vm.opPos = opPos;
          vm.pos = pos;
          vmNeed(vm, n);
        }
        stack.push(n === 0 ? "" : buf.toString("utf8", pos, pos + n));
        pos += n;
        continue;
      }
      case 0x29: stack.push([]); continue; // EMPTY_TUPLE
      case 0x5d: // EMPTY_LIST
        stack.push(skip !== null && isSkippedSlot(stack, marks, skip) ? new SkippedList() : []);
        continue;
      case 0x7d: stack.push({}); continue; // EMPTY_DICT
      case 0x74: case 0x6c: { // TUPLE, LIST
        const m = marks.pop();
        if (m === undefined) {
          vm.opPos = opPos;
          vmFail(vm, "MARK expected");
        }
        stack.push(stack.splice(m));
        continue;
      }
      case 0x85: case 0x86: case 0x87: { // TUPLE1, TUPLE2, TUPLE3
        const k = op - 0x84;
        const floor = marks.length > 0 ? (marks[marks.length - 1] ?? 0) : 0;
        if (stack.length < floor + k || stack.length < k) {
          vm.opPos = opPos;
          vmFail(vm, "stack underflow");
        }
        stack.push(stack.splice(stack.length - k));
        continue;
      }
      case 0x61: { // APPEND
        vm.opPos = opPos;
        const v = vmPop(vm);
        appendItems(vmTop(vm), [v], opPos);
        continue;
      }
      case 0x65: { // APPENDS
        const m = marks.pop();
        if (m === undefined || m === 0) {
          vm.opPos = opPos;
          vmFail(vm, "MARK expected");
        }
        const target = stack[(m) - 1];
        if (Array.isArray(target)) {
          for (let i = m; i < stack.length; i++) target.push(stack[i]);
          stack.length = m;
        } else {
          appendItems(target, stack.splice(m), opPos);
        }
        continue;
      }
      case 0x73: { // SETITEM
        vm.opPos = opPos;
        const v = vmPop(vm);
        const k = vmPop(vm);
        setItem(vmTop(vm), k, v, opPos);
        continue;
      }
      case 0x75: { // SETITEMS
        const m = marks.pop();
        if (m === undefined || m === 0) {
          vm.opPos = opPos;
          vmFail(vm, "MARK expected");
        }
        if (((stack.length - (m)) & 1) !== 0) {
          vm.opPos = opPos;
          vmFail(vm, "odd number of items for SETITEMS");
        }
        const target = stack[(m) - 1];
        const plain = isPlainObject(target);
        for (let i = m; i < stack.length; i += 2) {
          const k = stack[i];
          // common case inline: a str key into a plain dict (see setItem)
          if (plain && typeof k === "string" && k !== "__proto__") (target)[k] = stack[i + 1];
          else setItem(target, k, stack[i + 1], opPos);
        }
        stack.length = m;
        continue;
      }
      case 0x52: { // REDUCE
        vm.opPos = opPos;
        const args = vmPop(vm);
        const callable = vmPop(vm);
        stack.push(vmCall(vm, callable, args, null, "reduce"));
        continue;
      }
      case 0x51: // BINPERSID
        vm.opPos = opPos;
        stack.push(vmPersistent(vm, vmPop(vm)));
        continue;
      case 0x2e: // STOP
        if (stack.length === 0) {
          vm.opPos = opPos;
          vmFail(vm, "STOP with an empty stack");
        }
        return stack.pop();
      default:
        vm.pos = pos;
        vm.opPos = opPos;
        rareOp(vm, op);
        pos = vm.pos;
        continue;
    }
    // `break` above: an inline opcode ran out of data.
    vm.opPos = opPos;
    vmFail(vm, "unexpected end of data (truncated pickle)");
  }
}
