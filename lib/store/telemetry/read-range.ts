/**
 * Parsing one byte range of a stream file: the chunk loop every parse goes through
 * (tail-file.ts reads a file's new bytes with it; a parse worker reads its part of a large
 * file with it, parse-pool.ts) and the job a parse worker runs.
 */
import fs from "node:fs";
import { Dicts, GpuBlock, PhaseBlock, type GpuPart, type PhasePart } from "@/lib/store/telemetry/blocks";
import { GpuLineScanner, PhaseLineScanner, type IngestResult } from "@/lib/store/telemetry/ingest";

/** Bytes read at a time. */
export const READ_CHUNK = 2 << 20;

/** How a stream turns complete lines into a block (the part of `BlockCodec` a range parse needs). */
export interface RangeCodec<B> {
  ingest(buf: Buffer, start: number, end: number, fileOffset: number, block: B): IngestResult;
  /**
   * A parse from an empty block has read `done` of the `total` bytes it will read: size the
   * block's columns for the rest (one buffer instead of regrowing and copying).
   */
  expect?(block: B, done: number, total: number): void;
}

/** What parsing a byte range found: the offset after its last complete line, and its corrupt lines. */
export interface RangeResult {
  pos: number;
  corrupt: number;
  /** File offset of the first corrupt line, or -1. */
  firstCorruptAt: number;
}

/** Reads up to `len` bytes at file offset `pos` into `buf[0…)`; resolves the count (0 at the end). */
export type ReadAt = (buf: Buffer, len: number, pos: number) => Promise<number>;

/** `ReadAt` over an open file (a `FileHandle`, or the writer's `WriterFileHandle`). */
export function fileReader(fh: { read(buf: Uint8Array, off: number, len: number, pos: number): Promise<{ bytesRead: number }> }): ReadAt {
  return async (buf, len, pos) => (await fh.read(buf, 0, len, pos)).bytesRead;
}

/**
 * The complete lines of `[from, to)` into `block`, READ_CHUNK bytes at a time (a line
 * longer than that widens the window; a partial last line is left for a later read).
 * `sizeTo`: the block was empty at `from` and will hold the file up to that offset — after
 * the first chunk its columns are sized for it (`RangeCodec.expect`); null: no sizing.
 */
export async function ingestChunks<B>(
  read: ReadAt,
  codec: RangeCodec<B>,
  block: B,
  from: number,
  to: number,
  sizeTo: number | null,
): Promise<RangeResult> {
  let corrupt = 0;
  let firstCorruptAt = -1;
  let pos = from;
  let chunk = Math.min(READ_CHUNK, to - pos);
  let buf = (chunk === READ_CHUNK ? spare.pop() : undefined) ?? Buffer.allocUnsafe(chunk);
  try {
    while (pos < to) {
      const want = Math.min(chunk, to - pos);
      if (buf.length < want) buf = Buffer.allocUnsafe(want);
      const bytesRead = await read(buf, want, pos);
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
      const r = codec.ingest(buf, 0, nl + 1, pos, block);
      if (r.corrupt > 0) {
        corrupt += r.corrupt;
        if (firstCorruptAt < 0) firstCorruptAt = r.firstCorruptAt;
      }
      const first = pos === from;
      pos += nl + 1;
      if (first && sizeTo !== null && pos < sizeTo) codec.expect?.(block, pos - from, sizeTo - from);
    }
  } finally {
    // Nothing keeps a view of the buffer past `ingest` (scanners copy what they keep).
    if (buf.length === READ_CHUNK && spare.length < SPARE_MAX) spare.push(buf);
  }
  return { pos, corrupt, firstCorruptAt };
}

/**
 * Read buffers of READ_CHUNK bytes no parse holds now. A split parse runs a loop per ~32 MB
 * part: a fresh 2 MB buffer each time added to the external memory whose growth makes V8
 * collect the whole heap (#20).
 */
