/**
 * Minimal read-only ZIP reader for torch `.pt` archives (docs/api.md 1.2, "Zip layer").
 *
 * Policy: positional reads only (`FileHandle.read` at offsets) — the archive is never
 * read whole. The end-of-central-directory record and the central directory are read
 * once at open; each entry's LOCAL header is read lazily on first access, because torch
 * pads entry data to 64-byte alignment through the local extra field, so the data
 * offset is `headerOffset + 30 + nameLength + extraLength` (the central directory's
 * extra field differs). ZIP64 (EOCD64 locator/record and zip64 extra fields) is
 * supported; torch writes these records even for small files. Only STORED (method 0)
 * entries can be read; anything else raises `PtFormatError`.
 */
import { open, type FileHandle } from "node:fs/promises";
import { nameLabel, PtFormatError } from "./errors";

export { PtFormatError } from "./errors";

export interface ZipEntry {
  readonly name: string;
  /** Offset of the entry's LOCAL file header (data offset: see `ZipArchive.dataOffset`). */
  readonly headerOffset: number;
  /** Uncompressed size in bytes. */
  readonly size: number;
  readonly compressedSize: number;
  /** Compression method (0 = STORED; the only one this reader accepts). */
  readonly method: number;
  readonly flags: number;
}

export interface ZipArchive {
  readonly path: string;
  readonly fileSize: number;
  /** Entries by name (central-directory order is kept in `names`). */
  readonly entries: ReadonlyMap<string, ZipEntry>;
  readonly names: readonly string[];
  readonly zip64: boolean;
  /** Total bytes fetched from disk so far (instrumentation for tests/benchmarks). */
  readonly bytesRead: number;
  /** Positional reads issued so far (instrumentation for tests/benchmarks). */
  readonly readCount: number;
  /** Absolute file offset of an entry's data (reads its local header once, cached). */
  dataOffset(name: string): Promise<number>;
  /** Whole entry data. */
  read(name: string): Promise<Buffer>;
  /** `byteLength` bytes starting `byteOffset` bytes into the entry's data. */
  readRange(name: string, byteOffset: number, byteLength: number): Promise<Buffer>;
  /**
   * Several ranges of several entries with as few positional reads as possible: the
   * file intervals are sorted and merged when at most `maxGap` bytes apart (up to
   * `maxRun` bytes per read); independent runs are read concurrently. An entry whose
   * data offset is not known yet is read from its local header on, which resolves it in
   * the same read. Results (views into the run buffers) are in request order.
   */
  readSpans(spans: readonly EntrySpan[], opts?: ReadSpansOptions): Promise<Uint8Array[]>;
  close(): Promise<void>;
}

export interface EntrySpan {
  name: string;
  byteOffset: number;
  byteLength: number;
}

export interface ReadSpansOptions {
  /** Merge two intervals when the hole between them is at most this many bytes. Default 256 KiB. */
  maxGap?: number;
  /** Upper bound of one merged read. Default 64 MiB. */
  maxRun?: number;
}

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_EOCD = 0x06054b50;
const SIG_EOCD64 = 0x06064b50;
const SIG_EOCD64_LOCATOR = 0x07064b50;
const EOCD_SIZE = 22;
const LOCATOR_SIZE = 20;
const EOCD64_MIN_SIZE = 56;
const MAX_COMMENT = 0xffff;
/** Single `read` calls are capped below Node's 2 GiB I/O limit. */
const READ_CHUNK = 1 << 30;

function u64(buf: Buffer, off: number): number {
  const lo = buf.readUInt32LE(off);
  const hi = buf.readUInt32LE(off + 4);
  if (hi >= 0x200000) return Number.NaN; // ≥ 2^53: not addressable, treated as corrupt
  return hi * 0x1_0000_0000 + lo;
}

/**
 * Open a zip archive for positional reads. ENOENT & co. propagate untouched.
 * `flags`: open(2) flags (default read-only); callers confining reads to a run directory
 * pass read-only + O_NOFOLLOW on a realpath'ed name (lib/store/safe-fs.ts).
 */
export async function openZip(path: string, flags: string | number = "r"): Promise<ZipArchive> {
  const fh = await open(path, flags);
  try {
    const archive = new ZipReader(path, fh);
    await archive.init();
    return archive;
  } catch (err) {
    await fh.close().catch(() => undefined);
    throw err;
  }
}

class ZipReader implements ZipArchive {
  readonly path: string;
  fileSize = 0;
  entries = new Map<string, ZipEntry>();
  names: string[] = [];
  zip64 = false;
  bytesRead = 0;
  readCount = 0;
  private fh: FileHandle | null;
  private cdOffset = 0;
  private readonly offsets = new Map<string, Promise<number>>();
  /** Data offsets already resolved (synchronous view of `offsets`). */
  private readonly knownOffsets = new Map<string, number>();
  /** Local-header offsets ascending, to bound an entry's extent (next header or CD). */
  private headerEnds: Map<string, number> | null = null;

