/**
 * Public API of the torch `.pt` reader (docs/api.md 1.2–1.4, docs/formats.md 5.3).
 *
 * Policy:
 *  * The archive is opened with positional reads only (zip.ts); `data.pkl` is read and
 *    unpickled at load time, tensor storages are NOT: every tensor in `root` is a lazy
 *    `Tensor` whose bytes are fetched on `materialize()`. A point read of one tensor
 *    reads only that tensor's span of its storage; storages that are small (≤ 1 MiB by
 *    default) or mostly covered by the request are read whole and cached per storage.
 *    `PtFile.prefetch(tensors)` fetches many storages at once with few, large,
 *    concurrent reads (zip.ts `readSpans`); `release()` drops what it kept.
 *  * `data.pkl`, `byteorder` and `version` are read together at open (1–2 reads).
 *  * The archive prefix is the directory part of the first entry (never hard-coded).
 *  * `byteorder` absent ⇒ little; "big" archives are byte-swapped on read.
 *  * Unknown Python classes become opaque `PyObject`s (see pickle.ts); they never abort
 *    loading.
 *  * Errors: malformed/truncated content → `PtFormatError` naming the file; OS errors
 *    (ENOENT, EACCES, …) are rethrown untouched.
 *
 * `loadPtEager` returns the graph with every tensor replaced by its data (see there).
 */
import { nameLabel, PtFormatError } from "./errors";
import { PickleError, PyObject, callPy, unpickle, type PickleHooks } from "./pickle";
import {
  DTYPE_ITEMSIZE,
  Tensor,
  TorchStorageType,
  checkView,
  materialize as materializeTensor,
  materializeResident as materializeTensorResident,
  rebuildTensor,
  torchGlobal,
  type DType,
  type MaterializeOptions,
  type Storage,
  type TensorArray,
} from "./tensor";
import { openZip, type ReadSpansOptions, type ZipArchive } from "./zip";

export { PtFormatError } from "./errors";
export { NdArray, NpDtype, PickleError, PyGlobal, PyObject, PY_DICT_KEYS, SkippedList } from "./pickle";
export { Tensor, TorchDtype, TorchStorageType, type DType, type MaterializeOptions, type Storage, type TensorArray } from "./tensor";
export type { EntrySpan, ReadSpansOptions, ZipArchive, ZipEntry } from "./zip";

export interface LoadPtOptions {
  /** Extra class resolver consulted before the built-in table (see pickle.ts). */
  findClass?: (module: string, name: string) => unknown;
  /** Storages up to this many bytes are read whole (and cached) on first touch. Default 1 MiB. */
  wholeStorageBytes?: number;
  /** Lists under these dict keys unpickle as `SkippedList` (length only), see pickle.ts. */
  skipListItems?: ReadonlySet<string>;
  /** open(2) flags for the archive (default read-only), see zip.ts `openZip`. */
  openFlags?: string | number;
}

export interface PtFile {
  readonly path: string;
  /** Archive root prefix, e.g. "0" for `0.pt`, "archive" for buffer-saved files. */
  readonly prefix: string;
  /** The unpickled object graph; tensors in it are lazy `Tensor`s. */
  readonly root: unknown;
  readonly byteorder: "little" | "big";
  /** Content of `<prefix>/version` (trimmed), null when absent. */
  readonly version: string | null;
  readonly archive: ZipArchive;
  /** Bytes read from disk so far (zip structures + data.pkl + storage reads). */
  readonly bytesRead: number;
  /** Positional reads issued so far. */
  readonly readCount: number;
  /**
   * Fetch the storage spans of many tensors with few, large, concurrent positional reads
   * (see `ZipArchive.readSpans`) and keep the bytes until `release()`, so that the
   * following `materialize` calls of these tensors do no I/O. A storage mostly covered
   * by the requested views (or small) is fetched whole. Tensors of other files are
   * ignored.
   */
  prefetch(tensors: Iterable<Tensor>, opts?: ReadSpansOptions): Promise<void>;
  /** Drop the bytes kept by `prefetch` (and cached whole storages). */
  release(): void;
  close(): Promise<void>;
}

/**
 * Decode a lazy tensor into a flat row-major typed array (dtype mapping: tensor.ts).
 * `{ share: true }` may return a read-only view into cached storage bytes (no copy).
 */
export function materialize(t: Tensor, opts?: MaterializeOptions): Promise<TensorArray> {
  return materializeTensor(t, opts);
}

/** `materialize` without I/O: null unless the tensor's bytes are already in memory. */
export function materializeResident(t: Tensor, opts?: MaterializeOptions): TensorArray | null {
  return materializeTensorResident(t, opts);
}
/** Alias of `materialize`. */
export const tensorToArray = materialize;

