/**
 * Per-node mode (`--gpu-only --push URL`): sample this host's GPUs and push
 * the records to the driver collector's `/v1/gpu` and `/v1/gpu_processes`
 * every `pushIntervalS` (5 s, like the reference sampler actors).
 *
 * Failure policy: a failed push keeps the records (bounded per stream,
 * oldest dropped and counted) and is retried at the next interval, with a
 * rate-limited warning; stopping makes one last push attempt. The driver
 * validates and writes; this process never touches the run directory.
 */
import type { GpuProcessSample, GpuSample } from "@/lib/store/format";
import { httpFetch } from "./http-client";
import type { Logger } from "./log";
import { RateLimitedWarner } from "./log";
import { GpuSampler } from "./sources/gpu-sampler";
import type { GpuSamplerOptions } from "./sources/gpu-sampler";

export const PUSH_BUFFER_CAP = 100_000;

export interface GpuPusherOptions extends Omit<GpuSamplerOptions, "sink" | "log"> {
  pushUrl: string;
  pushIntervalS: number;
  log: Logger;
  timeoutS?: number;
}

export interface GpuPusherHandle {
  sampler: GpuSampler;
  /** Push now; resolves once both streams were attempted. */
  push(): Promise<void>;
  stop(): Promise<void>;
  dropped(): number;
}

/** A bounded queue of records for one route; failed batches go back to the front. */
class Outbox<T> {
  items: T[] = [];
  dropped = 0;
  constructor(private readonly log: Logger) {}

  add(recs: readonly T[]): void {
    for (const r of recs) this.items.push(r);
    this.trim();
  }

  take(): T[] {
    const out = this.items;
    this.items = [];
    return out;
  }

  putBack(batch: T[]): void {
    this.items = batch.concat(this.items);
    this.trim();
  }

  private trim(): void {
    if (this.items.length <= PUSH_BUFFER_CAP) return;
    const n = this.items.length - PUSH_BUFFER_CAP;
    this.items.splice(0, n);
    this.dropped += n;
    this.log.error(`GPU push buffer full: dropped ${n} oldest records (driver unreachable?)`);
  }
}

export function startGpuPusher(opts: GpuPusherOptions): GpuPusherHandle {
  const warner = new RateLimitedWarner(opts.log);
  const base = opts.pushUrl.replace(/\/+$/, "");
  const outboxes = { gpu: new Outbox<GpuSample>(opts.log), gpu_processes: new Outbox<GpuProcessSample>(opts.log) };
  let busy: Promise<void> | undefined;

  const pushStream = async (route: "gpu" | "gpu_processes"): Promise<void> => {
    const box: Outbox<unknown> = outboxes[route];
    const batch = box.take();
    if (batch.length === 0) return;
    try {
      const res = await httpFetch(`${base}/v1/${route}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ records: batch }),
        timeoutMs: (opts.timeoutS ?? 10) * 1000,
      });
      const text = res.text;
      // 400 means the driver kept the valid part; resending would duplicate it.
      if (res.status === 400) warner.warn(`${route}-400`, `push to ${base}/v1/${route} rejected records: ${text}`);
      else if (!res.ok) throw new Error(`HTTP ${res.status} ${text.slice(0, 200)}`);
    } catch (e) {
      box.putBack(batch);
      warner.warn(route, `push to ${base}/v1/${route} failed (${(e as Error).message}); ${batch.length} records kept for retry`);
    }
  };

  const push = (): Promise<void> =>
    (busy ??= Promise.all([pushStream("gpu"), pushStream("gpu_processes")]).then(() => {
      busy = undefined;
    }));

  const sampler = new GpuSampler({
    ...opts,
    sink: { gpu: (r) => outboxes.gpu.add(r), processes: (r) => outboxes.gpu_processes.add(r) },
  });
  sampler.start();
  const timer = setInterval(() => void push(), opts.pushIntervalS * 1000);
  opts.log.info(`GPU-only mode: pushing node ${opts.node} to ${base} every ${opts.pushIntervalS} s`);

  return {
    sampler,
    push,
    dropped: () => outboxes.gpu.dropped + outboxes.gpu_processes.dropped,
    stop: async () => {
      clearInterval(timer);
      await sampler.stop();
      await busy;
      await push();
    },
  };
}
