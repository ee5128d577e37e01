/**
 * RunWriter: the buffered writer for one run's `{dump}/dashboard/` directory.
 * Used by the collector daemon and by anything else that writes telemetry
 * (demo generator, bench) so all of them produce identical bytes.
 *
 * Failure policy (docs/formats.md §6.3, docs/collector.md "Failure policy"):
 *   - `add()` serializes each record at once and buffers its line (so a
 *     retry never re-serializes, and the buffer's size is known in bytes). A
 *     record whose line is longer than `maxRecordBytes` (default 16 MiB) is
 *     refused and reported to the caller; one that cannot be serialized (a
 *     caller bug) is logged and counted.
 *   - the buffers are bounded twice: per stream in records
 *     (`maxBufferedPerStream`, default 500 000; at the cap the oldest 10 % of
 *     that stream are dropped) and in total in bytes (`maxBufferedBytes`,
 *     default 256 MiB, counting the batch being written too; above it the
 *     oldest lines of the largest stream are dropped until 90 % of the cap
 *     remain). Drops are counted per stream (records and bytes) and logged at
 *     error level at the next flush. The caps are only reachable while writes
 *     keep failing (or a caller never flushes).
 *   - `flush()` folds the records added since the last flush into the lane
 *     catalog, rewrites `lane_catalog.json` if it changed, then appends every
 *     stream in the order of `STREAMS`. A failed file write is logged at
 *     error level on every attempt; the lines that did not reach the file go
 *     back to the front of the buffer and are retried on the next flush (the
 *     appender keeps whole lines that landed and cuts a torn rest, so retries
 *     never duplicate a line). Nothing is dropped silently: only the caps and
 *     unserializable records lose data.
 *   - flushes never overlap; a `flush()` during a flush runs after it. A
 *     flush never rejects: an unexpected error keeps the batch for retry.
 */
import { dirname, join } from "node:path";
import {
  hasLaneStreams,
  isCorruptCatalogError,
  readLaneCatalog,
  rebuildLaneCatalog,
  writeLaneCatalog,
} from "./lane-catalog";
import { readMeta, writeMeta } from "./meta-file";
import { LaneCatalog, type RunMeta } from "@/lib/store/format";
import { PartitionedAppender, prepareRecord } from "./partitioned-appender";
import type { FileError } from "./partitioned-appender";
import { STREAMS } from "@/lib/store/format";
import type { GpuSample, PhaseEvent, StreamName, StreamRecords, TopologySnapshot } from "@/lib/store/format";
import { PhaseIndexer } from "./phase-indexer";
import { nodeWriterFs } from "./writer-fs";
import type { WriterFs } from "./writer-fs";

export const DEFAULT_MAX_BUFFERED_PER_STREAM = 500_000;
export const DEFAULT_MAX_BUFFERED_BYTES = 256 * 1024 * 1024;
export const DEFAULT_MAX_RECORD_BYTES = 16 * 1024 * 1024;

export interface WriterLog {
  error(message: string, err?: unknown): void;
  warn(message: string): void;
}

export const consoleWriterLog: WriterLog = {
  error: (m, e) => console.error(`ERROR ${m}`, e ?? ""),
  warn: (m) => console.warn(`WARN ${m}`),
};

export interface StreamStats {
  /** Records accepted into the buffer by `add()`. */
  received: number;
  /** Lines appended to disk. */
  written: number;
  /** Records dropped by a buffer cap. */
  dropped: number;
  /** Bytes (serialized, with the newline) of the dropped records. */
  droppedBytes: number;
  /** Records refused by `add()` for being larger than `maxRecordBytes`. */
  tooLarge: number;
  /** Failed file writes (each attempt counts). */
  writeErrors: number;
  /** Records that could not be serialized (caller bug). */
  unserializable: number;
}

export interface RunWriterOptions {
  /** The `{dump}/dashboard` directory. */
  dashDir: string;
  fs?: WriterFs;
  /** fsync every appended file (default false). */
  fsync?: boolean;
  maxBufferedPerStream?: number;
  /** Cap on all buffered lines together, in bytes (default 256 MiB). */
  maxBufferedBytes?: number;
  /** Largest accepted record, as a serialized line with its newline (default 16 MiB). */
  maxRecordBytes?: number;
  log?: WriterLog;
}

