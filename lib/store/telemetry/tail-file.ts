/**
 * One JSONL file read incrementally from a remembered byte offset.
 *
 * Policy (docs/formats.md 2.4, docs/api.md 1.9): only complete, `\n`-terminated lines are consumed;
 * a trailing partial line stays on disk until a later read. Fills are serialized through
 * a promise chain, so two concurrent readers can never append the same bytes twice (the
 * Python store had exactly that double-count bug).
 *
 * A file that was replaced (issue #11 item 15) is dropped and re-read from byte 0, so a
 * block never mixes the old file's records with the new one's. Replaced means: its
 * inode/device differ from those of the file the block was read from, or it is shorter
 * than the consumed offset, or the bytes already consumed no longer match (the first 64
 * bytes and the 64 bytes before the offset are kept as a fingerprint and compared before
 * new bytes are appended).
 *
 * Files inside a run directory are opened through its `RunFs` (lib/store/safe-fs.ts): a
 * file that resolves outside the run directory is never opened and reads as empty.
 */
import fs from "node:fs";
import { ingestSplit, ingestWhole, type SplitCodec, type WholeCodec } from "@/lib/store/telemetry/parse-pool";
import { fileReader, ingestChunks, type RangeCodec, type RangeResult } from "@/lib/store/telemetry/read-range";
import { isOutside, type RunFs } from "@/lib/store/safe-fs";

/** Bytes kept from the start of the file and from just before the offset (fingerprint). */
const FINGERPRINT_BYTES = 64;

interface Fingerprint {
  /** `[0, head.length)` of the file. */
  head: Buffer;
  /** `[offset - tail.length, offset)` of the file. */
  tail: Buffer;
  offset: number;
}

async function readExactly(fh: fs.promises.FileHandle, len: number, pos: number): Promise<Buffer> {
  const buf = Buffer.alloc(len);
  let done = 0;
  while (done < len) {
    const { bytesRead } = await fh.read(buf, done, len - done, pos + done);
    if (bytesRead <= 0) break;
    done += bytesRead;
  }
  return done === len ? buf : buf.subarray(0, done);
}

async function takeFingerprint(fh: fs.promises.FileHandle, offset: number): Promise<Fingerprint> {
  const headLen = Math.min(FINGERPRINT_BYTES, offset);
  const tailLen = Math.min(FINGERPRINT_BYTES, offset);
  const [head, tail] = await Promise.all([readExactly(fh, headLen, 0), readExactly(fh, tailLen, offset - tailLen)]);
  return { head, tail, offset };
}

async function fingerprintMatches(fh: fs.promises.FileHandle, fp: Fingerprint): Promise<boolean> {
  const now = await takeFingerprint(fh, fp.offset);
  return now.head.equals(fp.head) && now.tail.equals(fp.tail);
}

/** Parses (`ingestRange`) running now, in any file of this process. */
let parsing = 0;

/** Whether a file is being parsed now (deferred cache writes wait for the query's parse; binary-cache.ts). */
export function parseInFlight(): boolean {
  return parsing > 0;
}

export interface BlockCodec<B> extends RangeCodec<B> {
  create(): B;
  /** A large file read from byte 0 may be parsed in parts, in worker threads (parse-pool.ts). */
  split?: SplitCodec<B>;
  /** A large file read from byte 0 may be parsed whole by a worker thread while this thread parses others (parse-pool.ts). */
  whole?: WholeCodec<B>;
  /** The partition will not grow any more: drop spare capacity. */
  seal?(block: B): void;
  /** Called before new bytes are appended to a non-empty block (lazy blocks load fully). */
  beforeAppend?(block: B): Promise<void>;
  /** Bytes the block holds (its columns), for a stream's byte budget (`StreamOptions.maxBytes`). */
  bytes?(block: B): number;
}

export class TailFile<B> {
  block: B | null = null;
  /** Bytes consumed so far (always just past a `\n`). */
  offset = 0;
  /** Corrupt complete lines seen in [0, offset). Survives eviction (re-counted on re-read). */
  corrupt = 0;
  /** Size, mtime and inode/device from the stream's latest stat (ino 0: unknown). */
  size = 0;
  mtimeMs = 0;
  ino = 0;
  dev = 0;
  sealed = false;
  /** Times the block was dropped because the file was replaced (tests, logs). */
  replacements = 0;
  private chain: Promise<unknown> = Promise.resolve();
  /** Identity of the file `[0, offset)` was read from (0: unknown, e.g. adopted block). */
  private readIno = 0;
  private readDev = 0;
  private fingerprint: Fingerprint | null = null;

  constructor(
    readonly path: string,
    readonly key: string,
    /** Start of the partition hour; null for a legacy flat file (spans all time). */
    readonly hourStart: number | null,
    private readonly codec: BlockCodec<B>,
    /** Confined access to the run directory holding `path` (null: open `path` as is). */
    private readonly fsys: RunFs | null = null,
  ) {}

