/**
 * rlboard collector daemon — `npm run collector -- --dump-details DIR …`.
 *
 * Failure policy (docs/collector.md "Failure policy", docs/formats.md §6.3):
 *   - start-up: bad flags, an unusable directory, a port in use or another
 *     live collector on the same directory (`dashboard/.collector.lock`) →
 *     one line on stderr, exit 1. A stale lock (dead pid) is taken over.
 *   - producers are fire-and-forget: ingest answers as soon as records are
 *     validated and buffered; invalid records (incl. timestamps more than
 *     --max-clock-skew from our clock) get a 400 naming the first bad field,
 *     records over --max-record-mb a 413 naming the limit, while the valid
 *     rest of the batch is kept.
 *   - buffers are bounded per stream in records and in total in bytes
 *     (--max-buffer-mb); oldest dropped, counted, reported at error level at
 *     the next flush and in /metrics.
 *   - a failed write is logged at error level on every attempt and retried at
 *     the next flush interval; the records stay buffered (never swallowed).
 *   - sources degrade, never crash the daemon: a dead/slow engine leaves a
 *     gap with a rate-limited warning; a dying nvidia-smi is restarted with
 *     backoff; a missing SMI binary turns GPU sampling off with one warning.
 *   - SIGINT/SIGTERM: stop sources and the HTTP server, flush everything,
 *     release the lock, exit 0 (exit 1 if the final flush could not write
 *     everything). A second signal exits 1 immediately.
 *   - a crash mid-write can leave a torn last line; the next start truncates
 *     it (see lib/store/writer/partitioned-appender.ts) before appending.
 */
import path from "node:path";
import { ConfigError, USAGE, loadCollectorEnv } from "./env";
import type { CollectorConfig } from "./env";
import { startGpuPusher } from "./gpu-push";
import { createLogger } from "./log";
import type { Logger } from "./log";
import { startCollector } from "./server";
import { HostSampler } from "./sources/host-sampler";
import { LogTailer } from "./sources/log-tailer";

function die(message: string): never {
  process.stderr.write(`rlboard-collector: error: ${message}\n`);
  process.exit(1);
}

function onSignals(log: Logger, stop: () => Promise<boolean>): void {
  let stopping = false;
  const handler = (sig: NodeJS.Signals): void => {
    if (stopping) {
      log.error(`${sig} again during shutdown; exiting without waiting for the final flush`);
      process.exit(1);
    }
    stopping = true;
    log.info(`${sig} received; stopping`);
    stop().then(
      (ok) => process.exit(ok ? 0 : 1),
      (e: unknown) => {
        log.error("shutdown failed", e);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
}

async function main(cfg: CollectorConfig): Promise<void> {
  const log = createLogger({ level: cfg.logLevel });
  // docs/formats.md §4.12: host telemetry straight into the run directory (any mode)
  const host = cfg.hostTelemetry
    ? new HostSampler({
        dashDir: path.join(cfg.dumpDetails ?? "", "dashboard"),
        node: cfg.node,
        intervalS: cfg.hostIntervalS,
        ...(cfg.hostProcs ? { pattern: new RegExp(cfg.hostProcs) } : {}),
        ...(cfg.hostPidFile ? { pidFile: cfg.hostPidFile } : {}),
        log,
      })
    : null;
  host?.start();
  // docs/formats.md §4.13: log signals found on this node, for a web server that cannot read its files
  const tailer = cfg.logs.length
    ? new LogTailer({ globs: cfg.logs, dashDir: path.join(cfg.dumpDetails ?? "", "dashboard"), node: cfg.node, intervalS: cfg.logsIntervalS, log })
    : null;
  tailer?.start();
  const sampler = {
    source: cfg.gpuSource,
    intervalS: cfg.gpuIntervalS,
    processIntervalS: cfg.gpuProcessIntervalS,
    node: cfg.node,
  };
  if (cfg.gpuOnly) {
    const pusher = startGpuPusher({ ...sampler, pushUrl: cfg.push ?? "", pushIntervalS: cfg.pushIntervalS, log });
    onSignals(log, async () => {
      await Promise.all([pusher.stop(), host?.stop(), tailer?.stop()]);
      return true;
    });
    return;
  }
  const handle = await startCollector({
    runDir: cfg.dumpDetails ?? "",
    host: cfg.host,
    port: cfg.port,
    ...(cfg.runName ? { runName: cfg.runName } : {}),
    ...(cfg.router ? { router: cfg.router } : {}),
    engines: cfg.engines,
    scrapeIntervalS: cfg.scrapeIntervalS,
    scrapeTimeoutS: cfg.scrapeTimeoutS,
    sglangMetrics: cfg.sglangMetrics,
    gpuSource: cfg.gpuSource,
    gpuIntervalS: cfg.gpuIntervalS,
    gpuProcessIntervalS: cfg.gpuProcessIntervalS,
    node: cfg.node,
    flushIntervalS: cfg.flushIntervalS,
    flushBatch: cfg.flushBatch,
    maxBufferedPerStream: cfg.maxBuffered,
    maxBufferedBytes: Math.floor(cfg.maxBufferMb * 1024 * 1024),
    maxRecordBytes: Math.floor(cfg.maxRecordMb * 1024 * 1024),
    maxBodyBytes: Math.floor(cfg.maxBodyMb * 1024 * 1024),
    maxClockSkewS: cfg.maxClockSkewS,
    fsync: cfg.fsync,
    ...(host ? { procs: host.registry } : {}),
    log,
  });
  onSignals(log, async () => {
    await Promise.all([host?.stop(), tailer?.stop()]);
    return (await handle.stop()).ok;
  });
}

let cfg: CollectorConfig;
try {
  const parsed = loadCollectorEnv();
  if (parsed.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  cfg = parsed;
} catch (e) {
  die(e instanceof ConfigError ? `${e.message} (see --help)` : String(e));
}
main(cfg).catch((e: unknown) => {
  const err = e as NodeJS.ErrnoException;
  const msg = err.code && err.message ? err.message : err instanceof Error ? err.message : String(e);
  die(msg);
});
