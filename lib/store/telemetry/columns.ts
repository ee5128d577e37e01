/**
 * Growable chunked typed-array columns and a string interner: the resident form of the
 * high-rate streams. Full chunks hold CHUNK elements; only the last chunk grows (by
 * doubling) so a small partition does not pin a large buffer, and `trim()` shrinks it
 * exactly once a partition is closed. Index `i` lives at `chunks[i >>> SHIFT][i & MASK]`.
 */
export const SHIFT = 16;
export const CHUNK = 1 << SHIFT;
export const MASK = CHUNK - 1;
const FIRST_CAP = 256;

export type TypedArray =
  | Float64Array
  | Float32Array
  | Uint8Array
  | Uint16Array
  | Uint32Array
  | Int16Array
  | Int32Array;

type Ctor<A extends TypedArray> = { new (n: number): A; BYTES_PER_ELEMENT: number };

/** A typed array of the same type as `a` with room for `cap` elements, holding `a`'s first `cap`. */
export function grown<A extends TypedArray>(a: A, cap: number): A {
  const b = new (a.constructor as new (n: number) => A)(cap);
  b.set(a.length > cap ? a.subarray(0, cap) : a);
  return b;
}

/**
 * `a`'s first `len` elements for a column that will not grow again: a view when at most
 * 1/16 of `a` would stay unused (a buffer sized by an estimate), else an exact copy.
 */
export function fitted<A extends TypedArray>(a: A, len: number): A {
  return (a.length - len <= a.length >>> 4 ? a.subarray(0, len) : a.slice(0, len)) as A;
}

export class Col<A extends TypedArray> {
  readonly chunks: A[] = [];
  length = 0;
  /**
   * The whole column as one contiguous array when it is backed by one buffer (loaded from
   * the binary cache, or compacted when its partition closed); null while it grows.
   */
  flat: A | null = null;
  /**
   * One buffer sized by `reserve()` that new chunks are views of, while every row since
   * the reservation fits it; `compact()` then takes it as `flat` without a copy. Null once
   * a chunk had to grow past it (or nothing was reserved).
   */
  private reserved: A | null = null;
  /**
   * `firstCap`: a new chunk's first capacity. A column known to fill many chunks (a
   * query's scratch rows) starts each at CHUNK, so no chunk is ever regrown and copied.
   */
  constructor(
    private readonly ctor: Ctor<A>,
    private readonly firstCap = FIRST_CAP,
  ) {}

  push(v: number): void {
    this.flat = null;
    const c = this.length >>> SHIFT;
    const off = this.length & MASK;
    let chunk = this.chunks[c];
    if (chunk === undefined) {
      chunk = this.newChunk(c, this.firstCap);
      this.chunks.push(chunk);
    } else if (off === chunk.length) {
      this.reserved = null;
      const grown = new this.ctor(Math.min(CHUNK, chunk.length * 2));
      grown.set(chunk);
      this.chunks[c] = chunk = grown;
    }
    chunk[off] = v;
    this.length++;
  }

  /** Bulk append `src[from, to)` (one native copy per chunk piece; keeps hot paths monomorphic). */
  append(src: TypedArray, from = 0, to = src.length): void {
    if (to > from) this.flat = null;
    let at = from;
    while (at < to) {
      const c = this.length >>> SHIFT;
      const off = this.length & MASK;
      let chunk = this.chunks[c];
      const take = Math.min(to - at, CHUNK - off);
      if (chunk === undefined) {
        chunk = this.newChunk(c, Math.min(CHUNK, Math.max(this.firstCap, take)), take);
        this.chunks.push(chunk);
      } else if (off + take > chunk.length) {
        this.reserved = null;
        let cap = chunk.length * 2;
        while (cap < off + take) cap *= 2;
        const grown = new this.ctor(Math.min(CHUNK, cap));
        grown.set(chunk);
        this.chunks[c] = chunk = grown;
      }
      chunk.set(src.subarray(at, at + take), off);
      this.length += take;
      at += take;
    }
  }

  /** Chunk `c` (none yet): a view of the reservation when it holds `need` more rows there, else `cap` new elements. */
  private newChunk(c: number, cap: number, need = 1): A {
    const r = this.reserved;
    const at = c * CHUNK;
    if (r !== null && at + need <= r.length) return r.subarray(at, Math.min(at + CHUNK, r.length)) as A;
    this.reserved = null;
    return new this.ctor(cap);
  }

