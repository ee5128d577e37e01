/**
 * `startCollector()`: the collector daemon as a library, so the CLI
 * (index.ts), tests and the bench run the same thing in-process.
 *
 * Wiring: ingest HTTP → zod → RunWriter buffers; SGLang scraper and GPU
 * sampler feed the same buffers; a flush runs when ≥ `flushBatch` records are
 * pending (coalescing: while one flush runs, new records wait for the next,
 * so under load each flush writes one big batch) and at least every
 * `flushIntervalS`. After a failed flush the size trigger pauses until the
 * next interval tick, so a broken disk is retried at the interval, not in a
 * busy loop. See run-writer.ts for the write failure policy and index.ts for
 * the process-level one.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { readMeta } from "@/lib/store/writer/meta-file";
import { RunWriter } from "@/lib/store/writer/run-writer";
import { RequestsAppender } from "@/lib/store/writer/requests";
import type { AddResult, FlushReport } from "@/lib/store/writer/run-writer";
import type { AnyRecord, EngineSample, GpuSample, MetricsRecord, PhaseEvent, StreamName, StreamRecords, TopologySnapshot } from "@/lib/store/format";
import { nodeWriterFs } from "@/lib/store/writer/writer-fs";
import type { WriterFs } from "@/lib/store/writer/writer-fs";
import { createIngestHandler } from "./ingest";
import type { MetaUpdate } from "./ingest";
import { acquireLock } from "./lock";
import type { Lock } from "./lock";
import { createLogger } from "./log";
import type { Logger } from "./log";
import { CollectorMetrics } from "./self-metrics";
import { GpuSampler } from "./sources/gpu-sampler";
import type { ProcRegistry } from "./sources/host-sampler";
import type { GpuSource } from "./sources/gpu-sampler";
import { SGLANG_DEFAULT_WHITELIST } from "@/lib/store/format";
import { SglangScraper } from "./sources/sglang-scraper";
import { TopologyTracker } from "./topology-tracker";

export interface CollectorOptions {
  /** Run directory; telemetry goes to `{runDir}/dashboard`. */
  runDir: string;
  host?: string;
  /** 0 (default) picks an ephemeral port. */
  port?: number;
  /** meta.json run_name; default: the existing meta.json's, else "miles-run". */
  runName?: string;
  router?: string;
  engines?: readonly string[];
  scrapeIntervalS?: number;
  scrapeTimeoutS?: number;
  sglangMetrics?: readonly string[];
  gpuSource?: GpuSource;
  gpuIntervalS?: number;
  /** GPU process sweep cadence (default 5 s). */
  gpuProcessIntervalS?: number;
  node?: string;
  nvidiaSmi?: string;
  amdSmi?: string;
  flushIntervalS?: number;
  flushBatch?: number;
  maxBufferedPerStream?: number;
  /** Cap on all buffered lines, bytes (default 256 MiB; run-writer.ts). */
  maxBufferedBytes?: number;
  /** Largest record, as a line, bytes (default 16 MiB); larger ones get 413. */
  maxRecordBytes?: number;
  /** Ingest body limit, bytes (default twice maxRecordBytes, so one record at the limit fits). */
  maxBodyBytes?: number;
  /** Refuse pushed records stamped further than this from `now()`, seconds (default 86400; 0 = off). */
  maxClockSkewS?: number;
  fsync?: boolean;
  /** `--host-telemetry`'s pid registry: `POST /v1/procs` registers into it (409 when absent). */
  procs?: ProcRegistry;
  fs?: WriterFs;
  log?: Logger;
  /** Wall clock in epoch seconds. */
  now?: () => number;
}

export interface StopResult {
  /** False when records could not be written by the final flush. */
  ok: boolean;
  lost: number;
}

export interface CollectorHandle {
  port: number;
  url: string;
  dashDir: string;
  writer: RunWriter;
  /** Flush now (also waits for a flush in progress). */
  flush(): Promise<FlushReport>;
  /** Stop sources and the server, flush everything, release the lock. */
  stop(): Promise<StopResult>;
}