function swapInPlace(b: Uint8Array, size: number): Uint8Array {
  if (size > 1) for (let i = 0; i + size <= b.length; i += size) b.subarray(i, i + size).reverse();
  return b;
}

class ArchiveStorage implements Storage {
  private whole: Promise<Uint8Array> | null = null;
  /** `whole` once resolved (synchronous access for `peek`). */
  private wholeResident: Uint8Array | null = null;
  /** Prefetched element windows `[lo, hi)` (see `PtFile.prefetch`), little-endian bytes. */
  private windows: { lo: number; hi: number; bytes: Uint8Array }[] | null = null;
  constructor(
    readonly archive: ZipArchive,
    readonly entry: string,
    readonly key: string,
    readonly dtype: DType,
    readonly numel: number,
    readonly location: string,
    private readonly bigEndian: boolean,
    private readonly wholeBytes: number,
  ) {}

  private fix(b: Uint8Array): Uint8Array {
    return this.bigEndian ? swapInPlace(b, DTYPE_ITEMSIZE[this.dtype]) : b;
  }

  get hasWhole(): boolean {
    return this.whole !== null;
  }

  /** Bytes of elements `[lo, hi)` fetched by a batched read. */
  preload(lo: number, hi: number, bytes: Uint8Array): void {
    const b = this.fix(bytes);
    if (lo === 0 && hi === this.numel) {
      this.whole = Promise.resolve(b);
      this.wholeResident = b;
      this.windows = null;
    } else {
      (this.windows ??= []).push({ lo, hi, bytes: b });
    }
  }

  release(): void {
    this.whole = null;
    this.wholeResident = null;
    this.windows = null;
  }

  peek(elemStart: number, elemCount: number): Uint8Array | null {
    if (elemStart < 0 || elemCount < 0 || elemStart + elemCount > this.numel) return null;
    const size = DTYPE_ITEMSIZE[this.dtype];
    const all = this.wholeResident;
    if (all !== null) return all.subarray(elemStart * size, (elemStart + elemCount) * size);
    for (const w of this.windows ?? []) {
      if (elemStart >= w.lo && elemStart + elemCount <= w.hi) {
        return w.bytes.subarray((elemStart - w.lo) * size, (elemStart - w.lo + elemCount) * size);
      }
    }
    return null;
  }

  async read(elemStart: number, elemCount: number): Promise<Uint8Array> {
    const size = DTYPE_ITEMSIZE[this.dtype];
    if (elemStart < 0 || elemCount < 0 || elemStart + elemCount > this.numel) {
      throw new PtFormatError(this.archive.path, `read [${elemStart}, ${elemStart + elemCount}) outside storage ${nameLabel(this.key)} of ${this.numel} elements`);
    }
    for (const w of this.windows ?? []) {
      if (elemStart >= w.lo && elemStart + elemCount <= w.hi) {
        return w.bytes.subarray((elemStart - w.lo) * size, (elemStart - w.lo + elemCount) * size);
      }
    }
    const total = this.numel * size;
    if (this.whole === null && (total <= this.wholeBytes || elemCount * 2 >= this.numel)) {
      const p = this.archive.readRange(this.entry, 0, total).then((b) => {
        const fixed = this.fix(b);
        if (this.whole === p) this.wholeResident = fixed;
        return fixed;
      });
      this.whole = p;
      p.catch(() => {
        if (this.whole === p) this.whole = null;
      });
    }
    if (this.whole !== null) {
      const all = await this.whole;
      return all.subarray(elemStart * size, (elemStart + elemCount) * size);
    }
    return this.fix(await this.archive.readRange(this.entry, elemStart * size, elemCount * size));
  }
}

function isSystemError(e: unknown): boolean {
  return e instanceof Error && typeof (e as NodeJS.ErrnoException).code === "string" && typeof (e as NodeJS.ErrnoException).syscall === "string";
}


/** Open a `.pt` file and unpickle its object graph, leaving tensor data on disk. */
export async function loadPt(path: string, opts: LoadPtOptions = {}): Promise<PtFile> {
  const archive = await openZip(path, opts.openFlags);
  try {
    return await loadFromArchive(archive, opts);
  } catch (e) {
    await archive.close().catch(() => undefined);
    if (e instanceof PtFormatError || isSystemError(e)) throw e;
    const msg = e instanceof PickleError ? `data.pkl: ${e.message}` : e instanceof Error ? e.message : String(e);
    throw new PtFormatError(path, msg, { cause: e });
  }
}