  /**
   * About `n` rows in all are coming (a parse that knows its file's size): hold them in one
   * buffer, so closing the column (`compact`) needs no copy and chunks never regrow. Rows
   * already here move into it. A column with fewer rows than estimated keeps up to
   * 1/16 of spare room; one with more grows as usual past the reservation.
   */
  reserve(n: number): void {
    if (this.flat || n <= this.length) return;
    const r = new this.ctor(n);
    let at = 0;
    for (const c of this.chunks) {
      const take = Math.min(c.length, this.length - at);
      r.set(c.subarray(0, take), at);
      at += take;
    }
    this.reserved = r;
    const used = this.chunks.length;
    this.chunks.length = 0;
    for (let k = 0; k < used; k++) this.chunks.push(r.subarray(k * CHUNK, Math.min((k + 1) * CHUNK, n)) as A);
  }

  get(i: number): number {
    return this.chunks[i >>> SHIFT]![i & MASK]!;
  }

  set(i: number, v: number): void {
    this.chunks[i >>> SHIFT]![i & MASK] = v;
  }

  /** Move the rows into one contiguous array (chunks become views of it); sets `flat`. */
  compact(): void {
    if (this.flat) return;
    const r = this.reserved;
    this.reserved = null;
    const out = r !== null ? fitted(r, this.length) : this.toArray();
    this.chunks.length = 0;
    for (let at = 0; at < out.length; at += CHUNK) this.chunks.push(out.subarray(at, Math.min(at + CHUNK, out.length)) as A);
    this.flat = out;
  }

  /** Drop spare capacity of the last chunk (call when no more rows will arrive). */
  trim(): void {
    if (this.flat) return;
    if (this.reserved) return this.compact();
    const last = this.chunks.length - 1;
    const chunk = this.chunks[last];
    const used = this.length - last * CHUNK;
    if (chunk && chunk.length > used) this.chunks[last] = chunk.slice(0, used) as A;
  }

  byteLength(): number {
    let n = 0;
    for (const c of this.chunks) n += c.byteLength;
    return n;
  }

  /** Contiguous copy (binary cache). */
  toArray(): A {
    if (this.flat) return this.flat.slice() as A;
    const out = new this.ctor(this.length);
    let at = 0;
    for (const c of this.chunks) {
      const take = Math.min(c.length, this.length - at);
      out.set(c.subarray(0, take), at);
      at += take;
    }
    return out;
  }

  /**
   * Replace the contents with `data` (binary cache load). The chunks are views of `data`
   * (no copy); they are never written through — appends past a view allocate a new chunk.
   */
  load(data: TypedArray): void {
    if (!(data instanceof this.ctor)) throw new TypeError("column type mismatch");
    this.reserved = null;
    this.chunks.length = 0;
    for (let at = 0; at < data.length; at += CHUNK) this.chunks.push(data.subarray(at, Math.min(at + CHUNK, data.length)) as A);
    this.length = data.length;
    this.flat = data;
  }
}

/**
 * Interning straight from bytes: a byte range maps to a stable id without building a JS
 * string unless the value is new (hot ingest paths see the same few nodes/metrics/addrs).
 */
export class ByteInterner {
  private readonly buckets = new Map<number, { bytes: Uint8Array; id: number }[]>();
  constructor(private readonly onNew: (s: string) => number) {}

  id(buf: Uint8Array, start: number, end: number): number {
    // Hash the length and the last 12 bytes only (values of one field mostly differ near
    // the end: node IPs, dp ranks, metric suffixes); a hit is still verified byte by byte.
    let h = Math.imul(0x811c9dc5 ^ (end - start), 0x01000193);
    for (let i = Math.max(start, end - 12); i < end; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
    const list = this.buckets.get(h);
    if (list) {
      outer: for (const e of list) {
        const b = e.bytes;
        if (b.length !== end - start) continue;
        for (let i = 0; i < b.length; i++) if (b[i] !== buf[start + i]) continue outer;
        return e.id;
      }
    }
    const id = this.onNew(Buffer.from(buf.buffer, buf.byteOffset + start, end - start).toString("latin1"));
    // A copy: Buffer#slice would be a view pinning the whole read buffer.
    const entry = { bytes: Uint8Array.prototype.slice.call(buf, start, end), id };
    if (list) list.push(entry);
    else this.buckets.set(h, [entry]);
    return id;
  }
}

/** String ↔ small integer id, shared by every block of a store. */
export class Interner {
  private readonly ids = new Map<string, number>();
  readonly values: string[] = [];
  constructor(private readonly max = 0xffff) {}

  id(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      id = this.values.length;
      if (id >= this.max) throw new RangeError(`more than ${this.max} distinct values`);
      this.values.push(s);
      this.ids.set(s, id);
    }
    return id;
  }

  lookup(s: string): number | undefined {
    return this.ids.get(s);
  }
}
