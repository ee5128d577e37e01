/**
 * Append-only JSONL writer with the layout of docs/formats.md §1/§3.
 *
 * Layout: flat streams go to `{dash}/{stream}.jsonl`; partitioned streams to
 * `{dash}/{stream}/{YYYYMMDD_HH}.jsonl`, keyed by the UTC hour of `ts`
 * (phases: `t1`, or `t0` for an OPEN marker with `t1 == -1.0`).
 *
 * Write policy:
 *   - per call, every target file is opened in append mode, receives all of
 *     its new lines as ONE string in one `write` (looping only on a short
 *     write), optionally fsynced, and closed — no long-lived handles, no
 *     per-record syscalls. Groups are written in ascending hour order and keep
 *     the order of the input inside a file. Only whole lines are written.
 *   - torn tail: the first time this process touches a file, a tail without a
 *     final `\n` (left by a crash mid-write) is truncated back to the last
 *     `\n`. Readers never consume bytes after the last `\n`, so no reader
 *     offset is invalidated, and new lines never get glued onto garbage. This
 *     is the one place the writer truncates; it is reported via `onTornTail`.
 *   - a failed write is rolled back to the file's size before the attempt
 *     (so the caller can retry the same lines without duplicates) and the
 *     records of that file are returned as `failed`; other files proceed.
 */
import { join } from "node:path";
import { OPEN_T1, PARTITIONED_STREAMS } from "./records";
import type { StreamName, StreamRecords } from "./records";
import { LINE_SERIALIZERS } from "./serialize";
import { nodeWriterFs } from "./writer-fs";
import type { WriterFileHandle, WriterFs } from "./writer-fs";

const hourKeyCache = new Map<number, string>();

/** `YYYYMMDD_HH` of the UTC hour containing epoch second `ts` (fraction floored). */
export function hourKey(ts: number): string {
  return hourKeyOfIndex(Math.floor(ts / 3600));
}

function hourKeyOfIndex(hour: number): string {
  let key = hourKeyCache.get(hour);
  if (key === undefined) {
    const iso = new Date(hour * 3_600_000).toISOString(); // 2025-08-12T12:00:00.000Z
    if (!/^\d{4}-/.test(iso)) throw new RangeError(`timestamp outside years 0000..9999: hour ${hour}`);
    key = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}_${iso.slice(11, 13)}`;
    if (hourKeyCache.size > 10_000) hourKeyCache.clear();
    hourKeyCache.set(hour, key);
  }
  return key;
}

/** The timestamp that picks a record's hour file (docs/formats.md §3). */
export function partitionTs<S extends StreamName>(stream: S, r: StreamRecords[S]): number {
  if (stream === "phases") {
    const p = r as StreamRecords["phases"];
    return p.t1 === OPEN_T1 ? p.t0 : p.t1;
  }
  return (r as { ts: number }).ts;
}

/** Path of the file a record goes to, relative to the dashboard dir. */
export function streamFile<S extends StreamName>(stream: S, r: StreamRecords[S]): string {
  return PARTITIONED_STREAMS.has(stream) ? `${stream}/${hourKey(partitionTs(stream, r))}.jsonl` : `${stream}.jsonl`;
}

export interface FileError {
  /** Path relative to the dashboard dir. */
  file: string;
  error: Error;
}

export interface AppendResult<R> {
  /** Lines that reached disk. */
  written: number;
  /** Records whose file write failed, in input order per file; retry them. */
  failed: R[];
  fileErrors: FileError[];
  /** Records that could not be serialized at all (never retried). */
  unserializable: { record: R; error: Error }[];
}

export interface AppenderOptions {
  fs?: WriterFs;
  /** fsync each file after its write (default false, like the Python collector). */
  fsync?: boolean;
  /** Called when a torn tail is truncated on first touch. */
  onTornTail?: (file: string, droppedBytes: number) => void;
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
    if (records.length === 0) return result;
    const serialize = LINE_SERIALIZERS[stream] as (r: R) => string;
    const partitioned = PARTITIONED_STREAMS.has(stream);
    // hour index (or 0 for flat streams) -> group; Map keeps first-seen order, sorted below.
    const groups = new Map<number, { lines: string[]; recs: R[] }>();
    for (const r of records) {
      let line: string;
      let hour = 0;
      try {
        line = serialize(r);
        if (partitioned) {
          hour = Math.floor(partitionTs(stream, r) / 3600);
          hourKeyOfIndex(hour); // validates the range before anything is written
        }
      } catch (e) {
        result.unserializable.push({ record: r, error: e as Error });
        continue;
      }
      let g = groups.get(hour);
      if (!g) groups.set(hour, (g = { lines: [], recs: [] }));
      g.lines.push(line);
      g.recs.push(r);
    }
    if (groups.size === 0) return result;
    if (partitioned) {
      try {
        await this.fs.mkdir(join(this.dashDir, stream));
      } catch (e) {
        for (const g of groups.values()) result.failed.push(...g.recs);
        result.fileErrors.push({ file: `${stream}/`, error: e as Error });
        return result;
      }
    }
    for (const [hour, g] of [...groups].sort((a, b) => a[0] - b[0])) {
      const file = partitioned ? `${stream}/${hourKeyOfIndex(hour)}.jsonl` : `${stream}.jsonl`;
      try {
        await this.appendText(file, g.lines.join("\n") + "\n");
        result.written += g.lines.length;
      } catch (e) {
        result.failed.push(...g.recs);
        result.fileErrors.push({ file, error: e as Error });
      }
    }
    return result;
  }

  /** Append complete lines (`text` must end in `\n`) to `file` (relative to the dashboard dir). */
  async appendText(file: string, text: string): Promise<void> {
    const path = join(this.dashDir, file);
    const bytes = encoder.encode(text);
    const fh = await this.fs.openAppend(path);
    let sizeBefore = -1;
    try {
      if (!this.verified.has(path)) await this.repairTornTail(fh, file);
      sizeBefore = (await fh.stat()).size;
      let off = 0;
      while (off < bytes.length) {
        const { bytesWritten } = await fh.write(bytes, off, bytes.length - off, null);
        off += bytesWritten;
      }
      if (this.fsync) await fh.sync();
      this.verified.add(path);
    } catch (e) {
      this.verified.delete(path);
      if (sizeBefore >= 0) {
        // Undo a partial write so a retry cannot duplicate or glue lines; if
        // even that fails, the next attempt re-checks the tail.
        await fh.truncate(sizeBefore).catch(() => undefined);
      }
      throw e;
    } finally {
      await fh.close().catch(() => undefined);
    }
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
