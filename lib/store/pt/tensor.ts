/**
 * Torch tensors as read from a `.pt` archive (docs/api.md 1.2 "Tensors"/"Storages").
 *
 * A `Tensor` is a view (dtype, shape, stride, storageOffset) on a `Storage` whose bytes
 * are fetched lazily (see load.ts). Element `(i0, i1, …)` is storage element
 * `storageOffset + Σ i_k·stride_k`. Materialising produces a flat, row-major JS typed
 * array:
 *
 *   f32, f16, bf16 → Float32Array (f16/bf16 decoded exactly)
 *   f64            → Float64Array
 *   i64            → Float64Array of the exact values (|v| ≤ 2^53; larger values are
 *                    rounded to the nearest double — token ids and counters fit)
 *   i32 / i16 / i8 → Int32Array / Int16Array / Int8Array
 *   u8, bool       → Uint8Array (bool as 0/1)
 *
 * Storage bytes handed to the decoders are always little-endian (load.ts byte-swaps
 * big-endian archives).
 */
import { PtFormatError } from "./errors";

export type DType = "f32" | "f16" | "bf16" | "f64" | "i64" | "i32" | "i16" | "i8" | "u8" | "bool";
export type TensorArray = Float32Array | Float64Array | Int32Array | Int16Array | Int8Array | Uint8Array;

export const DTYPE_ITEMSIZE: Readonly<Record<DType, number>> = {
  f32: 4, f16: 2, bf16: 2, f64: 8, i64: 8, i32: 4, i16: 2, i8: 1, u8: 1, bool: 1,
};

/** torch storage class name (`torch.<Name>`) → dtype (docs/api.md 1.2). */
export const STORAGE_DTYPES: Readonly<Record<string, DType>> = {
  DoubleStorage: "f64",
  FloatStorage: "f32",
  HalfStorage: "f16",
  BFloat16Storage: "bf16",
  LongStorage: "i64",
  IntStorage: "i32",
  ShortStorage: "i16",
  CharStorage: "i8",
  ByteStorage: "u8",
  BoolStorage: "bool",
  UntypedStorage: "u8",
};

/** torch dtype global (`torch.float32`, …) → dtype, for `TorchDtype.dtype`. */
const TORCH_DTYPE_NAMES: Readonly<Record<string, DType>> = {
  float32: "f32", float: "f32", float16: "f16", half: "f16", bfloat16: "bf16", float64: "f64", double: "f64",
  int64: "i64", long: "i64", int32: "i32", int: "i32", int16: "i16", short: "i16", int8: "i8", uint8: "u8", bool: "bool",
};

/** A `torch.XxxStorage` class global, as passed inside a persistent id. */
export class TorchStorageType {
  constructor(
    readonly name: string,
    /** null for storage classes this reader cannot decode (complex, float8, …). */
    readonly dtype: DType | null,
  ) {}
}

/** A `torch.<dtype>` global such as `torch.float32` (dtype null when not decodable here). */
export class TorchDtype {
  constructor(
    readonly name: string,
    readonly dtype: DType | null,
  ) {}
}

/** A tensor storage: `numel` elements of `dtype`, fetched on demand. */
export interface Storage {
  readonly key: string;
  readonly dtype: DType;
  readonly numel: number;
  readonly location: string;
  /** Little-endian bytes of elements `[elemStart, elemStart + elemCount)`. */
  read(elemStart: number, elemCount: number): Promise<Uint8Array>;
  /** The same bytes when already in memory (cached or prefetched), else null: no I/O. */
  peek?(elemStart: number, elemCount: number): Uint8Array | null;
}

export class Tensor {
  constructor(
    readonly storage: Storage,
    readonly storageOffset: number,
    readonly shape: readonly number[],
    readonly stride: readonly number[],
    readonly requiresGrad = false,
  ) {}

  get dtype(): DType {
    return this.storage.dtype;
  }

  get ndim(): number {
    return this.shape.length;
  }

  get numel(): number {
    let n = 1;
    for (const d of this.shape) n *= d;
    return n;
  }

  /** Row-major contiguous (size-1 dimensions are ignored, like torch). */
  get isContiguous(): boolean {
    let expected = 1;
    for (let k = this.shape.length - 1; k >= 0; k--) {
      const d = this.shape[k] ?? 1;
      if (d !== 1 && this.stride[k] !== expected) return false;
      expected *= d;
    }
    return true;
  }