export interface FlushReport {
  ok: boolean;
  written: number;
  fileErrors: FileError[];
}

export interface AddResult {
  /** Older buffered records dropped by the caps while adding. */
  dropped: number;
  /** Records refused for their size: index in the input and serialized size in bytes. */
  refused: { index: number; bytes: number }[];
}

/** One stream's buffered lines (without `\n`), their hour indices, and their bytes (with `\n`). */
interface Pending {
  lines: string[];
  hours: number[];
  bytes: number;
}

type Buffers = Record<StreamName, Pending>;

const emptyPending = (): Pending => ({ lines: [], hours: [], bytes: 0 });
const emptyBuffers = (): Buffers => Object.fromEntries(STREAMS.map((s) => [s, emptyPending()])) as Buffers;
const NO_REFUSALS: AddResult["refused"] = [];

export class RunWriter {
  readonly dashDir: string;
  readonly stats: Record<StreamName, StreamStats>;
  readonly maxBufferedBytes: number;
  readonly maxRecordBytes: number;
  private readonly fs: WriterFs;
  private readonly log: WriterLog;
  private readonly cap: number;
  private readonly appender: PartitionedAppender;
  private readonly phaseIndexer: PhaseIndexer;
  private buffers = emptyBuffers();
  /** Bytes in `buffers`, and in the batch a flush is writing. */
  private bufferedBytes = 0;
  private inFlightBytes = 0;
  private droppedSinceFlush = 0;
  private droppedBytesSinceFlush = 0;
  /** Records added since the last flush that the lane catalog folds (docs/formats.md §4.10). */
  private unfolded: { phases: PhaseEvent[]; topology: TopologySnapshot[]; gpuLanes: Map<string, GpuSample> } = {
    phases: [],
    topology: [],
    gpuLanes: new Map(),
  };
  private lastGpu: GpuSample | undefined;
  private catalog = new LaneCatalog();
  private catalogLoaded = false;
  private chain: Promise<unknown> = Promise.resolve();
  private lastFlushOk = true;

  constructor(opts: RunWriterOptions) {
    this.dashDir = opts.dashDir;
    this.fs = opts.fs ?? nodeWriterFs;
    this.log = opts.log ?? consoleWriterLog;
    this.cap = opts.maxBufferedPerStream ?? DEFAULT_MAX_BUFFERED_PER_STREAM;
    this.maxBufferedBytes = opts.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
    this.maxRecordBytes = opts.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
    this.appender = new PartitionedAppender(this.dashDir, {
      fs: this.fs,
      fsync: opts.fsync ?? false,
      onTornTail: (file, bytes) =>
        this.log.warn(`${file}: discarded a torn last line (${bytes} bytes without a final newline, left by a crash)`),
    });
    this.phaseIndexer = new PhaseIndexer(this.dashDir, this.fs, this.log);
    this.stats = Object.fromEntries(
      STREAMS.map((s) => [s, { received: 0, written: 0, dropped: 0, droppedBytes: 0, tooLarge: 0, writeErrors: 0, unserializable: 0 }]),
    ) as Record<StreamName, StreamStats>;
  }

  /**
   * Create the dashboard dir and (re)write `meta.json`. Args of an existing
   * meta.json are kept when `meta.args` is omitted, so a collector restart
   * does not erase what a producer posted earlier.
   */
  static async open(opts: RunWriterOptions & { meta?: Omit<RunMeta, "args"> & Partial<Pick<RunMeta, "args">> }): Promise<RunWriter> {
    const w = new RunWriter(opts);
    await w.fs.mkdir(w.dashDir);
    if (opts.meta) {
      const args = opts.meta.args ?? (await readMeta(w.fs, w.dashDir).catch(() => undefined))?.args ?? {};
      await w.writeMeta({ ...opts.meta, args });
    }
    return w;
  }

