/**
 * Append-only JSONL writer with the layout of docs/formats.md §1/§3.
 *
 * Layout: flat streams go to `{dash}/{stream}.jsonl`; partitioned streams to
 * `{dash}/{stream}/{YYYYMMDD_HH}.jsonl`, keyed by the UTC hour of `ts`
 * (phases: `t1`, or `t0` for an OPEN marker with `t1 == -1.0`).
 *
 * Write policy:
 *   - per call, every target file is opened once in append mode, receives its
 *     new lines in as few `write`s as the chunk size allows (looping only on
 *     a short write), optionally fsynced, and closed — no long-lived handles,
 *     no per-record syscalls. Groups are written in ascending hour order and keep
 *     the order of the input inside a file. Only whole lines are written.
 *   - torn tail: the first time this process touches a file, a tail without a
 *     final `\n` (left by a crash mid-write) is truncated back to the last
 *     `\n`. Readers never consume bytes after the last `\n`, so no reader
 *     offset is invalidated, and new lines never get glued onto garbage. This
 *     is the one place the writer truncates; it is reported via `onTornTail`.
 *   - a failed write (EIO, ENOSPC after some bytes, …) keeps the complete
 *     lines that reached the file — a reader may already have consumed them —
 *     and cuts the torn rest back to the last `\n` (the file size is re-read
 *     with fstat, so this holds whatever write() reported). Those lines count
 *     as written; the lines after them are returned as failed, for the caller
 *     to retry: no line is ever written twice and no torn line is left in the
 *     middle of a file. If even the cut fails, the file stays "unverified" and
 *     the torn-tail repair below runs before its next append, with the same
 *     result. Other files of the call proceed.
 *   - a file's lines are written in chunks of at most `MAX_WRITE_CHARS` (1 MiB;
 *     a longer line alone): the transient text stays small, V8's ~512 MB
 *     string limit is never near, and on a full disk a retry of a large
 *     backlog stops at its first chunk instead of building all of it.
 *
 * Output is 7-bit ASCII (docs/formats.md §2.2), so a line's byte length is its
 * string length.
 */
import { join } from "node:path";
import { hourKeyOfIndex, isPartitioned, partitionTs } from "@/lib/store/format";
import type { StreamName, StreamRecords } from "@/lib/store/format";
import { LINE_SERIALIZERS } from "./serialize";
import { nodeWriterFs } from "./writer-fs";
import type { WriterFileHandle, WriterFs } from "./writer-fs";

export interface FileError {
  /** Path relative to the dashboard dir. */
  file: string;
  error: Error;
}

export interface AppendResult<R> {
  /** Lines that reached disk. */
  written: number;
  /** Records whose lines did not reach disk, in input order; retry them. */
  failed: R[];
  fileErrors: FileError[];
  /** Records that could not be serialized at all (never retried). */
  unserializable: { record: R; error: Error }[];
}

/** Outcome of `appendPrepared`. */
export interface PreparedResult {
  /** Lines that reached disk. */
  written: number;
  /** Indices (ascending) of the lines that did not reach disk; retry them. */
  failed: number[];
  fileErrors: FileError[];
}

export interface AppenderOptions {
  fs?: WriterFs;
  /** fsync each file after its write (default false, like the Python collector). */
  fsync?: boolean;
  /** Called when a torn tail is truncated on first touch. */
  onTornTail?: (file: string, droppedBytes: number) => void;
}

/** Largest text handed to one append (see the module header). */
export const MAX_WRITE_CHARS = 1 << 20;

/**
 * Serialize one record: its line (without `\n`) and, for partitioned streams,
 * the index of its UTC hour (0 for flat streams). Throws for a record that
 * cannot be written (e.g. a timestamp outside years 0000..9999).
 */
export function prepareRecord<S extends StreamName>(stream: S, r: StreamRecords[S]): { line: string; hour: number } {
  const line = (LINE_SERIALIZERS[stream] as (r: StreamRecords[S]) => string)(r);
  if (!isPartitioned(stream)) return { line, hour: 0 };
  const hour = Math.floor(partitionTs(stream, r) / 3600);
  hourKeyOfIndex(hour); // validates the range before anything is written
  return { line, hour };
}

