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

export class Col<A extends TypedArray> {
  readonly chunks: A[] = [];
  length = 0;
  constructor(private readonly ctor: Ctor<A>) {}

  push(v: number): void {
    const c = this.length >>> SHIFT;
    const off = this.length & MASK;
    let chunk = this.chunks[c];
    if (chunk === undefined) {
      chunk = new this.ctor(FIRST_CAP);
      this.chunks.push(chunk);
    } else if (off === chunk.length) {
      const grown = new this.ctor(Math.min(CHUNK, chunk.length * 2));
      grown.set(chunk);
      this.chunks[c] = chunk = grown;
    }
    chunk[off] = v;
    this.length++;
  }

  get(i: number): number {
    return this.chunks[i >>> SHIFT]![i & MASK]!;
  }

  set(i: number, v: number): void {
    this.chunks[i >>> SHIFT]![i & MASK] = v;
  }

  /** Drop spare capacity of the last chunk (call when no more rows will arrive). */
  trim(): void {
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
    const out = new this.ctor(this.length);
    let at = 0;
    for (const c of this.chunks) {
      const take = Math.min(c.length, this.length - at);
      out.set(c.subarray(0, take) as never, at);
      at += take;
    }
    return out;
  }

  /** Replace the contents with `data` (binary cache load). */
  load(data: A): void {
    this.chunks.length = 0;
    for (let at = 0; at < data.length; at += CHUNK) this.chunks.push(data.slice(at, at + CHUNK) as A);
    this.length = data.length;
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

/** Index of the first element of sorted `col` (positions [lo, hi)) that is >= x. */
export function lowerBound(col: Col<Float64Array>, x: number, lo = 0, hi = col.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (col.get(mid) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first element of sorted `col` that is > x. */
export function upperBound(col: Col<Float64Array>, x: number, lo = 0, hi = col.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (col.get(mid) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
