/**
 * RunWriter: the buffered writer for one run's `{dump}/dashboard/` directory.
 * Used by the collector daemon and by anything else that writes telemetry
 * (demo generator, bench) so all of them produce identical bytes.
 *
 * Failure policy (docs/formats.md §6.3, docs/collector.md "Failure policy"):
 *   - `add()` only buffers. Each stream's buffer is bounded
 *     (`maxBufferedPerStream`, default 500 000); at the cap the oldest 10 %
 *     are dropped and counted. The next flush logs the drop count at error
 *     level. The cap is only reachable while writes keep failing.
 *   - `flush()` folds the buffered records into the lane catalog, rewrites
 *     `lane_catalog.json` if it changed, then appends every stream in the
 *     order of `STREAMS`. A failed file write is logged at error level on
 *     every attempt; its records go back to the front of the buffer and are
 *     retried on the next flush (the appender rolls the file back first, so
 *     retries do not duplicate lines). Nothing is dropped silently: only the
 *     cap and unserializable records (a bug in the caller, logged) lose data.
 *   - flushes never overlap; a `flush()` during a flush runs after it.
 */
import { dirname, join } from "node:path";
import { LaneCatalog, loadLaneCatalog, writeLaneCatalog } from "./lane-catalog";
import { readMeta, writeMeta } from "./meta";
import type { RunMeta } from "./meta";
import { PartitionedAppender } from "./partitioned-appender";
import type { FileError } from "./partitioned-appender";
import { STREAMS } from "./records";
import type { AnyRecord, StreamName, StreamRecords } from "./records";
import { nodeWriterFs } from "./writer-fs";
import type { WriterFs } from "./writer-fs";

export const DEFAULT_MAX_BUFFERED_PER_STREAM = 500_000;

export interface WriterLog {
  error(message: string, err?: unknown): void;
  warn(message: string): void;
}

export const consoleWriterLog: WriterLog = {
  error: (m, e) => console.error(`ERROR ${m}`, e ?? ""),
  warn: (m) => console.warn(`WARN ${m}`),
};

export interface StreamStats {
  /** Records accepted by `add()`. */
  received: number;
  /** Lines appended to disk. */
  written: number;
  /** Records dropped by the buffer cap. */
  dropped: number;
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
  log?: WriterLog;
}

export interface FlushReport {
  ok: boolean;
  written: number;
  fileErrors: FileError[];
}

type Buffers = { [S in StreamName]: StreamRecords[S][] };

const emptyBuffers = (): Buffers => ({
  metrics: [],
  phases: [],
  topology: [],
  gpu_util: [],
  engine_series: [],
  trajectories: [],
  gpu_processes: [],
  data_buffer: [],
});

export class RunWriter {
  readonly dashDir: string;
  readonly stats: Record<StreamName, StreamStats>;
  private readonly fs: WriterFs;
  private readonly log: WriterLog;
  private readonly cap: number;
  private readonly appender: PartitionedAppender;
  private buffers = emptyBuffers();
  private droppedSinceFlush = 0;
  private catalog = new LaneCatalog();
  private catalogLoaded = false;
  private chain: Promise<unknown> = Promise.resolve();
  private lastFlushOk = true;