const encoder = new TextEncoder();

export class PartitionedAppender {
  private readonly fs: WriterFs;
  private readonly fsync: boolean;
  private readonly onTornTail: ((file: string, droppedBytes: number) => void) | undefined;
  /** Files whose tail this process has verified (ends in `\n` or is empty). */
  private readonly verified = new Set<string>();

  constructor(
    readonly dashDir: string,
    opts: AppenderOptions = {},
  ) {
    this.fs = opts.fs ?? nodeWriterFs;
    this.fsync = opts.fsync ?? false;
    this.onTornTail = opts.onTornTail;
  }

  /** Serialize and append `records` of one stream; see the module header for the policy. */
  async appendStream<S extends StreamName>(stream: S, records: readonly StreamRecords[S][]): Promise<AppendResult<StreamRecords[S]>> {
    type R = StreamRecords[S];
    const result: AppendResult<R> = { written: 0, failed: [], fileErrors: [], unserializable: [] };
    const lines: string[] = [];
    const hours: number[] = [];
    const kept: R[] = [];
    for (const r of records) {
      try {
        const p = prepareRecord(stream, r);
        lines.push(p.line);
        hours.push(p.hour);
        kept.push(r);
      } catch (e) {
        result.unserializable.push({ record: r, error: e as Error });
      }
    }
    const res = await this.appendPrepared(stream, lines, hours);
    result.written = res.written;
    result.fileErrors = res.fileErrors;
    for (const i of res.failed) result.failed.push(kept[i] as R);
    return result;
  }

  /**
   * Append already serialized lines of one stream (`hours[i]` from
   * `prepareRecord`; ignored for flat streams). Lines are grouped per file in
   * ascending hour order and keep their input order inside a file.
   */
  async appendPrepared(stream: StreamName, lines: readonly string[], hours: readonly number[]): Promise<PreparedResult> {
    const result: PreparedResult = { written: 0, failed: [], fileErrors: [] };
    if (lines.length === 0) return result;
    const partitioned = isPartitioned(stream);
    // hour index (0 for flat streams) -> indices of its lines, in input order;
    // `undefined` indices: the group is all of `lines` (the common case).
    const groups = new Map<number, number[] | undefined>();
    const first = partitioned ? (hours[0] as number) : 0;
    let split = -1;
    if (partitioned) for (let i = 1; i < lines.length && split < 0; i++) if (hours[i] !== first) split = i;
    if (split < 0) groups.set(first, undefined);
    else {
      let lastHour = first;
      let last: number[] = Array.from({ length: split }, (_, i) => i);
      groups.set(first, last);
      for (let i = split; i < lines.length; i++) {
        const hour = hours[i] as number;
        if (hour !== lastHour) {
          lastHour = hour;
          let g = groups.get(hour);
          if (!g) groups.set(hour, (g = []));
          last = g;
        }
        last.push(i);
      }
    }
    const failedMask = new Uint8Array(lines.length);
    let anyFailed = false;
    const failGroup = (idx: readonly number[] | undefined, from: number): void => {
      if (idx === undefined) failedMask.fill(1, from);
      else for (let k = from; k < idx.length; k++) failedMask[idx[k] as number] = 1;
      anyFailed = true;
    };
    let dirError: Error | undefined;
    if (partitioned) {
      try {
        await this.fs.mkdir(join(this.dashDir, stream));
      } catch (e) {
        dirError = e as Error;
        result.fileErrors.push({ file: `${stream}/`, error: dirError });
      }
    }
    for (const [hour, idx] of [...groups].sort((a, b) => a[0] - b[0])) {
      if (dirError) {
        failGroup(idx, 0);
        continue;
      }
      const file = partitioned ? `${stream}/${hourKeyOfIndex(hour)}.jsonl` : `${stream}.jsonl`;
      const { landed, error } = await this.appendLines(file, idx === undefined ? lines : idx.map((i) => lines[i] as string));
      result.written += landed;
      if (error) {
        failGroup(idx, landed);
        result.fileErrors.push({ file, error });
      }
    }
    if (anyFailed) for (let i = 0; i < failedMask.length; i++) if (failedMask[i]) result.failed.push(i);
    return result;
  }

