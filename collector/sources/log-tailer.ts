/**
 * Log signals at the source (`--logs GLOB`, docs/formats.md §4.13): on the node where the
 * logs are written, scan them incrementally (lib/store/logs/scanner.ts: byte offsets,
 * bounded memory) every `intervalS` and append one bounded record per signal that got new
 * lines to `dashboard/log_signals/{YYYYMMDD_HH}.jsonl`, so the web server needs no access
 * to the node's files. Lines already in a file when the tailer first sees it count too
 * (the first tick reports them), each at most once.
 */
import fs from "node:fs";
import path from "node:path";
import { globSources } from "@/lib/store/logs/glob";
import { LogScanner, MAX_SAMPLES } from "@/lib/store/logs/scanner";
import { LOG_SIGNALS_STREAM, logSignalsFileName, serializeLogSignalRecords, type LogSignalRecord } from "@/lib/store/format";
import type { Logger } from "../log";

export type { LogSignalRecord };

export interface LogTailerOptions {
  globs: readonly string[];
  dashDir: string;
  node: string;
  intervalS: number;
  log: Logger;
  now?: () => number;
}

export class LogTailer {
  private readonly scanner = new LogScanner();
  private batch = new Map<string, LogSignalRecord>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<LogSignalRecord[]> | null = null;
  private warned = false;

  constructor(private readonly opts: LogTailerOptions) {
    this.scanner.onMatch = (signal, sample, ts) => {
      let r = this.batch.get(signal);
      if (!r) this.batch.set(signal, (r = { ts: 0, node: opts.node, signal, count: 0, first_ts: ts, last_ts: ts, samples: [] }));
      r.count++;
      r.first_ts = Math.min(r.first_ts, ts);
      r.last_ts = Math.max(r.last_ts, ts);
      r.samples.push(sample);
      if (r.samples.length > MAX_SAMPLES) r.samples.shift();
    };
  }

  start(): void {
    if (this.timer) return;
    void this.tick();
    this.timer = setInterval(() => void this.tick(), Math.max(0.1, this.opts.intervalS) * 1000);
    this.timer.unref();
  }

  /** One scan; answers the records it appended. */
  tick(): Promise<LogSignalRecord[]> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(): Promise<LogSignalRecord[]> {
    const sources = (await Promise.all(this.opts.globs.map((g) => globSources(g)))).flat();
    await this.scanner.scan(sources);
    const ts = (this.opts.now ?? (() => Date.now() / 1000))();
    const records = [...this.batch.values()].map((r) => ({ ...r, ts }));
    if (!records.length) return [];
    const file = path.join(this.opts.dashDir, LOG_SIGNALS_STREAM, logSignalsFileName(ts));
    try {
      await fs.promises.mkdir(path.dirname(file), { recursive: true });
      await fs.promises.appendFile(file, serializeLogSignalRecords(records));
      this.batch = new Map();
      this.warned = false;
      return records;
    } catch (err) {
      // keep the (bounded: one record per signal) batch for the next tick
      if (!this.warned) this.opts.log.warn(`log signals: cannot append to ${file}: ${(err as Error).message}`);
      this.warned = true;
      return [];
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