  /** The run directory (`--dump-details`) of this dashboard dir. */
  get runDir(): string {
    return dirname(this.dashDir);
  }

  get healthy(): boolean {
    return this.lastFlushOk;
  }

  async writeMeta(meta: RunMeta): Promise<void> {
    await writeMeta(this.fs, this.dashDir, meta);
  }

  /** Bytes a record of `stream` takes as a line (with its newline); throws if it cannot be serialized. */
  lineBytes<S extends StreamName>(stream: S, r: StreamRecords[S]): number {
    return prepareRecord(stream, r).line.length + 1;
  }

  /** Serialize and buffer records (already validated) for the next flush; see the module header. */
  add<S extends StreamName>(stream: S, records: readonly StreamRecords[S][]): AddResult {
    const buf = this.buffers[stream];
    const st = this.stats[stream];
    let dropped = 0;
    let refused: AddResult["refused"] | undefined;
    for (let k = 0; k < records.length; k++) {
      const r = records[k] as StreamRecords[S];
      let line: string;
      let hour: number;
      try {
        ({ line, hour } = prepareRecord(stream, r));
      } catch (e) {
        st.unserializable++;
        this.log.error(`${stream}: record cannot be serialized and is discarded: ${safeJson(r)}`, e);
        continue;
      }
      // The serializers build a line from template parts: V8 keeps it as a tree
      // of pieces (~460 bytes for a gpu_util line) until something reads its
      // characters; reading one flattens it to one string (~120 bytes). Lines
      // may sit in the buffer for a while (a failing disk), so flatten now.
      line.charCodeAt(0);
      const bytes = line.length + 1; // ASCII output: one byte per character
      if (bytes > this.maxRecordBytes) {
        st.tooLarge++;
        (refused ??= []).push({ index: k, bytes });
        continue;
      }
      if (buf.lines.length >= this.cap) dropped += this.dropOldest(stream, Math.max(1, Math.floor(buf.lines.length * 0.1)));
      buf.lines.push(line);
      buf.hours.push(hour);
      buf.bytes += bytes;
      this.bufferedBytes += bytes;
      st.received++;
      this.noteForCatalog(stream, r);
      if (this.bufferedBytes + this.inFlightBytes > this.maxBufferedBytes) dropped += this.enforceByteCap();
    }
    return { dropped, refused: refused ?? NO_REFUSALS };
  }

  /** Buffered records not yet handed to a flush, per stream or in total. */
  pending(stream?: StreamName): number {
    if (stream) return this.buffers[stream].lines.length;
    let n = 0;
    for (const s of STREAMS) n += this.buffers[s].lines.length;
    return n;
  }

  /** Bytes held for writing: the buffers plus the batch a flush is writing. */
  pendingBytes(): number {
    return this.bufferedBytes + this.inFlightBytes;
  }

  flush(): Promise<FlushReport> {
    const run = this.chain.then(() => this.flushSafely());
    this.chain = run;
    return run;
  }

  /**
   * Final flush, then the index of every phase hour written (phase-indexer.ts); the writer
   * holds no open files, so nothing else to release.
   */
  async close(): Promise<FlushReport> {
    const report = await this.flush();
    await this.phaseIndexer.finish();
    return report;
  }

  private noteForCatalog<S extends StreamName>(stream: S, r: StreamRecords[S]): void {
    if (stream === "gpu_util") {
      const g = r as GpuSample;
      const last = this.lastGpu;
      if (last !== undefined && last.gpu === g.gpu && last.node === g.node) return;
      this.lastGpu = g;
      if (this.catalog.hasLane(g.node, g.gpu)) return;
      const key = `${g.node}:${g.gpu}`;
      if (!this.unfolded.gpuLanes.has(key)) this.unfolded.gpuLanes.set(key, g);
    } else if (stream === "phases") {
      if ((r as PhaseEvent).role === "train") this.unfolded.phases.push(r as PhaseEvent);
    } else if (stream === "topology") {
      this.unfolded.topology.push(r as TopologySnapshot);
    }
  }