  constructor(path: string, fh: FileHandle) {
    this.path = path;
    this.fh = fh;
  }

  private fail(detail: string): never {
    throw new PtFormatError(this.path, detail);
  }

  /** Read exactly `length` bytes at `position` into a fresh (unpooled) Buffer. */
  private async readAt(position: number, length: number): Promise<Buffer> {
    const fh = this.fh;
    if (fh === null) throw new Error(`${this.path}: archive is closed`);
    if (position < 0 || position + length > this.fileSize) {
      this.fail(`read of ${length} bytes at offset ${position} is past the end of the file (${this.fileSize} bytes; truncated?)`);
    }
    const buf = Buffer.allocUnsafeSlow(length);
    let done = 0;
    while (done < length) {
      const want = Math.min(length - done, READ_CHUNK);
      const { bytesRead } = await fh.read(buf, done, want, position + done);
      if (bytesRead === 0) this.fail(`unexpected end of file at offset ${position + done} (file shrank or truncated)`);
      done += bytesRead;
      this.bytesRead += bytesRead;
      this.readCount++;
    }
    return buf;
  }

  async init(): Promise<void> {
    const fh = this.fh;
    if (fh === null) throw new Error(`${this.path}: archive is closed`);
    this.fileSize = (await fh.stat()).size;
    if (this.fileSize < EOCD_SIZE) this.fail(`only ${this.fileSize} bytes, too small for a zip archive (truncated?)`);

    // --- end of central directory: scan backwards; the comment must end exactly at EOF.
    // Try a small tail first (torch writes no archive comment), then the maximum.
    let tail: Buffer = Buffer.alloc(0);
    let tailLen = 0;
    let tailStart = 0;
    let eocdRel = -1;
    for (const want of [256, EOCD_SIZE + MAX_COMMENT]) {
      if (eocdRel >= 0 || tailLen === this.fileSize) break;
      tailLen = Math.min(this.fileSize, want);
      tailStart = this.fileSize - tailLen;
      tail = await this.readAt(tailStart, tailLen);
      for (let i = tailLen - EOCD_SIZE; i >= 0; i--) {
        if (tail[i] === 0x50 && tail.readUInt32LE(i) === SIG_EOCD && i + EOCD_SIZE + tail.readUInt16LE(i + 20) === tailLen) {
          eocdRel = i;
          break;
        }
      }
    }
    if (eocdRel < 0) this.fail("no end-of-central-directory record (truncated or still being written?)");
    const eocdPos = tailStart + eocdRel;
    let count = tail.readUInt16LE(eocdRel + 10);
    let cdSize = tail.readUInt32LE(eocdRel + 12);
    let cdOffset = tail.readUInt32LE(eocdRel + 16);
    let cdLimit = eocdPos;

    // --- ZIP64 locator immediately before the EOCD.
    if (eocdPos >= LOCATOR_SIZE) {
      const loc = eocdRel >= LOCATOR_SIZE ? tail.subarray(eocdRel - LOCATOR_SIZE, eocdRel) : await this.readAt(eocdPos - LOCATOR_SIZE, LOCATOR_SIZE);
      if (loc.readUInt32LE(0) === SIG_EOCD64_LOCATOR) {
        const recPos = u64(loc, 8);
        if (!(recPos >= 0 && recPos + EOCD64_MIN_SIZE <= eocdPos - LOCATOR_SIZE)) {
          this.fail(`bad ZIP64 end-of-central-directory locator (record offset ${recPos})`);
        }
        const rec = await this.readAt(recPos, EOCD64_MIN_SIZE);
        if (rec.readUInt32LE(0) !== SIG_EOCD64) this.fail(`bad ZIP64 end-of-central-directory signature at offset ${recPos}`);
        count = u64(rec, 32);
        cdSize = u64(rec, 40);
        cdOffset = u64(rec, 48);
        cdLimit = recPos;
        this.zip64 = true;
      }
    }
    if (!this.zip64 && (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff)) {
      this.fail("ZIP64 sizes flagged but no ZIP64 end-of-central-directory locator");
    }
    if (!(Number.isFinite(cdSize) && Number.isFinite(cdOffset) && Number.isFinite(count)) || cdOffset + cdSize > cdLimit) {
      this.fail(`central directory (offset ${cdOffset}, ${cdSize} bytes) lies outside the file`);
    }
    this.cdOffset = cdOffset;

    // --- central directory.
    const cd = await this.readAt(cdOffset, cdSize);
    // DataView getters (builtins) rather than Buffer#readUInt*LE: this loop runs once
    // per entry (thousands per train shard) in cold code.
    const dv = new DataView(cd.buffer, cd.byteOffset, cd.byteLength);
    let p = 0;
    for (let i = 0; i < count; i++) {
      if (p + 46 > cdSize || dv.getUint32(p, true) !== SIG_CENTRAL) this.fail(`bad central directory entry #${i} at offset ${cdOffset + p}`);
      const flags = dv.getUint16(p + 8, true);
      const method = dv.getUint16(p + 10, true);
      let compressedSize = dv.getUint32(p + 20, true);
      let size = dv.getUint32(p + 24, true);
      const nameLen = dv.getUint16(p + 28, true);
      const extraLen = dv.getUint16(p + 30, true);
      const commentLen = dv.getUint16(p + 32, true);
      let headerOffset = dv.getUint32(p + 42, true);
      const end = p + 46 + nameLen + extraLen + commentLen;
      if (end > cdSize) this.fail(`central directory entry #${i} overruns the directory`);
      const name = cd.toString("utf8", p + 46, p + 46 + nameLen);
      // zip64 extended information: present fields are exactly those saturated above.
      let x = p + 46 + nameLen;
      const xEnd = x + extraLen;
      while (x + 4 <= xEnd) {
        const id = dv.getUint16(x, true);
        const len = dv.getUint16(x + 2, true);
        if (id === 0x0001) {
          let q = x + 4;
          const qEnd = q + len;
          if (size === 0xffffffff && q + 8 <= qEnd) { size = u64(cd, q); q += 8; }
          if (compressedSize === 0xffffffff && q + 8 <= qEnd) { compressedSize = u64(cd, q); q += 8; }
          if (headerOffset === 0xffffffff && q + 8 <= qEnd) { headerOffset = u64(cd, q); q += 8; }
        }
        x += 4 + len;
      }
      if (!(Number.isFinite(size) && Number.isFinite(compressedSize) && Number.isFinite(headerOffset)) || headerOffset >= cdOffset) {
        this.fail(`entry ${nameLabel(name)}: bad sizes/offset in central directory`);
      }
      if (!this.entries.has(name)) this.names.push(name);
      this.entries.set(name, { name, headerOffset, size, compressedSize, method, flags });
      p = end;
    }
  }