async function loadFromArchive(archive: ZipArchive, opts: LoadPtOptions): Promise<PtFile> {
  const path = archive.path;
  const first = archive.names[0];
  if (first === undefined) throw new PtFormatError(path, "empty zip archive");
  const slash = first.lastIndexOf("/");
  let prefix = slash >= 0 ? first.slice(0, slash) : "";
  const join = (p: string, n: string): string => (p === "" ? n : `${p}/${n}`);
  if (!archive.entries.has(join(prefix, "data.pkl"))) {
    const alt = archive.names.find((n) => n === "data.pkl" || n.endsWith("/data.pkl"));
    if (alt === undefined) throw new PtFormatError(path, "no data.pkl entry (not a torch zip checkpoint?)");
    prefix = alt === "data.pkl" ? "" : alt.slice(0, -"/data.pkl".length);
  }

  // data.pkl, byteorder and version in one batched read (usually 1–2 positional reads).
  const pklName = join(prefix, "data.pkl");
  const textNames = [join(prefix, "byteorder"), join(prefix, "version")].filter((n) => archive.entries.has(n));
  const names = [pklName, ...textNames];
  const got = await archive.readSpans(
    names.map((name) => ({ name, byteOffset: 0, byteLength: archive.entries.get(name)?.size ?? 0 })),
    { maxGap: 64 * 1024 },
  );
  const text = (name: string): string | null => {
    const i = names.indexOf(name);
    return i <= 0 ? null : Buffer.from(got[i] as Uint8Array).toString("utf8").trim();
  };
  const bo = text(join(prefix, "byteorder"));
  if (bo !== null && bo !== "little" && bo !== "big") throw new PtFormatError(path, `unknown byteorder record (${bo.length} characters)`);
  const byteorder: "little" | "big" = bo === "big" ? "big" : "little";
  const version = text(join(prefix, "version"));
  const pkl = got[0] as Uint8Array;

  const wholeBytes = opts.wholeStorageBytes ?? 1 << 20;
  const storages = new Map<string, ArchiveStorage>();
  const persistentLoad = (pid: unknown): unknown => {
    if (!Array.isArray(pid) || pid[0] !== "storage") return new PyObject("persistent_id", [pid]);
    const [, type, key, location, numel] = pid as unknown[];
    if (typeof key !== "string" || !Number.isSafeInteger(numel) || (numel as number) < 0) {
      throw new PtFormatError(path, "bad storage persistent id");
    }
    if (!(type instanceof TorchStorageType) || type.dtype === null) {
      return new PyObject(type instanceof TorchStorageType ? `torch.${type.name}` : "storage", [pid]);
    }
    const cacheKey = `${key}\n${type.dtype}`;
    let s = storages.get(cacheKey);
    if (s === undefined) {
      const entry = join(prefix, `data/${key}`);
      const e = archive.entries.get(entry);
      if (e === undefined) throw new PtFormatError(path, `missing storage entry ${nameLabel(entry)}`);
      const need = (numel as number) * DTYPE_ITEMSIZE[type.dtype];
      if (e.size < need) throw new PtFormatError(path, `storage entry ${nameLabel(entry)} has ${e.size} bytes, expected ${need}`);
      s = new ArchiveStorage(archive, entry, key, type.dtype, numel as number, typeof location === "string" ? location : "", byteorder === "big", wholeBytes);
      storages.set(cacheKey, s);
    }
    return s;
  };

  const tensorCtor = (qual: string) => (args: unknown[]): unknown => {
    const t = rebuildTensor(args);
    if (t === null) return new PyObject(qual, args);
    const err = checkView(t);
    if (err !== null) throw new PtFormatError(path, err);
    return t;
  };
  const findClass = (module: string, name: string): unknown => {
    const user = opts.findClass?.(module, name);
    if (user !== undefined) return user;
    if (module === "torch._utils") {
      if (name === "_rebuild_tensor_v2" || name === "_rebuild_tensor") return tensorCtor(`${module}.${name}`);
      if (name === "_rebuild_parameter" || name === "_rebuild_parameter_with_state") return (a: unknown[]) => a[0];
    }
    if (module === "torch._tensor" && name === "_rebuild_from_type_v2") {
      return (a: unknown[]) => callPy(a[0], Array.isArray(a[2]) ? a[2] : [], null, "reduce");
    }
    if (module === "torch" && name === "Size") return (a: unknown[]): unknown[] => (Array.isArray(a[0]) ? (a[0] as unknown[]).slice() : []);
    return torchGlobal(module, name);
  };

  const hooks: PickleHooks = { findClass, persistentLoad, ...(opts.skipListItems ? { skipListItems: opts.skipListItems } : {}) };
  const root = unpickle(pkl, hooks);

  const prefetch = async (tensors: Iterable<Tensor>, ropts?: ReadSpansOptions): Promise<void> => {
    // Union of the requested element spans per storage of this file.
    const want = new Map<ArchiveStorage, [number, number]>();
    for (const t of tensors) {
      const s = t.storage;
      if (!(s instanceof ArchiveStorage) || s.archive !== archive || s.hasWhole) continue;
      let lo: number;
      let hi: number;
      if (t.shape.length === 1 && (t.stride[0] ?? 0) >= 0) {
        // the common 1-D view, without span()'s allocation
        const n = t.shape[0] ?? 0;
        if (n === 0) continue;
        lo = t.storageOffset;
        hi = lo + (n - 1) * (t.stride[0] ?? 0) + 1;
      } else {
        if (t.numel === 0) continue;
        [lo, hi] = t.span();
      }
      const cur = want.get(s);
      if (cur === undefined) want.set(s, [lo, hi]);
      else {
        if (lo < cur[0]) cur[0] = lo;
        if (hi > cur[1]) cur[1] = hi;
      }
    }
    if (want.size === 0) return;
    const list: { s: ArchiveStorage; lo: number; hi: number }[] = [];
    for (const [s, [lo, hi]] of want) {
      const size = DTYPE_ITEMSIZE[s.dtype];
      // Small or mostly-covered storages are fetched whole (same rule as a lazy read).
      const whole = s.numel * size <= wholeBytes || (hi - lo) * 2 >= s.numel;
      list.push(whole ? { s, lo: 0, hi: s.numel } : { s, lo, hi });
    }
    const bufs = await archive.readSpans(
      list.map(({ s, lo, hi }) => {
        const size = DTYPE_ITEMSIZE[s.dtype];
        return { name: s.entry, byteOffset: lo * size, byteLength: (hi - lo) * size };
      }),
      ropts,
    );
    list.forEach(({ s, lo, hi }, i) => s.preload(lo, hi, bufs[i] as Uint8Array));
  };

  return {
    path,
    prefix,
    root,
    byteorder,
    version,
    archive,
    get bytesRead() {
      return archive.bytesRead;
    },
    get readCount() {
      return archive.readCount;
    },
    prefetch,
    release: () => {
      for (const s of storages.values()) s.release();
    },
    close: () => archive.close(),
  };
}

