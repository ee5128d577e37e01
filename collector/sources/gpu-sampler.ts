/**
 * GPU sampler: `gpu_util` every interval and `gpu_processes` every 5 s for
 * the GPUs of this host (docs/formats.md §4.5, §4.6, §6.6).
 *
 * NVIDIA: ONE long-lived `nvidia-smi --query-gpu=… -lms <ms>` child streams
 * CSV lines (no process spawn per tick); lines of one burst form a tick and
 * share one `ts` (a new tick starts when a GPU index repeats or after half an
 * interval of silence). A periodic `--query-compute-apps` sweep yields the
 * per-process rows, mapped to indices via the UUIDs of the stream.
 * AMD: `amd-smi metric … --json` polled every interval, `amd-smi process
 * --json` every 5 s (amd-smi has no stable streaming JSON mode).
 *
 * Failure policy: binary missing → one warning, sampler off (in `auto`,
 * nvidia-smi then amd-smi are tried). The streaming child dying is restarted
 * with exponential backoff (1 s doubling to 60 s, reset once it delivers
 * samples again), with rate-limited warnings. An unreadable device is skipped
 * for that tick; other devices still report.
 */
import { execFile, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import type { GpuProcessSample, GpuSample } from "@/lib/store/format";
import type { Logger } from "../log";
import { RateLimitedWarner } from "../log";
import {
  NVIDIA_APPS_QUERY,
  NVIDIA_GPU_QUERY,
  parseAmdMetrics,
  parseAmdProcesses,
  parseNvidiaGpuLine,
  parseNvidiaProcessLine,
} from "./gpu-smi";
import type { ProcessReading } from "./gpu-smi";

export const GPU_SOURCES = ["auto", "nvidia-smi", "amd-smi", "none"] as const;
export type GpuSource = (typeof GPU_SOURCES)[number];

export interface GpuSink {
  gpu(records: GpuSample[]): void;
  processes(records: GpuProcessSample[]): void;
}

export interface GpuSamplerOptions {
  source: GpuSource;
  intervalS: number;
  /** Process sweep cadence (default 5 s). */
  processIntervalS?: number;
  /** The `node` string written into every record (host IP). */
  node: string;
  nvidiaSmi?: string;
  amdSmi?: string;
  sink: GpuSink;
  log: Logger;
  now?: () => number;
  restartBaseMs?: number;
  restartMaxMs?: number;
  /** Timeout for one-shot SMI commands. */
  commandTimeoutMs?: number;
}

type Backend = "nvidia-smi" | "amd-smi";

function isMissing(e: unknown): boolean {
  return (e as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
}

function run(bin: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { timeout: timeoutMs, maxBuffer: 16 << 20, encoding: "utf8" }, (err, stdout) => {
      if (err) reject(err instanceof Error ? err : new Error(`${bin} failed`));
      else resolve(stdout);
    });
  });
}

export class GpuSampler {
  private readonly warner: RateLimitedWarner;
  private readonly now: () => number;
  private readonly nvidiaSmi: string;
  private readonly amdSmi: string;
  private readonly timeoutMs: number;
  private stopped = false;
  private active: Backend | "off" | "pending" = "pending";
  private child: ChildProcess | undefined;
  private childClosed: Promise<void> = Promise.resolve();
  private restartTimer: NodeJS.Timeout | undefined;
  private backoffMs: number;
  private pollTimer: NodeJS.Timeout | undefined;
  private procTimer: NodeJS.Timeout | undefined;
  private procBusy = false;
  private pollBusy = false;
  private readonly uuidToIndex = new Map<string, number>();
  // Current tick of the nvidia-smi stream.
  private tickTs = 0;
  private tickWall = 0;
  private readonly tickSeen = new Set<number>();

  constructor(private readonly opts: GpuSamplerOptions) {
    this.warner = new RateLimitedWarner(opts.log);
    this.now = opts.now ?? (() => Date.now() / 1000);
    this.nvidiaSmi = opts.nvidiaSmi ?? "nvidia-smi";
    this.amdSmi = opts.amdSmi ?? "amd-smi";
    this.timeoutMs = opts.commandTimeoutMs ?? 10_000;
    this.backoffMs = opts.restartBaseMs ?? 1000;
  }

