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

export const MAX_SERIES = 20_000;

/**
 * Latest value per series, updated once per ingested record, so the update
 * must not allocate: series are found by walking a trie of the record's own
 * strings (addr, metric, then label key/value pairs in record order), and the
 * escaped label text is built once, when a series first appears. Recency is a
 * sequence number; rendering sorts by it (least recently updated first).
 * Above MAX_SERIES the least recently updated 10 % are evicted at once.
 */
interface TrieNode<L> {
  parent: TrieNode<L> | undefined;
  key: string | number;
  next: Map<string | number, TrieNode<L>> | undefined;
  leaf: L | undefined;
}

interface Leaf {
  seq: number;
  node: TrieNode<Leaf>;
}

interface EngineLeaf extends Leaf {
  labels: string;
  value: number;
}

interface GpuLeaf extends Leaf {
  sample: GpuSample;
}

const newNode = <L>(parent: TrieNode<L> | undefined, key: string | number): TrieNode<L> => ({ parent, key, next: undefined, leaf: undefined });

function child<L>(node: TrieNode<L>, key: string | number): TrieNode<L> {
  let c = node.next?.get(key);
  if (c === undefined) {
    c = newNode(node, key);
    (node.next ??= new Map()).set(key, c);
  }
  return c;
}

class SeriesIndex<L extends Leaf> {
  readonly root: TrieNode<L> = newNode<L>(undefined, "");
  private readonly leaves = new Set<L>();
  private seq = 0;

  get size(): number {
    return this.leaves.size;
  }

  /** Mark `leaf` (new or existing) as just updated. */
  touch(leaf: L): void {
    leaf.seq = ++this.seq;
    if (leaf.node.leaf !== leaf) {
      leaf.node.leaf = leaf;
      this.leaves.add(leaf);
    }
  }

  evictOverflow(): void {
    if (this.leaves.size <= MAX_SERIES) return;
    const ordered = this.ordered();
    for (const leaf of ordered.slice(0, ordered.length - Math.floor(MAX_SERIES * 0.9))) this.remove(leaf);
  }

  /** Least recently updated first. */
  ordered(): L[] {
    return [...this.leaves].sort((a, b) => a.seq - b.seq);
  }

  private remove(leaf: L): void {
    this.leaves.delete(leaf);
    let n: TrieNode<L> = leaf.node as TrieNode<L>;
    n.leaf = undefined;
    while (n.parent && n.leaf === undefined && (n.next === undefined || n.next.size === 0)) {
      n.parent.next?.delete(n.key);
      n = n.parent;
    }
  }
}

export class CollectorMetrics {
  readonly rejected: Record<StreamName, number> = Object.fromEntries(STREAMS.map((s) => [s, 0])) as Record<StreamName, number>;
  readonly ingestRequests = { ok: 0, bad_request: 0, too_large: 0 };
  private readonly engine = new SeriesIndex<EngineLeaf>();
  private readonly gpu = new SeriesIndex<GpuLeaf>();

  noteEngine(records: readonly EngineSample[]): void {
    for (const r of records) {
      let node = child(child(this.engine.root, r.addr), r.metric);
      for (const k in r.labels) node = child(child(node, k), r.labels[k] as string);
      let leaf = node.leaf;
      if (leaf === undefined) {
        let labels = `addr="${escapeLabelValue(r.addr)}",metric="${escapeLabelValue(r.metric)}"`;
        for (const k in r.labels) labels += `,${k}="${escapeLabelValue(r.labels[k] as string)}"`;
        leaf = { seq: 0, node: node, labels, value: r.value };
      }
      leaf.value = r.value;
      this.engine.touch(leaf);
    }
    this.engine.evictOverflow();
  }

  noteGpu(records: readonly GpuSample[]): void {
    for (const r of records) {
      const node = child(child(this.gpu.root, r.node), r.gpu);
      const leaf = node.leaf ?? { seq: 0, node: node, sample: r };
      leaf.sample = r;
      this.gpu.touch(leaf);
    }
    this.gpu.evictOverflow();
  }

  /** Distinct engine series and GPU lanes held for `/metrics`. */
  get seriesCount(): { engine: number; gpu: number } {
    return { engine: this.engine.size, gpu: this.gpu.size };
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
    for (const e of this.engine.ordered()) out.push(`rlboard_engine_metric{${e.labels}} ${formatPromValue(e.value)}`);
    const gpus = this.gpu.ordered().map((l) => l.sample);
    const gpuFamily = (name: string, help: string, get: (g: GpuSample) => number): void => {
      family(name, "gauge", help);
      for (const g of gpus) out.push(`${name}{node="${escapeLabelValue(g.node)}",gpu="${g.gpu}"} ${get(g)}`);
    };
    gpuFamily("rlboard_gpu_util_percent", "Latest GPU utilisation.", (g) => g.util);
    gpuFamily("rlboard_gpu_mem_used_mib", "Latest GPU memory in use.", (g) => g.mem_mb);
    gpuFamily("rlboard_gpu_power_watts", "Latest GPU power draw.", (g) => g.power_w);
    gpuFamily("rlboard_gpu_sample_timestamp_seconds", "Time of the latest GPU sample.", (g) => g.ts);
    return out.join("\n") + "\n";
  }
}