  /** Drop the `n` oldest buffered lines of `stream`. */
  private dropOldest(stream: StreamName, n: number): number {
    const buf = this.buffers[stream];
    n = Math.min(n, buf.lines.length);
    if (n === 0) return 0;
    const gone = buf.lines.splice(0, n);
    buf.hours.splice(0, n);
    let bytes = 0;
    for (const l of gone) bytes += l.length + 1;
    buf.bytes -= bytes;
    this.bufferedBytes -= bytes;
    const st = this.stats[stream];
    st.dropped += n;
    st.droppedBytes += bytes;
    this.droppedSinceFlush += n;
    this.droppedBytesSinceFlush += bytes;
    return n;
  }

  /** Above the byte cap: drop the oldest lines of the largest stream until 90 % of the cap remain. */
  private enforceByteCap(): number {
    const target = Math.floor(this.maxBufferedBytes * 0.9);
    let dropped = 0;
    while (this.bufferedBytes + this.inFlightBytes > target) {
      let largest: StreamName | undefined;
      for (const s of STREAMS) if (this.buffers[s].bytes > 0 && (!largest || this.buffers[s].bytes > this.buffers[largest].bytes)) largest = s;
      if (!largest) break; // everything left is being written right now
      const buf = this.buffers[largest];
      const excess = this.bufferedBytes + this.inFlightBytes - target;
      let n = 0;
      let bytes = 0;
      while (n < buf.lines.length && bytes < excess) bytes += (buf.lines[n++] as string).length + 1;
      dropped += this.dropOldest(largest, n);
    }
    return dropped;
  }

  private async flushSafely(): Promise<FlushReport> {
    try {
      return await this.flushOnce();
    } catch (e) {
      // A bug, not an I/O error (those are handled per file): keep the data, report, go on.
      this.lastFlushOk = false;
      this.log.error(`flush failed unexpectedly; ${this.pending()} buffered records kept for retry`, e);
      return { ok: false, written: 0, fileErrors: [{ file: ".", error: e as Error }] };
    }
  }

  private async flushOnce(): Promise<FlushReport> {
    const report: FlushReport = { ok: true, written: 0, fileErrors: [] };
    if (this.droppedSinceFlush > 0) {
      this.log.error(
        `dropped ${this.droppedSinceFlush} buffered records (${this.droppedBytesSinceFlush} bytes) to stay within the buffer caps ` +
          `(${this.cap} records per stream, ${this.maxBufferedBytes} bytes in all) while writes were failing — is the disk full?`,
      );
      this.droppedSinceFlush = 0;
      this.droppedBytesSinceFlush = 0;
    }
    // Flushes never overlap, so nothing else is in flight.
    const batch = this.buffers;
    this.buffers = emptyBuffers();
    this.inFlightBytes = this.bufferedBytes;
    this.bufferedBytes = 0;
    const settled = new Set<StreamName>();
    /** Stream `s` of the batch is done: its bytes leave the flight, `failed` goes back to the buffer. */
    const settle = (s: StreamName, failed: Pending | undefined): void => {
      settled.add(s);
      this.inFlightBytes -= batch[s].bytes;
      if (failed) this.requeue(s, failed);
    };
    try {
      try {
        await this.fs.mkdir(this.dashDir);
      } catch (e) {
        this.log.error(`cannot create ${this.dashDir}; ${STREAMS.reduce((n, s) => n + batch[s].lines.length, 0)} records kept for retry`, e);
        this.lastFlushOk = false;
        return { ok: false, written: 0, fileErrors: [{ file: ".", error: e as Error }] };
      }
      await this.updateCatalog(report);
      for (const s of STREAMS) {
        const b = batch[s];
        if (b.lines.length === 0) {
          settle(s, undefined);
          continue;
        }
        const res = await this.appender.appendPrepared(s, b.lines, b.hours);
        if (s === "phases" && res.written > 0) this.phaseIndexer.note(b.hours);
        const st = this.stats[s];
        st.written += res.written;
        report.written += res.written;
        if (res.fileErrors.length > 0) {
          st.writeErrors += res.fileErrors.length;
          report.ok = false;
          for (const fe of res.fileErrors) {
            report.fileErrors.push(fe);
            this.log.error(`write failed: ${join(this.dashDir, fe.file)} (${res.failed.length} ${s} records kept for retry)`, fe.error);
          }
        }
        settle(s, res.failed.length === 0 ? undefined : res.failed.length === b.lines.length ? b : pick(b, res.failed));
      }
      this.lastFlushOk = report.ok;
      this.phaseIndexer.kick();
      return report;
    } finally {
      // Streams not attempted (an early return or an unexpected error) keep all their lines.
      for (const s of STREAMS) if (!settled.has(s)) settle(s, batch[s]);
    }
  }

