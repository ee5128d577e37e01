/**
 * The collector's own Prometheus `/metrics`: per-stream record counters
 * (received / rejected / written / dropped / write errors / buffered) and a
 * latest-value snapshot of the run for a lab's Prometheus and Grafana
 * (docs/collector.md, "Prometheus and Grafana"), in two mappings:
 *
 *   - one family per quantity, labelled `node`/`gpu`/`engine`/`phase`/
 *     `metric` plus `run_name`: `rlboard_gpu_*`, `rlboard_engine_metric`,
 *     `rlboard_engine_running_reqs`, `rlboard_phase_last_duration_seconds`,
 *     `rlboard_run_metric`, `rlboard_run_info`;
 *   - exactly the gauges miles' Prometheus forwarding produces
 *     (`miles_metric_dashboard_gpu_10_0_0_1_3_util{run_name="…"}`, …,
 *     `miles_metric_rollout_rewards_mean{run_name="…"}`; naming in forward.ts).
 *
 * Every latest-value map is bounded (least recently updated keys evicted) so
 * a producer that invents label values or metric keys cannot grow memory
 * without limit; otherwise a series is kept, like miles keeps its gauges,
 * until the collector stops.
 */
import type { RunWriter } from "@/lib/store/writer/run-writer";
import { OPEN_T1, STREAMS } from "@/lib/store/format";
import type { EngineSample, GpuSample, MetricsRecord, PhaseEvent, StreamName } from "@/lib/store/format";
import { dashboardEngineKey, dashboardGpuKey, dashboardPhaseKey, escapeHelp, gaugeValue, milesMetricName, promLabelName } from "./forward";
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

/** A Map that keeps the most recently set keys: above MAX_SERIES the oldest 10 % go. */
class LatestMap<V> {
  private readonly map = new Map<string, V>();

  get size(): number {
    return this.map.size;
  }

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  set(key: string, value: V): void {
    this.map.delete(key); // re-insertion moves the key to the end (most recent)
    this.map.set(key, value);
    if (this.map.size > MAX_SERIES) {
      let n = this.map.size - Math.floor(MAX_SERIES * 0.9);
      for (const k of this.map.keys()) {
        if (n-- <= 0) break;
        this.map.delete(k);
      }
    }
  }

  /** Least recently set first. */
  entries(): IterableIterator<[string, V]> {
    return this.map.entries();
  }
}

/** The engine gauge miles sums per engine (docs/formats.md §6.8). */
export const RUNNING_REQS_METRIC = "sglang_num_running_reqs";

interface RunningReqs {
  ts: number;
  sum: number;
}

interface PhaseLast {
  t1: number;
  seconds: number;
}

/** `run_name` when nobody named the run (the collector's meta.json default). */
export const DEFAULT_RUN_NAME = "miles-run";

export class CollectorMetrics {
  readonly rejected: Record<StreamName, number> = Object.fromEntries(STREAMS.map((s) => [s, 0])) as Record<StreamName, number>;
  readonly ingestRequests = { ok: 0, bad_request: 0, too_large: 0 };
  private readonly engine = new SeriesIndex<EngineLeaf>();
  private readonly gpu = new SeriesIndex<GpuLeaf>();
  /** Per engine address: the sum of `sglang_num_running_reqs` over the samples of its latest tick. */
  private readonly running = new LatestMap<RunningReqs>();
  /** Per phase name: the latest completed interval (largest `t1`) across all lanes. */
  private readonly phases = new LatestMap<PhaseLast>();
  /** Per pushed metric key: its latest numeric value. */
  private readonly train = new LatestMap<number>();

  noteEngine(records: readonly EngineSample[]): void {
    for (const r of records) {
      let node = child(child(this.engine.root, r.addr), r.metric);
      for (const k in r.labels) node = child(child(node, k), r.labels[k] as string);
      let leaf = node.leaf;
      if (leaf === undefined) {
        let labels = `engine="${escapeLabelValue(r.addr)}",metric="${escapeLabelValue(r.metric)}"`;
        const seen = new Set<string>();
        for (const k in r.labels) {
          const name = promLabelName(k);
          if (seen.has(name)) continue; // two keys that sanitize to one name: the first is kept
          seen.add(name);
          labels += `,${name}="${escapeLabelValue(r.labels[k] as string)}"`;
        }
        leaf = { seq: 0, node: node, labels, value: r.value };
      }
      leaf.value = r.value;
      this.engine.touch(leaf);
      if (r.metric === RUNNING_REQS_METRIC) this.noteRunning(r);
    }
    this.engine.evictOverflow();
  }