  constructor(opts: RunWriterOptions) {
    this.dashDir = opts.dashDir;
    this.fs = opts.fs ?? nodeWriterFs;
    this.log = opts.log ?? consoleWriterLog;
    this.cap = opts.maxBufferedPerStream ?? DEFAULT_MAX_BUFFERED_PER_STREAM;
    this.appender = new PartitionedAppender(this.dashDir, {
      fs: this.fs,
      fsync: opts.fsync ?? false,
      onTornTail: (file, bytes) =>
        this.log.warn(`${file}: discarded a torn last line (${bytes} bytes without a final newline, left by a crash)`),
    });
    this.stats = Object.fromEntries(
      STREAMS.map((s) => [s, { received: 0, written: 0, dropped: 0, writeErrors: 0, unserializable: 0 }]),
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
  get dumpDir(): string {
    return dirname(this.dashDir);
  }

  get healthy(): boolean {
    return this.lastFlushOk;
  }

  async writeMeta(meta: RunMeta): Promise<void> {
    await writeMeta(this.fs, this.dashDir, meta);
  }

  /** Buffer records (already validated) for the next flush. Returns how many older records the cap dropped. */
  add<S extends StreamName>(stream: S, records: readonly StreamRecords[S][]): number {
    const buf = this.buffers[stream] as StreamRecords[S][];
    const st = this.stats[stream];
    st.received += records.length;
    let dropped = 0;
    for (const r of records) {
      if (buf.length >= this.cap) dropped += this.dropOldest(buf);
      buf.push(r);
    }
    if (dropped) this.countDrops(stream, dropped);
    return dropped;
  }

  /** Buffered records, per stream or in total. */
  pending(stream?: StreamName): number {
    if (stream) return this.buffers[stream].length;
    let n = 0;
    for (const s of STREAMS) n += this.buffers[s].length;
    return n;
  }

  flush(): Promise<FlushReport> {
    const run = this.chain.then(() => this.flushOnce());
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Final flush; the writer holds no open files, so nothing else to release. */
  async close(): Promise<FlushReport> {
    return this.flush();
  }

  private dropOldest(buf: unknown[]): number {
    const n = Math.max(1, Math.floor(buf.length * 0.1));
    buf.splice(0, n);
    return n;
  }

  private countDrops(stream: StreamName, n: number): void {
    this.stats[stream].dropped += n;
    this.droppedSinceFlush += n;
  }

  private async flushOnce(): Promise<FlushReport> {
    const report: FlushReport = { ok: true, written: 0, fileErrors: [] };
    if (this.droppedSinceFlush > 0) {
      this.log.error(
        `dropped ${this.droppedSinceFlush} buffered records (buffer cap ${this.cap} per stream reached while writes were failing — is the disk full?)`,
      );
      this.droppedSinceFlush = 0;
    }
    const batch = this.buffers;
    this.buffers = emptyBuffers();
    try {
      await this.fs.mkdir(this.dashDir);
    } catch (e) {
      this.log.error(`cannot create ${this.dashDir}; ${this.countPending(batch)} records kept for retry`, e);
      for (const s of STREAMS) this.requeue(s, batch[s]);
      this.lastFlushOk = false;
      return { ok: false, written: 0, fileErrors: [{ file: ".", error: e as Error }] };
    }
    await this.updateCatalog(batch, report);
    for (const s of STREAMS) {
      const recs = batch[s];
      if (recs.length === 0) continue;
      const res = await this.appender.appendStream(s, recs);
      const st = this.stats[s];
      st.written += res.written;
      report.written += res.written;
      for (const u of res.unserializable) {
        st.unserializable++;
        this.log.error(`${s}: record cannot be serialized and is discarded: ${JSON.stringify(u.record)}`, u.error);
      }
      if (res.fileErrors.length > 0) {
        st.writeErrors += res.fileErrors.length;
        report.ok = false;
        report.fileErrors.push(...res.fileErrors);
        for (const fe of res.fileErrors) {
          this.log.error(`write failed: ${join(this.dashDir, fe.file)} (${res.failed.length} ${s} records kept for retry)`, fe.error);
        }
        this.requeue(s, res.failed);
      }
    }
    this.lastFlushOk = report.ok;
    return report;
  }

  private countPending(b: Buffers): number {
    return STREAMS.reduce((n, s) => n + b[s].length, 0);
  }

  /** Put failed records back in front of anything added meanwhile, then re-apply the cap. */
  private requeue(stream: StreamName, failed: readonly AnyRecord[]): void {
    if (failed.length === 0) return;
    const merged: AnyRecord[] = [...failed, ...this.buffers[stream]];
    let dropped = 0;
    while (merged.length > this.cap) dropped += this.dropOldest(merged);
    if (dropped) this.countDrops(stream, dropped);
    (this.buffers as Record<StreamName, AnyRecord[]>)[stream] = merged;
  }

  private async updateCatalog(batch: Buffers, report: FlushReport): Promise<void> {
    if (!this.catalogLoaded) {
      try {
        const onDisk = await loadLaneCatalog(this.fs, this.dashDir);
        onDisk.mergeFrom(this.catalog);
        this.catalog = onDisk;
        this.catalogLoaded = true;
      } catch (e) {
        if (e instanceof SyntaxError || (e as { name?: string }).name === "ZodError") {
          // A corrupt catalog cannot be merged; rebuilding from new records is the best we can do.
          this.log.error(`lane_catalog.json is corrupt; starting a new catalog`, e);
          this.catalogLoaded = true;
        } else {
          this.log.error(`cannot read lane_catalog.json; will retry at the next flush`, e);
        }
      }
    }
    this.catalog.foldPhases(batch.phases);
    this.catalog.foldTopology(batch.topology);
    this.catalog.foldGpu(batch.gpu_util);
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