  private entry(name: string): ZipEntry {
    const e = this.entries.get(name);
    if (e === undefined) this.fail(`missing zip entry ${nameLabel(name)}`);
    if (e.method !== 0) this.fail(`entry ${nameLabel(name)} is compressed (method ${e.method}); torch archives store entries uncompressed`);
    if ((e.flags & 1) !== 0) this.fail(`entry ${nameLabel(name)} is encrypted`);
    return e;
  }

  dataOffset(name: string): Promise<number> {
    let p = this.offsets.get(name);
    if (p === undefined) {
      const known = this.knownOffsets.get(name);
      p = known !== undefined ? Promise.resolve(known) : this.resolveDataOffset(name);
      this.offsets.set(name, p);
      p.catch(() => this.offsets.delete(name));
    }
    return p;
  }

  private async resolveDataOffset(name: string): Promise<number> {
    const e = this.entry(name);
    if (e.headerOffset + 30 > this.cdOffset) this.fail(`entry ${nameLabel(name)}: local header lies outside the file`);
    const h = await this.readAt(e.headerOffset, 30);
    return this.parseLocalHeader(e, h, 0);
  }

  /** Data offset from the local header at `at` in `buf` (which starts at the header). */
  private parseLocalHeader(e: ZipEntry, buf: Uint8Array, at: number, view?: DataView): number {
    const dv = view ?? new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    if (at + 30 > buf.length || dv.getUint32(at, true) !== SIG_LOCAL) {
      this.fail(`entry ${nameLabel(e.name)}: bad local header signature at offset ${e.headerOffset}`);
    }
    const off = e.headerOffset + 30 + dv.getUint16(at + 26, true) + dv.getUint16(at + 28, true);
    if (off + e.size > this.cdOffset) {
      this.fail(`entry ${nameLabel(e.name)}: data (offset ${off}, ${e.size} bytes) overruns the central directory (truncated?)`);
    }
    this.knownOffsets.set(e.name, off);
    return off;
  }

  /** End of the file region owned by an entry: the next local header, or the central directory. */
  private extentEnd(e: ZipEntry): number {
    if (this.headerEnds === null) {
      // Writers emit the central directory in file order; sort only when they did not.
      const sorted = [...this.entries.values()];
      let ordered = true;
      for (let i = 1; i < sorted.length && ordered; i++) ordered = (sorted[i - 1] as ZipEntry).headerOffset <= (sorted[i] as ZipEntry).headerOffset;
      if (!ordered) sorted.sort((a, b) => a.headerOffset - b.headerOffset);
      this.headerEnds = new Map();
      for (let i = 0; i < sorted.length; i++) {
        const next = sorted[i + 1];
        this.headerEnds.set((sorted[i] as ZipEntry).name, next ? next.headerOffset : this.cdOffset);
      }
    }
    return this.headerEnds.get(e.name) ?? this.cdOffset;
  }

