/**
 * One JSONL file read incrementally from a remembered byte offset.
 *
 * Policy (docs/formats.md 2.4, docs/api.md 1.9): only complete, `\n`-terminated lines are consumed;
 * a trailing partial line stays on disk until a later read. Fills are serialized through
 * a promise chain, so two concurrent readers can never append the same bytes twice (the
 * Python store had exactly that double-count bug). A file that shrank was replaced:
 * the block is rebuilt from byte 0.
 */
import fs from "node:fs";
import type { IngestResult } from "@/lib/store/telemetry/ingest";

const READ_CHUNK = 2 << 20;

export interface BlockCodec<B> {
  create(): B;
  ingest(buf: Buffer, start: number, end: number, fileOffset: number, block: B): IngestResult;
  /** The partition will not grow any more: drop spare capacity. */
  seal?(block: B): void;
  /** Called before new bytes are appended to a non-empty block (lazy blocks load fully). */
  beforeAppend?(block: B): Promise<void>;
}

export class TailFile<B> {
  block: B | null = null;
  /** Bytes consumed so far (always just past a `\n`). */
  offset = 0;
  /** Corrupt complete lines seen in [0, offset). Survives eviction (re-counted on re-read). */
  corrupt = 0;
  /** Size and mtime from the stream's latest stat. */
  size = 0;
  mtimeMs = 0;
  sealed = false;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    readonly path: string,
    readonly key: string,
    /** Start of the partition hour; null for a legacy flat file (spans all time). */
    readonly hourStart: number | null,
    private readonly codec: BlockCodec<B>,
  ) {}

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
    });
  }

  /** Install a block restored from elsewhere (binary cache) covering `[0, offset)`. */
  adopt(block: B, offset: number, corrupt: number): void {
    this.block = block;
    this.offset = offset;
    this.corrupt = corrupt;
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
    const fh = await fs.promises.open(this.path, "r");
    try {
      await this.ingestRange(fh, block, 0, this.offset);
    } finally {
      await fh.close();
    }
    return block;
  }

  /** Parse the complete lines of `[from, to)`; returns the offset after the last one. */
  private async ingestRange(fh: fs.promises.FileHandle, block: B, from: number, to: number): Promise<{ pos: number; corrupt: number; firstCorruptAt: number }> {
    let corrupt = 0;
    let firstCorruptAt = -1;
    let pos = from;
    let chunk = Math.min(READ_CHUNK, to - pos);
    let buf = Buffer.allocUnsafe(chunk);
    while (pos < to) {
      const want = Math.min(chunk, to - pos);
      if (buf.length < want) buf = Buffer.allocUnsafe(want);
      const { bytesRead } = await fh.read(buf, 0, want, pos);
      if (bytesRead <= 0) break;
      const nl = buf.lastIndexOf(10, bytesRead - 1);
      if (nl < 0) {
        // A line longer than the chunk: widen the read window; otherwise a partial tail.
        if (bytesRead === want && pos + want < to) {
          chunk *= 2;
          continue;
        }
        break;
      }
      const r = this.codec.ingest(buf, 0, nl + 1, pos, block);
      if (r.corrupt > 0) {
        corrupt += r.corrupt;
        if (firstCorruptAt < 0) firstCorruptAt = r.firstCorruptAt;
      }
      pos += nl + 1;
    }
    return { pos, corrupt, firstCorruptAt };
  }

  private async fill(): Promise<B> {
    const size = this.size;
    if (!this.block || size < this.offset) {
      this.block = this.codec.create();
      this.offset = 0;
      this.corrupt = 0;
      this.sealed = false;
    }
    const block = this.block;
    if (size <= this.offset) return block;
    let fh: fs.promises.FileHandle;
    try {
      fh = await fs.promises.open(this.path, "r");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return block;
      throw err;
    }
    try {
      if (this.offset > 0 && this.codec.beforeAppend) await this.codec.beforeAppend(block);
      const r = await this.ingestRange(fh, block, this.offset, size);
      this.offset = r.pos;
      this.corrupt += r.corrupt;
      if (r.corrupt > 0)
        console.warn(`[rlboard] skipped ${r.corrupt} corrupt line(s) in ${this.path} (first near byte ${r.firstCorruptAt})`);
    } catch (err) {
      // rows may have been appended without the offset moving: start over next time
      this.block = null;
      this.offset = 0;
      this.corrupt = 0;
      this.sealed = false;
      throw err;
    } finally {
      await fh.close();
    }
    return block;
  }

  /** Mark closed (an older hour than the newest): trims buffers once it is fully read. */
  seal(): void {
    if (!this.sealed && this.block && this.offset === this.size && this.codec.seal) {
      this.codec.seal(this.block);
      this.sealed = true;
    }
  }
}