  /** `[first, end)` storage-element span touched by this view (empty when numel is 0). */
  span(): [number, number] {
    if (this.numel === 0) return [this.storageOffset, this.storageOffset];
    let lo = this.storageOffset;
    let hi = this.storageOffset;
    for (let k = 0; k < this.shape.length; k++) {
      const ext = ((this.shape[k] ?? 1) - 1) * (this.stride[k] ?? 0);
      if (ext < 0) lo += ext;
      else hi += ext;
    }
    return [lo, hi + 1];
  }
}

// ---------------------------------------------------------------------------------
// element decoding

const HOST_LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

let F16_TABLE: Float32Array | null = null;
/** All 65536 half-precision values as float32 (exact: every f16 is representable). */
function f16Table(): Float32Array {
  if (F16_TABLE !== null) return F16_TABLE;
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const frac = h & 0x3ff;
    if (exp === 0) t[h] = sign * frac * 2 ** -24;
    else if (exp === 31) t[h] = frac === 0 ? sign * Infinity : Number.NaN;
    else t[h] = sign * (1 + frac / 1024) * 2 ** (exp - 15);
  }
  F16_TABLE = t;
  return t;
}

/** Decode one IEEE half (as uint16 bits) exactly. */
export function f16ToNumber(bits: number): number {
  return f16Table()[bits & 0xffff] ?? Number.NaN;
}

/** Decode one bfloat16 (as uint16 bits) exactly. */
export function bf16ToNumber(bits: number): number {
  const dv = new DataView(new ArrayBuffer(4));
  dv.setUint32(0, (bits & 0xffff) << 16);
  return dv.getFloat32(0);
}

function allocFor(dtype: DType, n: number): TensorArray {
  switch (dtype) {
    case "f32": case "f16": case "bf16": return new Float32Array(n);
    case "f64": case "i64": return new Float64Array(n);
    case "i32": return new Int32Array(n);
    case "i16": return new Int16Array(n);
    case "i8": return new Int8Array(n);
    case "u8": case "bool": return new Uint8Array(n);
  }
}

/**
 * Decode `count` consecutive little-endian elements starting at byte `byteOffset` of
 * `bytes` into a fresh typed array.
 */
export function decodeContiguous(bytes: Uint8Array, dtype: DType, count: number, byteOffset = 0): TensorArray {
  const size = DTYPE_ITEMSIZE[dtype];
  const end = byteOffset + count * size;
  if (end > bytes.byteLength) throw new RangeError(`need ${end} bytes, have ${bytes.byteLength}`);
  // One aligned copy of the bytes, then typed-array views (host little-endian).
  // (not `bytes.slice`: on a Node Buffer that is a view, not a copy)
  const copy = new Uint8Array(end - byteOffset);
  copy.set(bytes.subarray(byteOffset, end));
  if (HOST_LE) {
    switch (dtype) {
      case "f32": return new Float32Array(copy.buffer, 0, count);
      case "f64": return new Float64Array(copy.buffer, 0, count);
      case "i32": return new Int32Array(copy.buffer, 0, count);
      case "i16": return new Int16Array(copy.buffer, 0, count);
      case "i8": return new Int8Array(copy.buffer, 0, count);
      case "u8": case "bool": return copy;
      case "bf16": {
        const src = new Uint16Array(copy.buffer, 0, count);
        const out = new Float32Array(count);
        const bits = new Uint32Array(out.buffer);
        for (let i = 0; i < count; i++) bits[i] = (src[i] ?? 0) << 16;
        return out;
      }
      case "f16": {
        const src = new Uint16Array(copy.buffer, 0, count);
        const table = f16Table();
        const out = new Float32Array(count);
        for (let i = 0; i < count; i++) out[i] = table[src[i] ?? 0] ?? Number.NaN;
        return out;
      }
      case "i64": {
        const w = new Int32Array(copy.buffer, 0, count * 2);
        const out = new Float64Array(count);
        for (let i = 0; i < count; i++) out[i] = (w[2 * i + 1] ?? 0) * 4294967296 + ((w[2 * i] ?? 0) >>> 0);
        return out;
      }
    }
  }
  const dv = new DataView(copy.buffer);
  const out = allocFor(dtype, count);
  for (let i = 0; i < count; i++) out[i] = readElement(dv, dtype, i * size);
  return out;
}

