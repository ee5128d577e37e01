/**
 * The collector's own Prometheus `/metrics`: per-stream record counters
 * (received / rejected / written / dropped / write errors / buffered) and the
 * latest value of every engine series and GPU lane, so a lab's existing
 * Prometheus can scrape live telemetry without reading the files.
 *
 * The latest-value maps are bounded (oldest keys evicted) so a producer that
 * invents label values cannot grow memory without limit.
 */
import type { RunWriter } from "@/lib/store/writer/run-writer";
import { STREAMS } from "@/lib/store/writer/records";
import type { EngineSample, GpuSample, StreamName } from "@/lib/store/writer/records";
import { escapeLabelValue, formatPromValue } from "./prometheus-text";

const MAX_SERIES = 20_000;

interface Latest {
  labels: string;
  value: number;
}

export class CollectorMetrics {
  readonly rejected: Record<StreamName, number> = Object.fromEntries(STREAMS.map((s) => [s, 0])) as Record<StreamName, number>;
  readonly ingestRequests = { ok: 0, bad_request: 0, too_large: 0 };
  private readonly engine = new Map<string, Latest>();
  private readonly gpu = new Map<string, GpuSample>();

  noteEngine(records: readonly EngineSample[]): void {
    for (const r of records) {
      let labels = `addr="${escapeLabelValue(r.addr)}",metric="${escapeLabelValue(r.metric)}"`;
      for (const k in r.labels) labels += `,${k}="${escapeLabelValue(r.labels[k] as string)}"`;
      this.engine.delete(labels); // re-insert so eviction drops the least recently updated
      this.engine.set(labels, { labels, value: r.value });
      if (this.engine.size > MAX_SERIES) this.engine.delete(this.engine.keys().next().value as string);
    }
  }

  noteGpu(records: readonly GpuSample[]): void {
    for (const r of records) {
      const key = `${r.node}:${r.gpu}`;
      this.gpu.delete(key);
      this.gpu.set(key, r);
      if (this.gpu.size > MAX_SERIES) this.gpu.delete(this.gpu.keys().next().value as string);
    }
  }

  render(writer: RunWriter | undefined): string {
    const out: string[] = [];
    const family = (name: string, type: string, help: string): void => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    };
    if (writer) {
      const perStream = (name: string, help: string, type: string, get: (s: StreamName) => number): void => {
        family(name, type, help);
        for (const s of STREAMS) out.push(`${name}{stream="${s}"} ${get(s)}`);
      };
      perStream("rlboard_collector_records_received_total", "Valid records accepted into the buffer.", "counter", (s) => writer.stats[s].received);
      perStream("rlboard_collector_records_rejected_total", "Records refused by validation.", "counter", (s) => this.rejected[s]);
      perStream("rlboard_collector_records_written_total", "Lines appended to disk.", "counter", (s) => writer.stats[s].written);
      perStream("rlboard_collector_records_dropped_total", "Records dropped by the buffer cap.", "counter", (s) => writer.stats[s].dropped + writer.stats[s].unserializable);
      perStream("rlboard_collector_write_errors_total", "Failed file writes (every attempt).", "counter", (s) => writer.stats[s].writeErrors);
      perStream("rlboard_collector_buffered_records", "Records waiting for the next flush.", "gauge", (s) => writer.pending(s));
      family("rlboard_collector_write_healthy", "gauge", "1 when the last flush wrote everything.");
      out.push(`rlboard_collector_write_healthy ${writer.healthy ? 1 : 0}`);
    }
    family("rlboard_collector_ingest_requests_total", "counter", "Ingest HTTP requests by outcome.");
    for (const [k, v] of Object.entries(this.ingestRequests)) out.push(`rlboard_collector_ingest_requests_total{outcome="${k}"} ${v}`);
    family("rlboard_engine_metric", "gauge", "Latest scraped or pushed sglang sample per engine series.");
    for (const e of this.engine.values()) out.push(`rlboard_engine_metric{${e.labels}} ${formatPromValue(e.value)}`);
    const gpuFamily = (name: string, help: string, get: (g: GpuSample) => number): void => {
      family(name, "gauge", help);
      for (const g of this.gpu.values()) out.push(`${name}{node="${escapeLabelValue(g.node)}",gpu="${g.gpu}"} ${get(g)}`);
    };
    gpuFamily("rlboard_gpu_util_percent", "Latest GPU utilisation.", (g) => g.util);
    gpuFamily("rlboard_gpu_mem_used_mib", "Latest GPU memory in use.", (g) => g.mem_mb);
    gpuFamily("rlboard_gpu_power_watts", "Latest GPU power draw.", (g) => g.power_w);
    gpuFamily("rlboard_gpu_sample_timestamp_seconds", "Time of the latest GPU sample.", (g) => g.ts);
    return out.join("\n") + "\n";
  }
}