  /** Put lines that were not written back in front of anything added meanwhile, then re-apply the caps. */
  private requeue(stream: StreamName, failed: Pending): void {
    if (failed.lines.length === 0) return;
    const cur = this.buffers[stream];
    const merged: Pending = {
      lines: failed.lines.concat(cur.lines),
      hours: failed.hours.concat(cur.hours),
      bytes: failed.bytes + cur.bytes,
    };
    this.buffers[stream] = merged;
    this.bufferedBytes += failed.bytes;
    while (merged.lines.length > this.cap) this.dropOldest(stream, Math.max(1, Math.floor(merged.lines.length * 0.1)));
    if (this.bufferedBytes + this.inFlightBytes > this.maxBufferedBytes) this.enforceByteCap();
  }

  private async updateCatalog(report: FlushReport): Promise<void> {
    if (!this.catalogLoaded) {
      try {
        let onDisk: LaneCatalog | undefined;
        try {
          onDisk = await readLaneCatalog(this.fs, this.dashDir);
          if (onDisk === undefined && (await hasLaneStreams(this.fs, this.dashDir))) {
            this.log.warn(`lane_catalog.json is missing but streams exist; rebuilding it from the streams`);
            onDisk = await rebuildLaneCatalog(this.fs, this.dashDir);
          }
        } catch (e) {
          if (!isCorruptCatalogError(e)) throw e;
          this.log.error(`lane_catalog.json is corrupt; rebuilding it from the streams`, e);
          onDisk = await rebuildLaneCatalog(this.fs, this.dashDir);
          onDisk.dirty = true; // replace the corrupt file even if no new lane arrives
        }
        if (onDisk) {
          onDisk.mergeFrom(this.catalog);
          this.catalog = onDisk;
        }
        this.catalogLoaded = true;
      } catch (e) {
        this.log.error(`cannot read lane_catalog.json or the streams; will retry at the next flush`, e);
      }
    }
    const u = this.unfolded;
    this.catalog.foldPhases(u.phases);
    this.catalog.foldTopology(u.topology);
    for (const g of u.gpuLanes.values()) this.catalog.foldGpuLane(g.node, g.gpu);
    this.unfolded = { phases: [], topology: [], gpuLanes: new Map() };
    if (!this.catalogLoaded || !this.catalog.dirty || this.catalog.size === 0) return;
    try {
      await writeLaneCatalog(this.fs, this.dashDir, this.catalog);
      this.catalog.dirty = false;
    } catch (e) {
      report.ok = false;
      report.fileErrors.push({ file: "lane_catalog.json", error: e as Error });
      this.log.error(`write failed: ${join(this.dashDir, "lane_catalog.json")} (will retry at the next flush)`, e);
    }
  }
}

/** The entries of `b` at `indices` (ascending). */
function pick(b: Pending, indices: readonly number[]): Pending {
  const out = emptyPending();
  for (const i of indices) {
    const line = b.lines[i] as string;
    out.lines.push(line);
    out.hours.push(b.hours[i] as number);
    out.bytes += line.length + 1;
  }
  return out;
}

function safeJson(v: unknown): string {
  try {
    const s = JSON.stringify(v);
    return s.length > 500 ? `${s.slice(0, 500)}…` : s;
  } catch {
    return String(v);
  }
}