/** One little-endian element at byte `off` of `dv`, as a JS number. */
export function readElement(dv: DataView, dtype: DType, off: number): number {
  switch (dtype) {
    case "f32": return dv.getFloat32(off, true);
    case "f64": return dv.getFloat64(off, true);
    case "f16": return f16ToNumber(dv.getUint16(off, true));
    case "bf16": return bf16ToNumber(dv.getUint16(off, true));
    case "i64": return dv.getInt32(off + 4, true) * 4294967296 + dv.getUint32(off, true);
    case "i32": return dv.getInt32(off, true);
    case "i16": return dv.getInt16(off, true);
    case "i8": return dv.getInt8(off);
    case "u8": case "bool": return dv.getUint8(off);
  }
}

/**
 * Gather a strided view into a flat row-major array. `decoded` holds the decoded
 * storage elements starting at storage element `base`.
 */
export function gatherStrided<T extends TensorArray>(
  decoded: T,
  base: number,
  storageOffset: number,
  shape: readonly number[],
  stride: readonly number[],
): T {
  let n = 1;
  for (const d of shape) n *= d;
  const out = new (decoded.constructor as new (n: number) => T)(n);
  if (n === 0) return out;
  const nd = shape.length;
  const idx = new Array<number>(nd).fill(0);
  let pos = storageOffset - base;
  for (let i = 0; i < n; i++) {
    out[i] = decoded[pos] ?? 0;
    // odometer increment (last dimension fastest)
    for (let k = nd - 1; k >= 0; k--) {
      const d = shape[k] ?? 1;
      const s = stride[k] ?? 0;
      const v = (idx[k] ?? 0) + 1;
      if (v < d) {
        idx[k] = v;
        pos += s;
        break;
      }
      idx[k] = 0;
      pos -= (d - 1) * s;
    }
  }
  return out;
}

export interface MaterializeOptions {
  /**
   * Return a view into the (cached) storage bytes instead of a fresh copy when no
   * conversion is needed: contiguous view, f32/f64/i32/i16/i8/u8/bool, aligned bytes,
   * little-endian host. Such a result must be treated as read-only and keeps the
   * storage buffer alive while referenced. Default false (always a fresh array).
   */
  share?: boolean;
}

/** A zero-copy typed view of `count` elements at byte `byteOffset` of `bytes`, or null. */
function viewContiguous(bytes: Uint8Array, dtype: DType, count: number, byteOffset: number): TensorArray | null {
  if (!HOST_LE) return null;
  const abs = bytes.byteOffset + byteOffset;
  const size = DTYPE_ITEMSIZE[dtype];
  if (abs % size !== 0 || byteOffset + count * size > bytes.byteLength) return null;
  switch (dtype) {
    case "f32": return new Float32Array(bytes.buffer, abs, count);
    case "f64": return new Float64Array(bytes.buffer, abs, count);
    case "i32": return new Int32Array(bytes.buffer, abs, count);
    case "i16": return new Int16Array(bytes.buffer, abs, count);
    case "i8": return new Int8Array(bytes.buffer, abs, count);
    case "u8": case "bool": return new Uint8Array(bytes.buffer, abs, count);
    default: return null;
  }
}

/**
 * Decode a tensor from the bytes of its storage span (`bytes` starts at storage
 * element `bytesElemStart`). Synchronous; used by `materialize` and the eager loader.
 */
export function decodeTensor(t: Tensor, bytes: Uint8Array, bytesElemStart: number, opts?: MaterializeOptions): TensorArray {
  const [lo, hi] = t.span();
  const count = hi - lo;
  const size = DTYPE_ITEMSIZE[t.dtype];
  if (t.numel === 0) return allocFor(t.dtype, 0);
  if (opts?.share === true && count === t.numel && t.isContiguous) {
    const view = viewContiguous(bytes, t.dtype, count, (lo - bytesElemStart) * size);
    if (view !== null) return view;
  }
  const decoded = decodeContiguous(bytes, t.dtype, count, (lo - bytesElemStart) * size);
  if (t.isContiguous && count === t.numel) return decoded;
  return gatherStrided(decoded, lo, t.storageOffset, t.shape, t.stride);
}