  /** Which backend is sampling ("pending" until the first start attempt resolves). */
  get backend(): Backend | "off" | "pending" {
    return this.active;
  }

  start(): void {
    const s = this.opts.source;
    if (s === "none") {
      this.active = "off";
      return;
    }
    if (s === "amd-smi") this.startAmd([]);
    else this.startNvidia();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    clearInterval(this.pollTimer);
    clearInterval(this.procTimer);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 2000);
      await this.childClosed;
      clearTimeout(killer);
    }
  }

  // ---- NVIDIA ------------------------------------------------------------

  private startNvidia(): void {
    if (this.stopped) return;
    const ms = Math.max(1, Math.round(this.opts.intervalS * 1000));
    const child = spawn(this.nvidiaSmi, [`--query-gpu=${NVIDIA_GPU_QUERY}`, "--format=csv,noheader,nounits", "-lms", String(ms)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    let missing = false;
    let gotSample = false;
    let stderrTail = "";
    let buf = "";
    this.childClosed = new Promise((resolve) => child.once("close", () => resolve()));
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line && this.onNvidiaLine(line)) gotSample = true;
      }
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderrTail = (stderrTail + chunk).slice(-400);
    });
    child.once("spawn", () => {
      if (this.active === "pending") {
        this.active = "nvidia-smi";
        this.opts.log.info(`GPU sampler: streaming ${this.nvidiaSmi} every ${ms} ms (node ${this.opts.node})`);
        this.procTimer = setInterval(() => void this.nvidiaProcessSweep(), (this.opts.processIntervalS ?? 5) * 1000);
      }
    });
    child.once("error", (e) => {
      if (isMissing(e) && this.active === "pending") {
        missing = true;
        if (this.opts.source === "auto") this.startAmd([`${this.nvidiaSmi}: not found`]);
        else this.off([`${this.nvidiaSmi}: not found`]);
        return;
      }
      this.warner.warn("nvidia-spawn", `GPU sampler: ${this.nvidiaSmi} failed: ${e.message}`);
    });
    child.once("close", (code, signal) => {
      if (this.child === child) this.child = undefined;
      if (missing || this.stopped || this.active !== "nvidia-smi") return;
      if (gotSample) this.backoffMs = this.opts.restartBaseMs ?? 1000;
      const delay = this.backoffMs;
      this.backoffMs = Math.min(this.backoffMs * 2, this.opts.restartMaxMs ?? 60_000);
      const why = signal ? `signal ${signal}` : `code ${code}`;
      this.warner.warn(
        "nvidia-exit",
        `GPU sampler: ${this.nvidiaSmi} exited (${why}${stderrTail ? `: ${stderrTail.trim()}` : ""}); restarting in ${delay / 1000} s`,
      );
      this.restartTimer = setTimeout(() => this.startNvidia(), delay);
    });
  }

  /** Handle one CSV line; true when it produced a sample. */
  private onNvidiaLine(line: string): boolean {
    const r = parseNvidiaGpuLine(line);
    if ("error" in r) {
      if (r.uuid !== undefined && r.gpu !== undefined) this.uuidToIndex.set(r.uuid, r.gpu);
      this.warner.warn("nvidia-line", `GPU sampler: skipped a reading: ${r.error}`);
      return false;
    }
    const wall = Date.now();
    if (this.tickSeen.has(r.gpu) || wall - this.tickWall > (this.opts.intervalS * 1000) / 2) {
      this.tickTs = this.now();
      this.tickWall = wall;
      this.tickSeen.clear();
    }
    this.tickSeen.add(r.gpu);
    if (r.uuid) this.uuidToIndex.set(r.uuid, r.gpu);
    this.opts.sink.gpu([{ ts: this.tickTs, node: this.opts.node, gpu: r.gpu, util: r.util, mem_mb: r.memMb, power_w: r.powerW }]);
    return true;
  }

  private async nvidiaProcessSweep(): Promise<void> {
    if (this.procBusy || this.stopped) return;
    this.procBusy = true;
    const ts = this.now();
    try {
      const out = await run(this.nvidiaSmi, [`--query-compute-apps=${NVIDIA_APPS_QUERY}`, "--format=csv,noheader,nounits"], this.timeoutMs);
      const rows: ProcessReading[] = [];
      for (const line of out.split("\n")) {
        const t = line.trim();
        if (!t || t.startsWith("No running")) continue;
        const r = parseNvidiaProcessLine(t);
        if (typeof r === "string") this.warner.warn("nvidia-proc-line", `GPU sampler: ${r}`);
        else rows.push(r);
      }
      this.emitProcesses(ts, rows);
    } catch (e) {
      this.warner.warn("nvidia-proc", `GPU sampler: process sweep failed: ${(e as Error).message}`);
    } finally {
      this.procBusy = false;
    }
  }

  // ---- AMD ---------------------------------------------------------------

  private startAmd(priorErrors: string[]): void {
    if (this.stopped) return;
    void run(this.amdSmi, ["version"], this.timeoutMs).then(
      () => {
        if (this.stopped) return;
        this.active = "amd-smi";
        this.opts.log.info(`GPU sampler: polling ${this.amdSmi} every ${this.opts.intervalS} s (node ${this.opts.node})`);
        this.pollTimer = setInterval(() => void this.amdPoll(), this.opts.intervalS * 1000);
        this.procTimer = setInterval(() => void this.amdProcessSweep(), (this.opts.processIntervalS ?? 5) * 1000);
        void this.amdPoll();
      },
      (e: unknown) => this.off([...priorErrors, isMissing(e) ? `${this.amdSmi}: not found` : `${this.amdSmi}: ${(e as Error).message}`]),
    );
  }

  private async amdPoll(): Promise<void> {
    if (this.pollBusy || this.stopped) return;
    this.pollBusy = true;
    const ts = this.now();
    try {
      const out = await run(this.amdSmi, ["metric", "--usage", "--power", "--mem-usage", "--json"], this.timeoutMs);
      const recs: GpuSample[] = [];
      for (const r of parseAmdMetrics(out)) {
        if (typeof r === "string") this.warner.warn("amd-device", `GPU sampler: skipped a reading: ${r}`);
        else recs.push({ ts, node: this.opts.node, gpu: r.gpu, util: r.util, mem_mb: r.memMb, power_w: r.powerW });
      }
      if (recs.length > 0) this.opts.sink.gpu(recs);
    } catch (e) {
      this.warner.warn("amd-poll", `GPU sampler: ${this.amdSmi} metric failed: ${(e as Error).message}`);
    } finally {
      this.pollBusy = false;
    }
  }

  private async amdProcessSweep(): Promise<void> {
    if (this.procBusy || this.stopped) return;
    this.procBusy = true;
    const ts = this.now();
    try {
      this.emitProcesses(ts, parseAmdProcesses(await run(this.amdSmi, ["process", "--json"], this.timeoutMs)));
    } catch (e) {
      this.warner.warn("amd-proc", `GPU sampler: process sweep failed: ${(e as Error).message}`);
    } finally {
      this.procBusy = false;
    }
  }

  // ---- shared ------------------------------------------------------------

  private emitProcesses(ts: number, rows: readonly ProcessReading[]): void {
    const recs: GpuProcessSample[] = [];
    for (const r of rows) {
      const gpu = r.gpu ?? (r.uuid === undefined ? undefined : this.uuidToIndex.get(r.uuid));
      if (gpu === undefined) {
        this.warner.warn("proc-uuid", `GPU sampler: process ${r.pid} on unknown device ${r.uuid ?? "?"} skipped`);
        continue;
      }
      recs.push({ ts, node: this.opts.node, gpu, pid: r.pid, name: r.name, mem_mb: r.memMb });
    }
    if (recs.length > 0) this.opts.sink.processes(recs);
  }

  private off(errors: string[]): void {
    this.active = "off";
    this.opts.log.warn(`GPU sampler disabled: no usable GPU telemetry tool (${errors.join("; ")})`);
  }
}
