/**
 * A minimal Parquet writer for the summary cache (cache.ts): one row group of flat
 * OPTIONAL columns of type DOUBLE, BOOLEAN or STRING (BYTE_ARRAY/UTF8), one PLAIN data
 * page (v1) per column, definition levels as one bit-packed run, no compression, no
 * statistics. Any Parquet reader (hyparquet here) reads it back.
 *
 * Why not hyparquet-writer: its general path (dictionary probing, statistics, RLE
 * hybrid encoder) costs 40–100 ms of CPU in a fresh process for a 512 × 30 table, which
 * was a fifth of an uncached step summary; this writes the same table in a few ms.
 */

export type LiteColumnType = "DOUBLE" | "BOOLEAN" | "STRING";

export interface LiteColumn {
  name: string;
  type: LiteColumnType;
  /** One value per row; null/undefined = null. NaN/±Infinity are kept (DOUBLE). */
  data: readonly unknown[];
}

// Parquet enums
const T_BOOLEAN = 0;
const T_DOUBLE = 5;
const T_BYTE_ARRAY = 6;
const OPTIONAL = 1;
const UTF8 = 0;
const ENC_PLAIN = 0;
const ENC_RLE = 3;
const DATA_PAGE = 0;
const UNCOMPRESSED = 0;

// Thrift compact protocol types
const C_I32 = 5;
const C_I64 = 6;
const C_BINARY = 8;
const C_LIST = 9;
const C_STRUCT = 12;