/** Check a view against its storage; returns a message or null. */
export function checkView(t: Tensor): string | null {
  const shape = t.shape;
  // Common case without allocation: a 1-D view with a non-negative stride.
  if (shape.length === 1 && (t.stride[0] ?? 0) >= 0) {
    const n = shape[0] ?? 0;
    if (n === 0 || (t.storageOffset >= 0 && t.storageOffset + (n - 1) * (t.stride[0] ?? 0) + 1 <= t.storage.numel)) return null;
  }
  const [lo, hi] = t.span();
  if (t.numel > 0 && (lo < 0 || hi > t.storage.numel)) {
    return `tensor view [${lo}, ${hi}) outside storage ${t.storage.key} of ${t.storage.numel} elements`;
  }
  return null;
}

/** Read the tensor's storage span (only that range) and decode it. */
export async function materialize(t: Tensor, opts?: MaterializeOptions): Promise<TensorArray> {
  if (t.numel === 0) return allocFor(t.dtype, 0);
  const [lo, hi] = t.span();
  const bytes = await t.storage.read(lo, hi - lo);
  return decodeTensor(t, bytes, lo, opts);
}

/**
 * `materialize` without I/O: the decoded tensor when its storage bytes are already in
 * memory (cached whole storage or a prefetched window), else null.
 */
export function materializeResident(t: Tensor, opts?: MaterializeOptions): TensorArray | null {
  if (t.numel === 0) return allocFor(t.dtype, 0);
  if (t.storage.peek === undefined) return null;
  const [lo, hi] = t.span();
  const bytes = t.storage.peek(lo, hi - lo);
  return bytes === null ? null : decodeTensor(t, bytes, lo, opts);
}

// ---------------------------------------------------------------------------------
// torch globals

function isIntList(x: unknown): x is number[] {
  if (!Array.isArray(x)) return false;
  for (let i = 0; i < x.length; i++) {
    const v: unknown = x[i];
    if (!Number.isSafeInteger(v) || (v as number) < 0) return false;
  }
  return true;
}

export function isStorage(x: unknown): x is Storage {
  return typeof x === "object" && x !== null && typeof (x as { read?: unknown }).read === "function" &&
    typeof (x as { dtype?: unknown }).dtype === "string" && typeof (x as { key?: unknown }).key === "string";
}

/**
 * `torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
 * backward_hooks[, metadata])` and `_rebuild_tensor(storage, offset, size, stride)`.
 * Returns null when the arguments do not describe a decodable tensor (the caller then
 * keeps an opaque object).
 */
export function rebuildTensor(args: readonly unknown[]): Tensor | null {
  const [storage, offset, size, stride, requiresGrad] = args;
  if (!isStorage(storage) || !Number.isSafeInteger(offset) || (offset as number) < 0) return null;
  if (!isIntList(size) || !isIntList(stride) || size.length !== stride.length) return null;
  return new Tensor(storage, offset as number, size.slice(), stride.slice(), requiresGrad === true);
}

/** Storage class / dtype globals under the `torch` module; undefined for others. */
export function torchGlobal(module: string, name: string): TorchStorageType | TorchDtype | undefined {
  if (module !== "torch") return undefined;
  if (name.endsWith("Storage")) return new TorchStorageType(name, Object.hasOwn(STORAGE_DTYPES, name) ? (STORAGE_DTYPES[name] ?? null) : null);
  if (Object.hasOwn(TORCH_DTYPE_NAMES, name) || /^(float|int|uint|complex|qint|quint|bits)\d|^(cfloat|cdouble|chalf)$/.test(name)) {
    return new TorchDtype(name, Object.hasOwn(TORCH_DTYPE_NAMES, name) ? (TORCH_DTYPE_NAMES[name] ?? null) : null);
  }
  return undefined;
}

/** Error helper shared by the loader for a view that exceeds its storage. */
export function viewError(path: string, t: Tensor): PtFormatError | null {
  const msg = checkView(t);
  return msg === null ? null : new PtFormatError(path, msg);
}