  async readSpans(spans: readonly EntrySpan[], opts: ReadSpansOptions = {}): Promise<Uint8Array[]> {
    const maxGap = opts.maxGap ?? 256 * 1024;
    const maxRun = opts.maxRun ?? 64 * 1024 * 1024;
    interface Iv {
      i: number;
      e: ZipEntry;
      lo: number; // file interval [lo, hi)
      hi: number;
      header: boolean; // interval starts at the local header (offset unresolved)
    }
    const ivs: Iv[] = [];
    // Partial spans of entries with unknown offsets resolve their header first (small read).
    await Promise.all(
      spans.map(async (sp) => {
        const e = this.entry(sp.name);
        if (!(Number.isInteger(sp.byteOffset) && Number.isInteger(sp.byteLength)) || sp.byteOffset < 0 || sp.byteLength < 0 || sp.byteOffset + sp.byteLength > e.size) {
          this.fail(`entry ${nameLabel(sp.name)}: range [${sp.byteOffset}, ${sp.byteOffset + sp.byteLength}) outside its ${e.size} bytes`);
        }
        if (!this.knownOffsets.has(e.name) && sp.byteLength * 2 < e.size) await this.dataOffset(e.name);
      }),
    );
    spans.forEach((sp, i) => {
      const e = this.entry(sp.name);
      const known = this.knownOffsets.get(e.name);
      if (known !== undefined) {
        ivs.push({ i, e, lo: known + sp.byteOffset, hi: known + sp.byteOffset + sp.byteLength, header: false });
      } else {
        if (e.headerOffset + 30 > this.cdOffset) this.fail(`entry ${nameLabel(e.name)}: local header lies outside the file`);
        ivs.push({ i, e, lo: e.headerOffset, hi: this.extentEnd(e), header: true });
      }
    });
    ivs.sort((a, b) => a.lo - b.lo || a.hi - b.hi);
    const runs: { lo: number; hi: number; members: Iv[] }[] = [];
    for (const iv of ivs) {
      const run = runs[runs.length - 1];
      if (run && iv.lo - run.hi <= maxGap && Math.max(run.hi, iv.hi) - run.lo <= maxRun) {
        run.hi = Math.max(run.hi, iv.hi);
        run.members.push(iv);
      } else {
        // Runs start on a 64-byte file boundary, so 64-aligned entry data (torch pads
        // to it) lands aligned in the run buffer (zero-copy typed views).
        runs.push({ lo: iv.lo - (iv.lo % 64), hi: iv.hi, members: [iv] });
      }
    }
    const out = new Array<Uint8Array>(spans.length);
    await Promise.all(
      runs.map(async (run) => {
        const buf = await this.readAt(run.lo, run.hi - run.lo);
        const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
        for (const iv of run.members) {
          const sp = spans[iv.i] as EntrySpan;
          let start: number;
          if (iv.header) {
            const off = this.knownOffsets.get(iv.e.name) ?? this.parseLocalHeader(iv.e, buf, iv.lo - run.lo, dv);
            if (!this.offsets.has(iv.e.name)) this.offsets.set(iv.e.name, Promise.resolve(off));
            start = off + sp.byteOffset - run.lo;
            if (start + sp.byteLength > buf.length) {
              this.fail(`entry ${nameLabel(iv.e.name)}: data (offset ${off}, ${iv.e.size} bytes) overruns its extent (truncated?)`);
            }
          } else {
            start = iv.lo - run.lo;
          }
          // A plain Uint8Array view (cheaper to create than a Buffer subarray).
          out[iv.i] = new Uint8Array(buf.buffer, buf.byteOffset + start, sp.byteLength);
        }
      }),
    );
    return out;
  }

  async read(name: string): Promise<Buffer> {
    const e = this.entry(name);
    return this.readAt(await this.dataOffset(name), e.size);
  }

  async readRange(name: string, byteOffset: number, byteLength: number): Promise<Buffer> {
    const e = this.entry(name);
    if (!(Number.isInteger(byteOffset) && Number.isInteger(byteLength)) || byteOffset < 0 || byteLength < 0 || byteOffset + byteLength > e.size) {
      this.fail(`entry ${nameLabel(name)}: range [${byteOffset}, ${byteOffset + byteLength}) outside its ${e.size} bytes`);
    }
    return this.readAt((await this.dataOffset(name)) + byteOffset, byteLength);
  }

  async close(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    if (fh !== null) await fh.close();
  }
}