const spare: Buffer[] = [];
const SPARE_MAX = 8;

/**
 * A part of a stream file for a parse worker: `[from, to)` of the file open as `fd` in this
 * process (gpu_util: a part of a large file; phases: a whole file, `from` 0).
 */
export interface RangeJob {
  stream: "gpu_util" | "phases";
  fd: number;
  from: number;
  to: number;
}

/** What parsing a part found: its rows (lane ids of its own dicts, named by `laneKeys`) and the range's tally. */
export interface GpuRangeResult extends RangeResult {
  stream: "gpu_util";
  part: GpuPart;
  /** Lane id → [node, gpu] in the dicts the part was parsed with. */
  laneKeys: [string, number][];
}

/** What parsing a whole phase file found: its rows (string ids of its own dicts, named by `strings`) and the tally. */
export interface PhaseRangeResult extends RangeResult {
  stream: "phases";
  part: PhasePart;
  /** String id → text in the dicts the part was parsed with. */
  strings: string[];
}

export type PartResult = GpuRangeResult | PhaseRangeResult;

/**
 * How a line scanner's lines become its block, a block that sizes itself for the bytes to
 * come (gpu_util, phases; the store's codec adds what a stream needs besides).
 */
export function scannerCodec<B extends { expect(done: number, total: number): void }>(scanner: {
  ingest(buf: Buffer, start: number, end: number, fileOffset: number, block: B): IngestResult;
}): RangeCodec<B> {
  return {
    ingest: (buf, s, e, off, block) => scanner.ingest(buf, s, e, off, block),
    expect: (block, done, total) => block.expect(done, total),
  };
}

/** `[from, to)` of a gpu_util file into a fresh block with dicts of its own. */
export async function parseGpuRange(read: ReadAt, from: number, to: number): Promise<GpuRangeResult> {
  const dicts = new Dicts();
  const block = new GpuBlock();
  const r = await ingestChunks(read, scannerCodec(new GpuLineScanner(dicts)), block, from, to, to);
  block.trim();
  return { ...r, stream: "gpu_util", part: block.toPart(), laneKeys: dicts.laneNode.map((node, id): [string, number] => [node, dicts.laneGpu[id]!]) };
}

/** `[0, to)` of a phase file into a fresh block with dicts of its own, its OPEN markers matched inside it. */
export async function parsePhaseRange(read: ReadAt, to: number): Promise<PhaseRangeResult> {
  const dicts = new Dicts();
  const block = new PhaseBlock(dicts.phaseStrings);
  const r = await ingestChunks(read, scannerCodec(new PhaseLineScanner(dicts)), block, 0, to, to);
  block.trim();
  return { ...r, stream: "phases", part: block.toPart(), strings: [...dicts.phaseStrings.values] };
}

/** What a parse worker runs for a job (it reads the descriptor synchronously: it has nothing else to do). */
export function parseRangeJob(job: RangeJob): Promise<PartResult> {
  const read: ReadAt = (buf, len, pos) => Promise.resolve(fs.readSync(job.fd, buf, 0, len, pos));
  if (job.stream === "gpu_util") return parseGpuRange(read, job.from, job.to);
  if (job.stream === "phases" && job.from === 0) return parsePhaseRange(read, job.to);
  return Promise.reject(new Error(`no range parser for stream '${String(job.stream)}' from byte ${job.from}`));
}

/** The buffers behind a result's columns: transferred to the thread that asked, not copied. */
export function partBuffers(r: PartResult): ArrayBuffer[] {
  let cols: ArrayBufferView[];
  if (r.stream === "gpu_util") {
    const p = r.part;
    cols = [p.gTs, p.gStart, p.lane, p.util, p.mem, p.power];
  } else {
    const p = r.part;
    cols = [p.t0, p.t1, p.rank, p.name, p.node, p.role, p.gpuOff, p.gpus, p.open];
  }
  return [...new Set(cols.map((a) => a.buffer as ArrayBuffer))];
}