  /** Samples of one tick share its `ts` and add up (dp ranks, label sets); a newer `ts` restarts the sum. */
  private noteRunning(r: EngineSample): void {
    const cur = this.running.get(r.addr);
    if (cur === undefined || r.ts > cur.ts) this.running.set(r.addr, { ts: r.ts, sum: r.value });
    else if (r.ts === cur.ts) cur.sum += r.value;
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

  /**
   * Closed intervals only (OPEN markers are skipped): per name, the one that
   * ended last across all lanes wins, whatever order the ranks' batches
   * arrive in; on equal `t1` the later received one.
   */
  notePhases(records: readonly PhaseEvent[]): void {
    for (const p of records) {
      if (p.t1 === OPEN_T1) continue;
      const cur = this.phases.get(p.name);
      if (cur === undefined || p.t1 >= cur.t1) this.phases.set(p.name, { t1: p.t1, seconds: p.t1 - p.t0 });
    }
  }

  /** Numeric and bool values of pushed metric dicts; strings are skipped (as miles does). */
  noteMetrics(records: readonly MetricsRecord[]): void {
    for (const r of records) {
      const entries = r.metrics instanceof Map ? r.metrics.entries() : Object.entries(r.metrics);
      for (const [k, v] of entries) {
        const value = gaugeValue(v);
        if (value !== undefined) this.train.set(k, value);
      }
    }
  }

  /** Distinct series held for `/metrics`. */
  get seriesCount(): { engine: number; gpu: number; running: number; phases: number; metrics: number } {
    return { engine: this.engine.size, gpu: this.gpu.size, running: this.running.size, phases: this.phases.size, metrics: this.train.size };
  }

  render(writer: RunWriter | undefined, runName: string = DEFAULT_RUN_NAME): string {
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
      perStream("rlboard_collector_dropped_bytes_total", "Bytes (as JSONL) of the records dropped by the buffer caps.", "counter", (s) => writer.stats[s].droppedBytes);
      family("rlboard_collector_buffered_bytes", "gauge", "Bytes (as JSONL) held for writing, including a flush in progress.");
      out.push(`rlboard_collector_buffered_bytes ${writer.pendingBytes()}`);
      family("rlboard_collector_buffer_limit_bytes", "gauge", "The byte cap on buffered records (--max-buffer-mb).");
      out.push(`rlboard_collector_buffer_limit_bytes ${writer.maxBufferedBytes}`);
      family("rlboard_collector_write_healthy", "gauge", "1 when the last flush wrote everything.");
      out.push(`rlboard_collector_write_healthy ${writer.healthy ? 1 : 0}`);
    }
    family("rlboard_collector_ingest_requests_total", "counter", "Ingest HTTP requests by outcome.");
    for (const [k, v] of Object.entries(this.ingestRequests)) out.push(`rlboard_collector_ingest_requests_total{outcome="${k}"} ${v}`);

    const run = `run_name="${escapeLabelValue(runName)}"`;
    family("rlboard_run_info", "gauge", "Always 1; names the run this collector writes.");
    out.push(`rlboard_run_info{${run}} 1`);
    family("rlboard_engine_metric", "gauge", "Latest scraped or pushed sglang sample per engine series.");
    for (const e of this.engine.ordered()) out.push(`rlboard_engine_metric{${e.labels},${run}} ${formatPromValue(e.value)}`);
    const running = [...this.running.entries()];
    family("rlboard_engine_running_reqs", "gauge", "sglang_num_running_reqs of the engine's latest scrape tick, summed across its dp ranks.");
    for (const [addr, r] of running) out.push(`rlboard_engine_running_reqs{engine="${escapeLabelValue(addr)}",${run}} ${formatPromValue(r.sum)}`);
    const gpus = this.gpu.ordered().map((l) => l.sample);
    const gpuFamily = (name: string, help: string, get: (g: GpuSample) => number): void => {
      family(name, "gauge", help);
      for (const g of gpus) out.push(`${name}{node="${escapeLabelValue(g.node)}",gpu="${g.gpu}",${run}} ${get(g)}`);
    };
    gpuFamily("rlboard_gpu_util_percent", "Latest GPU utilisation.", (g) => g.util);
    gpuFamily("rlboard_gpu_mem_used_mib", "Latest GPU memory in use.", (g) => g.mem_mb);
    gpuFamily("rlboard_gpu_power_watts", "Latest GPU power draw.", (g) => g.power_w);
    gpuFamily("rlboard_gpu_sample_timestamp_seconds", "Time of the latest GPU sample.", (g) => g.ts);
    const phases = [...this.phases.entries()];
    family("rlboard_phase_last_duration_seconds", "gauge", "t1 - t0 of the latest completed interval of each phase, across all lanes.");
    for (const [name, p] of phases) out.push(`rlboard_phase_last_duration_seconds{phase="${escapeLabelValue(name)}",${run}} ${formatPromValue(p.seconds)}`);
    const train = [...this.train.entries()];
    family("rlboard_run_metric", "gauge", "Latest value of each pushed training metric (numbers and bools).");
    for (const [key, v] of train) out.push(`rlboard_run_metric{metric="${escapeLabelValue(key)}",${run}} ${formatPromValue(v)}`);

    // miles' names: one gauge per key. Two keys that map to one name (after
    // sanitising) would be a duplicate family; the first one rendered is kept.
    const emitted = new Set<string>();
    const miles = (key: string, value: number): void => {
      const name = milesMetricName(key);
      if (emitted.has(name)) return;
      emitted.add(name);
      family(name, "gauge", escapeHelp(key));
      out.push(`${name}{${run}} ${formatPromValue(value)}`);
    };
    for (const g of gpus) {
      miles(dashboardGpuKey(g.node, g.gpu, "util"), g.util);
      miles(dashboardGpuKey(g.node, g.gpu, "mem_mb"), g.mem_mb);
    }
    for (const [addr, r] of running) miles(dashboardEngineKey(addr), r.sum);
    for (const [name, p] of phases) miles(dashboardPhaseKey(name), p.seconds);
    for (const [key, v] of train) miles(key, v);
    return out.join("\n") + "\n";
  }
}