/** Growable little-endian byte buffer. */
class Bytes {
  buf = new Uint8Array(1 << 16);
  dv = new DataView(this.buf.buffer);
  length = 0;

  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.length + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.dv = new DataView(next.buffer);
  }
  u8(v: number): void {
    this.ensure(1);
    this.buf[this.length++] = v;
  }
  u32(v: number): void {
    this.ensure(4);
    this.dv.setUint32(this.length, v, true);
    this.length += 4;
  }
  f64(v: number): void {
    this.ensure(8);
    this.dv.setFloat64(this.length, v, true);
    this.length += 8;
  }
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  varint(v: number): void {
    // unsigned LEB128 (v < 2^53)
    while (v >= 0x80) {
      this.u8((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.u8(v);
  }
  zigzag(v: number): void {
    this.varint(v >= 0 ? v * 2 : -v * 2 - 1);
  }
  result(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

const utf8 = new TextEncoder();

/** Thrift compact struct writer: fields must be written in ascending id order. */
class Struct {
  private last = 0;
  constructor(private readonly out: Bytes) {}
  private header(id: number, type: number): void {
    const delta = id - this.last;
    if (delta > 0 && delta <= 15) this.out.u8((delta << 4) | type);
    else {
      this.out.u8(type);
      this.out.zigzag(id);
    }
    this.last = id;
  }
  i32(id: number, v: number): this {
    this.header(id, C_I32);
    this.out.zigzag(v);
    return this;
  }
  i64(id: number, v: number): this {
    this.header(id, C_I64);
    this.out.zigzag(v);
    return this;
  }
  str(id: number, s: string): this {
    this.header(id, C_BINARY);
    const b = utf8.encode(s);
    this.out.varint(b.length);
    this.out.bytes(b);
    return this;
  }
  private listHeader(id: number, n: number, elem: number): void {
    this.header(id, C_LIST);
    if (n < 15) this.out.u8((n << 4) | elem);
    else {
      this.out.u8(0xf0 | elem);
      this.out.varint(n);
    }
  }
  i32List(id: number, vs: readonly number[]): this {
    this.listHeader(id, vs.length, C_I32);
    for (const v of vs) this.out.zigzag(v);
    return this;
  }
  strList(id: number, vs: readonly string[]): this {
    this.listHeader(id, vs.length, C_BINARY);
    for (const v of vs) {
      const b = utf8.encode(v);
      this.out.varint(b.length);
      this.out.bytes(b);
    }
    return this;
  }
  structList<T>(id: number, items: readonly T[], write: (s: Struct, item: T) => void): this {
    this.listHeader(id, items.length, C_STRUCT);
    for (const it of items) {
      const s = new Struct(this.out);
      write(s, it);
      s.end();
    }
    return this;
  }
  struct(id: number, write: (s: Struct) => void): this {
    this.header(id, C_STRUCT);
    const s = new Struct(this.out);
    write(s);
    s.end();
    return this;
  }
  end(): void {
    this.out.u8(0);
  }
}

interface ChunkMeta {
  col: LiteColumn;
  physical: number;
  offset: number;
  size: number;
}

const HOST_LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Page body: 4-byte length + bit-packed definition levels, then the PLAIN values.
 * Written with a few bulk copies (no per-value calls: this runs cold, once per cache
 * write).
 */
function encodePage(col: LiteColumn, n: number): Uint8Array {
  const data = col.data;
  // definition levels (max level 1): one bit-packed run of ceil(n/8) groups of 8
  const groups = Math.ceil(n / 8);
  const levels = new Uint8Array(groups);
  let present = 0;
  for (let i = 0; i < n; i++) {
    const v = data[i];
    if (v !== null && v !== undefined) {
      levels[i >> 3] = (levels[i >> 3] as number) | (1 << (i & 7));
      present++;
    }
  }
  let values: Uint8Array;
  if (col.type === "DOUBLE") {
    const f = new Float64Array(present);
    let k = 0;
    for (let i = 0; i < n; i++) {
      const v = data[i];
      if (v !== null && v !== undefined) f[k++] = typeof v === "number" ? v : Number(v);
    }
    values = new Uint8Array(f.buffer);
    if (!HOST_LE) {
      const dv = new DataView(f.buffer);
      for (let q = 0; q < present; q++) dv.setFloat64(q * 8, f[q] as number, true);
    }
  } else if (col.type === "BOOLEAN") {
    values = new Uint8Array(Math.ceil(present / 8));
    let k = 0;
    for (let i = 0; i < n; i++) {
      const v = data[i];
      if (v === null || v === undefined) continue;
      if (v === true) values[k >> 3] = (values[k >> 3] as number) | (1 << (k & 7));
      k++;
    }
  } else {
    const b = new Bytes();
    for (let i = 0; i < n; i++) {
      const v = data[i];
      if (v === null || v === undefined) continue;
      const s = utf8.encode(typeof v === "string" ? v : JSON.stringify(v));
      b.u32(s.length);
      b.bytes(s);
    }
    values = b.result();
  }
  const out = new Bytes();
  const lenAt = out.length;
  out.u32(0);
  const levelsStart = out.length;
  out.varint(groups * 2 + 1);
  out.bytes(levels);
  out.dv.setUint32(lenAt, out.length - levelsStart, true);
  out.bytes(values);
  return out.result();
}

/** Serialise `columns` (all of `numRows` rows) to a Parquet file. */
export function writeParquetLite(columns: readonly LiteColumn[], numRows: number, kv: readonly { key: string; value: string }[] = []): Uint8Array {
  const out = new Bytes();
  out.bytes(utf8.encode("PAR1"));
  const chunks: ChunkMeta[] = [];
  if (numRows > 0) {
    for (const col of columns) {
      const page = encodePage(col, numRows);
      const offset = out.length;
      new Struct(out)
        .i32(1, DATA_PAGE)
        .i32(2, page.length)
        .i32(3, page.length)
        .struct(5, (s) => s.i32(1, numRows).i32(2, ENC_PLAIN).i32(3, ENC_RLE).i32(4, ENC_RLE))
        .end();
      out.bytes(page);
      const physical = col.type === "DOUBLE" ? T_DOUBLE : col.type === "BOOLEAN" ? T_BOOLEAN : T_BYTE_ARRAY;
      chunks.push({ col, physical, offset, size: out.length - offset });
    }
  }
  const metaStart = out.length;
  const meta = new Struct(out).i32(1, 1);
  meta.structList(2, [null, ...columns], (s, c) => {
    if (c === null) {
      s.str(4, "root").i32(5, columns.length);
      return;
    }
    const physical = c.type === "DOUBLE" ? T_DOUBLE : c.type === "BOOLEAN" ? T_BOOLEAN : T_BYTE_ARRAY;
    s.i32(1, physical).i32(3, OPTIONAL).str(4, c.name);
    if (c.type === "STRING") s.i32(6, UTF8);
  });
  meta.i64(3, numRows);
  const total = chunks.reduce((a, c) => a + c.size, 0);
  meta.structList(4, numRows > 0 ? [chunks] : [], (rg, cs) => {
    rg.structList(1, cs, (cc, c) => {
      cc.i64(2, c.offset).struct(3, (m) =>
        m
          .i32(1, c.physical)
          .i32List(2, [ENC_PLAIN, ENC_RLE])
          .strList(3, [c.col.name])
          .i32(4, UNCOMPRESSED)
          .i64(5, numRows)
          .i64(6, c.size)
          .i64(7, c.size)
          .i64(9, c.offset),
      );
    });
    rg.i64(2, total).i64(3, numRows);
  });
  if (kv.length > 0) meta.structList(5, kv, (s, e) => s.str(1, e.key).str(2, e.value));
  meta.str(6, "rlboard parquet-lite");
  meta.end();
  out.u32(out.length - metaStart);
  out.bytes(utf8.encode("PAR1"));
  return out.result();
}