export async function startCollector(opts: CollectorOptions): Promise<CollectorHandle> {
  const log = opts.log ?? createLogger();
  const now = opts.now ?? (() => Date.now() / 1000);
  const dashDir = join(opts.runDir, "dashboard");
  const flushIntervalMs = (opts.flushIntervalS ?? 2) * 1000;
  const flushBatch = opts.flushBatch ?? 64;
  const startTs = now();

  // Probe the directory (and create it) before taking the lock.
  const writer = await RunWriter.open({
    dashDir,
    ...(opts.fs ? { fs: opts.fs } : {}),
    fsync: opts.fsync ?? false,
    ...(opts.maxBufferedPerStream ? { maxBufferedPerStream: opts.maxBufferedPerStream } : {}),
    ...(opts.maxBufferedBytes ? { maxBufferedBytes: opts.maxBufferedBytes } : {}),
    ...(opts.maxRecordBytes ? { maxRecordBytes: opts.maxRecordBytes } : {}),
    log,
  });
  const lock: Lock = await acquireLock(dashDir);
  if (lock.recoveredStalePid !== undefined) log.warn(`took over a stale lock of pid ${lock.recoveredStalePid} (${lock.path})`);

  let runName = opts.runName;
  try {
    const previous = await readMeta(opts.fs ?? nodeWriterFs, dashDir);
    runName ??= previous?.run_name ?? "miles-run";
    await writer.writeMeta({ run_name: runName, start_ts: startTs, args: previous?.args ?? {} });
  } catch (e) {
    await lock.release();
    throw e;
  }

  const metrics = new CollectorMetrics();
  const topology = new TopologyTracker();
  let stopping = false;
  let flushing = false;
  let retryPausedUntil = 0;

  const runFlush = async (): Promise<FlushReport> => {
    flushing = true;
    try {
      const rep = await writer.flush();
      if (!rep.ok) retryPausedUntil = Date.now() + flushIntervalMs;
      return rep;
    } finally {
      flushing = false;
      if (!stopping) maybeFlush();
    }
  };
  function maybeFlush(): void {
    if (flushing || stopping || Date.now() < retryPausedUntil || writer.pending() < flushBatch) return;
    void runFlush();
  }

  const NO_REFUSALS: AddResult["refused"] = [];
  /** Buffer records; answers those refused for their size (index into `records`). */
  const add = <S extends StreamName>(stream: S, records: StreamRecords[S][]): Pick<AddResult, "refused"> => {
    let refused = NO_REFUSALS;
    if (stream === "topology") {
      const out: TopologySnapshot[] = [];
      (records as TopologySnapshot[]).forEach((s, index) => {
        // Checked before the tracker sees it, so a refused snapshot changes no state.
        const bytes = writer.lineBytes("topology", s);
        if (bytes > writer.maxRecordBytes) {
          if (refused === NO_REFUSALS) refused = [];
          refused.push({ index, bytes });
          return;
        }
        const rec = topology.ingest(s);
        if (rec) out.push(rec);
      });
      writer.add("topology", out);
    } else {
      refused = writer.add(stream, records).refused;
      // /metrics follows what was buffered: a record refused for its size moves no gauge.
      const kept = refused.length ? records.filter((_, i) => !refused.some((r) => r.index === i)) : records;
      if (stream === "engine_series") {
        metrics.noteEngine(kept as EngineSample[]);
        for (const r of kept as EngineSample[]) topology.noteScraped(r.addr);
      } else if (stream === "gpu_util") metrics.noteGpu(kept as GpuSample[]);
      else if (stream === "phases") metrics.notePhases(kept as PhaseEvent[]);
      else if (stream === "metrics") metrics.noteMetrics(kept as MetricsRecord[]);
    }
    maybeFlush();
    return { refused };
  };

  const setMeta = async (u: MetaUpdate): Promise<void> => {
    if (u.run_name !== undefined) runName = u.run_name;
    await writer.writeMeta({ run_name: runName ?? "miles-run", start_ts: startTs, args: u.args });
  };

  // Per-request SGLang timing (POST /v1/requests): appended at once, beside the streams.
  const requestsAppender = new RequestsAppender(dashDir, opts.fs ?? nodeWriterFs);
  const handler = createIngestHandler({
    maxBodyBytes: opts.maxBodyBytes ?? 2 * writer.maxRecordBytes,
    maxRecordBytes: writer.maxRecordBytes,
    maxClockSkewS: opts.maxClockSkewS ?? 86_400,
    now,
    accept: (stream, records: AnyRecord[]) => add(stream, records as StreamRecords[typeof stream][]),
    setMeta,
    recordRequests: (records) => requestsAppender.append(records),
    metrics,
    renderMetrics: () => metrics.render(writer, runName ?? "miles-run"),
    setRouter: ({ url, mode }) => {
      const changed = scraper.setRouter(url, mode);
      if (changed) log.info(`sglang scraper: router ${scraper.router ?? ""} registered (${scraper.mode} mode)`);
      return { mode: scraper.mode, router: scraper.router, changed };
    },
    ...(opts.procs
      ? {
          registerProcs: ({ pids, role }: { pids: number[]; role?: string }) => {
            const r = opts.procs!.register(pids, role);
            if (r.registered.length) log.info(`host telemetry: registered pid(s) ${r.registered.join(",")}${role ? ` (${role})` : ""}`);
            return r;
          },
        }
      : {}),
    health: () => ({
      ok: writer.healthy,
      pid: process.pid,
      dash_dir: dashDir,
      run_name: runName,
      start_ts: startTs,
      buffered: writer.pending(),
      buffered_bytes: writer.pendingBytes(),
      scraper: scraper ? scraper.mode : "off",
      router: scraper?.router ?? null,
      gpu_sampler: sampler.backend,
      host_procs_registered: opts.procs?.size ?? null,
      memory_mb: Object.fromEntries(Object.entries(process.memoryUsage()).map(([k, v]) => [k, Math.round(v / 1048576)])),
    }),
    log,
  });
  const server = createServer(handler);
  server.keepAliveTimeout = 30_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(opts.port ?? 0, opts.host ?? "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (e) {
    await lock.release();
    throw e;
  }
  const { port } = server.address() as AddressInfo;
  const host = opts.host ?? "127.0.0.1";

  const staticEngines = opts.engines ?? [];
  const scrapeWanted = Boolean(opts.router) || staticEngines.length > 0;
  const scraper = new SglangScraper({
    ...(opts.router ? { router: opts.router } : {}),
    targets: () => [...staticEngines, ...topology.engineAddrs()],
    intervalS: opts.scrapeIntervalS ?? 2,
    timeoutS: opts.scrapeTimeoutS ?? 5,
    whitelist: opts.sglangMetrics ?? SGLANG_DEFAULT_WHITELIST,
    sink: (recs) => add("engine_series", recs),
    log,
    now,
  });
  // Direct mode with no --engines still scrapes engines that producers register via topology.
  scraper.start();

  const sampler = new GpuSampler({
    source: opts.gpuSource ?? "auto",
    intervalS: opts.gpuIntervalS ?? 1,
    ...(opts.gpuProcessIntervalS ? { processIntervalS: opts.gpuProcessIntervalS } : {}),
    node: opts.node ?? "127.0.0.1",
    ...(opts.nvidiaSmi ? { nvidiaSmi: opts.nvidiaSmi } : {}),
    ...(opts.amdSmi ? { amdSmi: opts.amdSmi } : {}),
    sink: { gpu: (r) => add("gpu_util", r), processes: (r) => add("gpu_processes", r) },
    log,
    now,
  });
  sampler.start();

  const timer = setInterval(() => {
    const snap = topology.tick(now());
    if (snap) writer.add("topology", [snap]);
    if (!flushing) void runFlush();
  }, flushIntervalMs);

  log.info(
    `collector listening on http://${host}:${port}, writing ${dashDir}` +
      (opts.router ? `, scraping router ${opts.router}` : scrapeWanted ? `, scraping ${staticEngines.length} engines` : ""),
  );

  let stopped: Promise<StopResult> | undefined;
  const stop = (): Promise<StopResult> =>
    (stopped ??= (async () => {
      stopping = true;
      clearInterval(timer);
      await Promise.all([scraper.stop(), sampler.stop()]);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // In-flight requests get a moment to finish; then connections are cut.
        setTimeout(() => server.closeAllConnections(), 2000).unref();
      });
      const snap = topology.tick(now());
      if (snap) writer.add("topology", [snap]);
      // Final flush, with two quick retries for transient errors. The first one
      // always runs: it queues behind a flush in progress, whose records
      // pending() does not count (and which may still fail and requeue them).
      for (let attempt = 0; attempt < 3 && (attempt === 0 || writer.pending() > 0); attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, 200));
        await writer.flush();
      }
      const lost = writer.pending();
      if (lost > 0) log.error(`shutting down with ${lost} records that could not be written to ${dashDir}`);
      // The run's last phase hours get their index too (docs/formats.md §4.16), while the
      // lock still says this process is the run's writer.
      await writer.close();
      await lock.release();
      log.info(`collector stopped (${dashDir})`);
      return { ok: lost === 0, lost };
    })());

  return {
    port,
    url: `http://${host}:${port}`,
    dashDir,
    writer,
    flush: () => writer.flush(),
    stop,
  };
}