  /**
   * Append complete lines (without their `\n`) to `file` (relative to the
   * dashboard dir). Returns how many leading lines are on disk, whole, and the
   * error that stopped the rest, if any.
   */
  async appendLines(file: string, lines: readonly string[]): Promise<{ landed: number; error?: Error }> {
    if (lines.length === 0) return { landed: 0 };
    const path = join(this.dashDir, file);
    let fh: WriterFileHandle;
    try {
      fh = await this.fs.openAppend(path);
    } catch (e) {
      return { landed: 0, error: e as Error };
    }
    let landed = 0;
    let size = -1; // the file's size before the chunk being written
    try {
      if (!this.verified.has(path)) await this.repairTornTail(fh, file);
      size = (await fh.stat()).size;
      // Chunks of at most MAX_WRITE_CHARS (one line at least): on a full disk
      // the first failing chunk ends the file's attempt without building the rest.
      for (let start = 0; start < lines.length; ) {
        let end = start;
        let chars = 0;
        do chars += (lines[end++] as string).length + 1;
        while (end < lines.length && chars + (lines[end] as string).length + 1 <= MAX_WRITE_CHARS);
        const bytes = encoder.encode(end - start === 1 ? `${lines[start] as string}\n` : `${lines.slice(start, end).join("\n")}\n`);
        let off = 0;
        try {
          while (off < bytes.length) {
            const { bytesWritten } = await fh.write(bytes, off, bytes.length - off, null);
            if (!(bytesWritten > 0)) throw Object.assign(new Error(`write to ${path} made no progress`), { code: "EIO" });
            off += bytesWritten;
          }
        } catch (e) {
          this.verified.delete(path);
          landed += await this.keepCompleteLines(fh, path, bytes, size, off);
          return { landed, error: e as Error };
        }
        landed += end - start;
        size += bytes.length;
        start = end;
      }
      this.verified.add(path);
      // After a failed fsync the lines are still in the file (readers see them):
      // they count as landed, writing them again would duplicate them.
      if (this.fsync) await fh.sync();
      return { landed };
    } catch (e) {
      if (size < 0) this.verified.delete(path); // the tail check or stat failed: nothing written
      return { landed, error: e as Error };
    } finally {
      await fh.close().catch(() => undefined);
    }
  }

  /**
   * After a failed write: how many whole lines of `bytes` are in the file, with
   * anything after the last of them cut off. The file's size says how much
   * landed (`reported`, what write() returned, if it cannot be read).
   */
  private async keepCompleteLines(fh: WriterFileHandle, path: string, bytes: Uint8Array, sizeBefore: number, reported: number): Promise<number> {
    let n = reported;
    try {
      n = (await fh.stat()).size - sizeBefore;
    } catch {
      // keep what write() reported
    }
    n = Math.max(0, Math.min(n, bytes.length));
    let lines = 0;
    let keep = 0;
    for (let k = 0; k < n; k++) {
      if (bytes[k] === 10) {
        lines++;
        keep = k + 1;
      }
    }
    if (keep < n) {
      try {
        await fh.truncate(sizeBefore + keep);
      } catch {
        // The torn tail stays; the file is unverified, so the next append repairs it first.
      }
    } else if (keep === n && n > 0) {
      this.verified.add(path); // ends on a line boundary
    }
    return lines;
  }

  private async repairTornTail(fh: WriterFileHandle, file: string): Promise<void> {
    const { size } = await fh.stat();
    if (size === 0) return;
    const chunk = new Uint8Array(Math.min(size, 65536));
    let end = size;
    // Scan backwards for the last "\n"; usually the very last byte.
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const len = end - start;
      const { bytesRead } = await fh.read(chunk, 0, len, start);
      for (let k = bytesRead - 1; k >= 0; k--) {
        if (chunk[k] === 10) {
          const keep = start + k + 1;
          if (keep < size) {
            await fh.truncate(keep);
            this.onTornTail?.(file, size - keep);
          }
          return;
        }
      }
      end = start;
    }
    await fh.truncate(0); // a single partial line and nothing else
    this.onTornTail?.(file, size);
  }
}