  /** Open the file read-only (confined to the run directory when there is one). */
  open(): Promise<fs.promises.FileHandle> {
    return this.fsys ? this.fsys.open(this.fsys.relOf(this.path)) : fs.promises.open(this.path, "r");
  }

  private reset(): void {
    this.block = this.codec.create();
    this.offset = 0;
    this.corrupt = 0;
    this.sealed = false;
    this.readIno = 0;
    this.readDev = 0;
    this.fingerprint = null;
  }

  /** The block, caught up with `size` bytes. */
  read(): Promise<B> {
    const run = this.chain.then(() => this.fill());
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Forget the parsed block (LRU eviction); the next read re-parses from byte 0. */
  evict(): void {
    this.chain = this.chain.then(() => {
      this.block = null;
      this.offset = 0;
      this.sealed = false;
      this.fingerprint = null;
    });
  }

  /** Install a block restored from elsewhere (binary cache) covering `[0, offset)`. */
  adopt(block: B, offset: number, corrupt: number): void {
    this.block = block;
    this.offset = offset;
    this.corrupt = corrupt;
    this.fingerprint = null;
    this.readIno = 0;
    this.readDev = 0;
  }

  /** Serialize a task against fills of this file. */
  withLock<T>(task: () => Promise<T>): Promise<T> {
    const run = this.chain.then(task);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * The bytes consumed so far, `[0, offset)`, parsed into a new block; state untouched
   * (fallback for a cache-backed block whose cache entry went away).
   */
  async parseFresh(): Promise<B> {
    const block = this.codec.create();
    const fh = await this.open();
    try {
      await this.ingestRange(fh, block, 0, this.offset);
    } finally {
      await fh.close();
    }
    return block;
  }

  /** Parse the complete lines of `[from, to)`; returns the offset after the last one. */
  private async ingestRange(fh: fs.promises.FileHandle, block: B, from: number, to: number): Promise<RangeResult> {
    parsing++;
    try {
      // A whole large file is parsed in parts, in worker threads too (parse-pool.ts).
      const split = from === 0 ? this.codec.split : undefined;
      if (split) {
        const r = await ingestSplit(fh, this.codec, split, block, to);
        if (r) return r;
      }
      const whole = from === 0 ? this.codec.whole : undefined;
      if (whole) {
        const r = await ingestWhole(fh, this.codec, whole, block, to);
        if (r) return r;
      }
      return await ingestChunks(fileReader(fh), this.codec, block, from, to, from === 0 ? to : null);
    } finally {
      parsing--;
    }
  }

  /** The stat says another file now stands at `path` than the one the block was read from. */
  private statSaysReplaced(): boolean {
    return this.readIno !== 0 && this.ino !== 0 && (this.ino !== this.readIno || this.dev !== this.readDev);
  }

  private async fill(): Promise<B> {
    const size = this.size;
    if (this.block && this.offset > 0 && (size < this.offset || this.statSaysReplaced())) {
      this.replacements++;
      this.reset();
    }
    if (!this.block) this.reset();
    if (size <= this.offset) return this.block as B;
    let fh: fs.promises.FileHandle;
    try {
      fh = await this.open();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return this.block as B;
      if (isOutside(err)) return this.block as B; // never opened; the stream's stat skips it too
      throw err;
    }
    try {
      const st = await fh.stat();
      // The open file, not the earlier stat, decides: a rename between the two is caught.
      const replaced =
        this.offset > 0 &&
        ((this.readIno !== 0 && (st.ino !== this.readIno || st.dev !== this.readDev)) ||
          st.size < this.offset ||
          (this.fingerprint !== null && !(await fingerprintMatches(fh, this.fingerprint))));
      if (replaced) {
        this.replacements++;
        this.reset();
      }
      const block = this.block as B;
      const end = Math.min(size, st.size);
      if (this.offset > 0 && end > this.offset && this.codec.beforeAppend) await this.codec.beforeAppend(block);
      const r = await this.ingestRange(fh, block, this.offset, end);
      this.offset = r.pos;
      this.corrupt += r.corrupt;
      this.readIno = st.ino;
      this.readDev = st.dev;
      this.fingerprint = this.offset > 0 ? await takeFingerprint(fh, this.offset) : null;
      if (r.corrupt > 0)
        console.warn(`[rlboard] skipped ${r.corrupt} corrupt line(s) in ${this.path} (first near byte ${r.firstCorruptAt})`);
    } catch (err) {
      // rows may have been appended without the offset moving: start over next time
      this.block = null;
      this.offset = 0;
      this.corrupt = 0;
      this.sealed = false;
      this.fingerprint = null;
      throw err;
    } finally {
      await fh.close();
    }
    return this.block as B;
  }

  /** Mark closed (an older hour than the newest): trims buffers once it is fully read. */
  seal(): void {
    if (!this.sealed && this.block && this.offset === this.size && this.codec.seal) {
      this.codec.seal(this.block);
      this.sealed = true;
    }
  }
}