/** Visit every tensor in a graph (cycle-safe, iterative), replacing it by `fn(tensor)`. */
export function mapTensors(root: unknown, fn: (t: Tensor) => unknown): unknown {
  if (root instanceof Tensor) return fn(root);
  const seen = new Set<object>();
  const work: object[] = [];
  const visit = (v: unknown): unknown => {
    if (v instanceof Tensor) return fn(v);
    if (typeof v === "object" && v !== null && !ArrayBuffer.isView(v) && !seen.has(v)) {
      seen.add(v);
      work.push(v);
    }
    return v;
  };
  visit(root);
  while (work.length > 0) {
    const o = work.pop();
    if (Array.isArray(o)) {
      for (let i = 0; i < o.length; i++) o[i] = visit(o[i]);
    } else if (o instanceof Map) {
      for (const [k, v] of o) o.set(k, visit(v));
    } else if (o instanceof Set) {
      const items = [...o];
      o.clear();
      for (const it of items) o.add(visit(it));
    } else if (o instanceof PyObject) {
      for (let i = 0; i < o.args.length; i++) o.args[i] = visit(o.args[i]);
      o.state = visit(o.state);
      if (o.listItems) for (let i = 0; i < o.listItems.length; i++) o.listItems[i] = visit(o.listItems[i]);
      if (o.dictItems) for (const [k, v] of o.dictItems) o.dictItems.set(k, visit(v));
    } else if (o !== undefined && Object.getPrototypeOf(o) === Object.prototype) {
      const rec = o as Record<string, unknown>;
      for (const k of Object.keys(rec)) rec[k] = visit(rec[k]);
    }
  }
  return root;
}

/**
 * Materialise every tensor of a loaded graph in place: 0-d tensors become numbers,
 * all others flat row-major typed arrays (shape is dropped; use `loadPt` when the
 * shape of ≥2-D tensors matters). A tensor referenced twice maps to the same array.
 */
export async function materializeAll(root: unknown): Promise<unknown> {
  const tensors = new Set<Tensor>();
  mapTensors(root, (t) => {
    tensors.add(t);
    return t;
  });
  const done = new Map<Tensor, unknown>();
  const queue = [...tensors];
  const worker = async (): Promise<void> => {
    for (let t = queue.pop(); t !== undefined; t = queue.pop()) {
      const arr = await materializeTensor(t);
      done.set(t, t.ndim === 0 ? arr[0] : arr);
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, queue.length) }, worker));
  return mapTensors(root, (t) => done.get(t));
}

/**
 * Load a `.pt` file with every tensor materialised (see `materializeAll`) and the file
 * closed. Meant for rollout dumps (all data lives in the pickle) and small files.
 */
export async function loadPtEager(path: string, opts: LoadPtOptions = {}): Promise<unknown> {
  const f = await loadPt(path, { wholeStorageBytes: Number.MAX_SAFE_INTEGER, ...opts });
  try {
    return await materializeAll(f.root);
  } finally {
    await f.close();
  }
}
