/**
 * MetricStore: the read side of one run's telemetry directory `{runDir}/dashboard/`
 * (docs/api.md 1.8, 8.1–8.3; docs/formats.md §8).
 *
 * Store layout policy:
 *  - Opening parses only `meta.json` and `lane_catalog.json`. Every stream is parsed on
 *    first use; partitioned streams only for the hour files a query's window touches.
 *  - All reads consume complete lines from remembered byte offsets (tail-file.ts); corrupt
 *    complete lines are skipped and counted per stream (`corruptLines()`), never fatal.
 *  - Partitioned streams re-stat their files at most every `statIntervalMs` (2 s), on
 *    query. The three flat streams are frozen after their first read unless `follow`.
 *  - gpu_util, engine_series and phases live as typed columns (blocks.ts), parsed by
 *    byte-level line scanners with a generic JSON fallback (ingest.ts); parsed blocks are
 *    bounded by an LRU per stream; derived results go through `memo`, keyed on the
 *    signature (file keys + sizes) of the streams they read, or are memoised on the block
 *    they derive from (engine parts per partition, phase twin resolution).
 *  - Closed partitions (all of them when not following; else hours older than the newest)
 *    are cached as binary columns under `cacheDir` (binary-cache.ts), keyed on size+mtime,
 *    with per-partition summaries (folded engine parts, unmatched OPEN markers). Cached
 *    engine partitions are read per metric on first use. Cache writes happen off the query
 *    path and are completed synchronously at process exit.
 * Nothing here imports Next; the directory is injected. Every file is listed, stat'ed and
 * opened through the run's `RunFs` (lib/store/safe-fs.ts): one resolving outside the run
 * directory (a symlink `dashboard/metrics.jsonl → /elsewhere`) is treated as absent.
 */
import path from "node:path";
import { DASHBOARD_DIR, LANE_CATALOG_FILE, META_FILE, parseRunHeader, phaseIndexRel, readCatalogLanes, type PhaseHourFacts } from "@/lib/store/format";
import { RunFs } from "@/lib/store/safe-fs";
import {
  cmpStr,
  decodeDataBuffer,
  decodeGpuProcess,
  decodeMetrics,
  decodeTopology,
  decodeTrajectory,
  Dicts,
  EngineBlock,
  GpuBlock,
  PhaseBlock,
  TimedBlock,
} from "@/lib/store/telemetry/blocks";
import { BinaryCache } from "@/lib/store/telemetry/binary-cache";
import { EngineLineScanner, GpuLineScanner, ingestLines, PhaseLineScanner } from "@/lib/store/telemetry/ingest";
import { filesStamp, FlatStream, PartitionedStream, type StreamOptions } from "@/lib/store/telemetry/stream";
import { fileReader, scannerCodec } from "@/lib/store/telemetry/read-range";
import { blockRows, factsFromIndex, phaseHourFacts } from "@/lib/store/telemetry/phase-index";
import type { BlockCodec, TailFile } from "@/lib/store/telemetry/tail-file";
import {
  OPEN_T1,
  type DataBufferSample,
  type GpuProcessSample,
  type LaneInfo,
  type MetricsRecord,
  type PhaseEvent,
  type RunMeta,
  type StreamName,
  type TopologySnapshot,
  type TrajectoryEvent,
} from "@/lib/store/telemetry/types";

export interface MetricStoreOptions {
  /** Tail the flat streams (metrics, topology, data_buffer) and re-read meta/catalog. */
  follow: boolean;
  /** Folder for binary columns of closed partitions (never inside the run dir). */
  cacheDir?: string;
  /** Minimum time between re-stats of a stream's files (default 2000 ms). */
  statIntervalMs?: number;
  /** Parsed partition files kept per stream (default 24, as the Python store). */
  maxBlocksPerStream?: number;
  /** Bytes of parsed gpu_util / phases / engine_series columns kept per stream (default PARTITION_CACHE_BYTES). */
  maxBytesPerStream?: number;
  /**
   * Phase sources with more rows than this are answered window by window, reading only the
   * partitions a window needs, instead of through a whole-source index (default
   * PHASE_INDEX_MAX_ROWS, lib/timeline/phases.ts).
   */
  phaseIndexMaxRows?: number;
}

export const FOLLOW_INTERVAL_MS = 2000;
export const PARTITION_CACHE_BLOCKS = 24;
/**
 * Per stream: a 4 h window of a 1024-GPU run needs ~190 MB of gpu_util columns resident at
 * once; three streams at this bound keep a server that pans a 1024-GPU day under 1.5 GB (#20).
 * Runs of up to a few hundred GPUs never reach it (64 GPUs: 3 MB per gpu_util hour).
 */
export const PARTITION_CACHE_BYTES = 320 * 2 ** 20;

function recordCodec<R, B extends { add(r: R): void }>(
  create: () => B,
  decode: (o: unknown) => R | null,
): BlockCodec<B> {
  return {
    create,
    ingest: (buf, start, end, off, block) =>
      ingestLines(buf, start, end, off, (o) => {
        const r = decode(o);
        if (r === null) return false;
        block.add(r);
        return true;
      }),
  };
}

export class MetricStore {
  readonly runDir: string;
  /** Confined access to the run directory (safe-fs.ts). */
  readonly fs: RunFs;
  /** `{runDir}/dashboard` */
  readonly dir: string;
  readonly follow: boolean;
  readonly dicts = new Dicts();

  readonly phases: PartitionedStream<PhaseBlock>;
  readonly gpuUtil: PartitionedStream<GpuBlock>;
  readonly engine: PartitionedStream<EngineBlock>;
  readonly trajectories: PartitionedStream<TimedBlock<TrajectoryEvent>>;
  readonly gpuProcesses: PartitionedStream<TimedBlock<GpuProcessSample>>;
  private readonly metricsFile: FlatStream<TimedBlock<MetricsRecord>>;
  private readonly topologyFile: FlatStream<TimedBlock<TopologySnapshot>>;
  private readonly dataBufferFile: FlatStream<TimedBlock<DataBufferSample>>;

  private metaValue: RunMeta | null;
  private catalogValue: LaneInfo[] | null;
  private smallStamp = { meta: "", catalog: "" };
  private lastSmallRefresh = -Infinity;
  private readonly statIntervalMs: number;
  private readonly memos = new Map<string, { version: string; value: Promise<unknown> }>();
  readonly cache: BinaryCache | null;
  readonly phaseIndexMaxRows: number | undefined;

  constructor(runDir: string, opts: MetricStoreOptions) {
    this.runDir = runDir;
    this.fs = new RunFs(runDir);
    this.dir = path.join(runDir, "dashboard");
    this.follow = opts.follow;
    this.phaseIndexMaxRows = opts.phaseIndexMaxRows;
    this.statIntervalMs = opts.statIntervalMs ?? FOLLOW_INTERVAL_MS;
    this.cache = opts.cacheDir ? new BinaryCache(opts.cacheDir, this.dicts) : null;
    const base: StreamOptions = {
      statIntervalMs: this.statIntervalMs,
      maxBlocks: opts.maxBlocksPerStream ?? PARTITION_CACHE_BLOCKS,
      maxBytes: opts.maxBytesPerStream ?? PARTITION_CACHE_BYTES,
      allClosed: !opts.follow,
      fsys: this.fs,
    };
    const dicts = this.dicts;
    const scanner = new GpuLineScanner(dicts);
    const engineScanner = new EngineLineScanner(dicts);
    const phaseScanner = new PhaseLineScanner(dicts);
    const cache = this.cache;
    const cached = (stream: string): StreamOptions =>
      cache
        ? {
            ...base,
            beforeRead: (f) => cache.load(stream, f as TailFile<never>),
            afterRead: (f) => cache.save(stream, f as TailFile<never>),
          }
        : base;

    this.phases = new PartitionedStream(
      this.dir,
      "phases",
      {
        create: () => new PhaseBlock(dicts.phaseStrings),
        ...scannerCodec(phaseScanner),
        whole: {
          stream: "phases",
          adopt: (block, r) => block.adoptPart(r.part, Uint32Array.from(r.strings, (text) => dicts.phaseStrings.id(text))),
        },
        seal: (b) => b.trim(),
        bytes: (b) => b.byteLength(),
      },
      cached("phases"),
    );
    this.gpuUtil = new PartitionedStream(
      this.dir,
      "gpu_util",
      {
        create: () => new GpuBlock(),
        ...scannerCodec(scanner),
        split: {
          stream: "gpu_util",
          adopt: (block, r) => block.appendPart(r.part, Uint16Array.from(r.laneKeys, ([node, gpu]) => dicts.laneId(node, gpu))),
        },
        seal: (b) => b.trim(),
        beforeAppend: (b) => b.ensureMagnitudes(),
        bytes: (b) => b.byteLength(),
      },
      cached("gpu_util"),
    );
    this.engine = new PartitionedStream(
      this.dir,
      "engine_series",
      {
        create: () => new EngineBlock(),
        ingest: (buf, s, e, off, block) => engineScanner.ingest(buf, s, e, off, block),
        seal: (b) => b.trim(),
        beforeAppend: (b) => b.ensureAll(),
        bytes: (b) => b.byteLength(),
      },
      cached("engine_series"),
    );
    this.trajectories = new PartitionedStream(
      this.dir,
      "trajectories",
      recordCodec(() => new TimedBlock<TrajectoryEvent>(), decodeTrajectory),
      base,
    );
    this.gpuProcesses = new PartitionedStream(
      this.dir,
      "gpu_processes",
      recordCodec(() => new TimedBlock<GpuProcessSample>(), decodeGpuProcess),
      base,
    );
    const flat = <R extends { ts: number }>(file: string, decode: (o: unknown) => R | null) =>
      new FlatStream(path.join(this.dir, file), this.follow, this.statIntervalMs, recordCodec(() => new TimedBlock<R>(), decode), this.fs);
    this.metricsFile = flat("metrics.jsonl", decodeMetrics);
    this.topologyFile = flat("topology.jsonl", decodeTopology);
    this.dataBufferFile = flat("data_buffer.jsonl", decodeDataBuffer);

    this.metaValue = readMeta(this.fs, META_REL);
    this.catalogValue = readCatalog(this.fs, CATALOG_REL);
    this.smallStamp = { meta: statStamp(this.fs, META_REL), catalog: statStamp(this.fs, CATALOG_REL) };
    this.lastSmallRefresh = performance.now();
  }

  // -------------------------------------------------------------------------------------
  // small files

  /** In follow mode, re-read meta.json / lane_catalog.json when they changed. */
  private refreshSmall(): void {
    if (!this.follow || performance.now() - this.lastSmallRefresh < this.statIntervalMs) return;
    this.lastSmallRefresh = performance.now();
    const m = statStamp(this.fs, META_REL);
    if (m !== this.smallStamp.meta) {
      this.smallStamp.meta = m;
      this.metaValue = readMeta(this.fs, META_REL);
    }
    const c = statStamp(this.fs, CATALOG_REL);
    if (c !== this.smallStamp.catalog) {
      this.smallStamp.catalog = c;
      this.catalogValue = readCatalog(this.fs, CATALOG_REL);
    }
  }

  meta(): RunMeta | null {
    this.refreshSmall();
    return this.metaValue;
  }

  /** Lanes from lane_catalog.json, or null when the run has none (v1 dirs). */
  catalogLanes(): LaneInfo[] | null {
    this.refreshSmall();
    return this.catalogValue;
  }

  // -------------------------------------------------------------------------------------
  // flat streams

  async metrics(): Promise<readonly MetricsRecord[]> {
    return (await this.metricsFile.block()).rows;
  }

  async topology(): Promise<readonly TopologySnapshot[]> {
    return (await this.topologyFile.block()).rows;
  }

  async dataBuffer(): Promise<readonly DataBufferSample[]> {
    return (await this.dataBufferFile.block()).rows;
  }

  /** Signature of the flat streams' sizes (for memo versions). */
  async flatSignature(): Promise<string> {
    await Promise.all([this.metricsFile.block(), this.topologyFile.block(), this.dataBufferFile.block()]);
    return `${this.metricsFile.file.offset},${this.topologyFile.file.offset},${this.dataBufferFile.file.offset}`;
  }

  // -------------------------------------------------------------------------------------
  // run-wide facts

  /**
   * `[min, max]` over every record of the flat streams and the edge stamps of every
   * partitioned stream (docs/api.md 8.2); the open sentinel −1.0 never takes part.
   */
  async timeRange(): Promise<[number, number] | null> {
    const [m, t, d] = await Promise.all([this.metricsFile.block(), this.topologyFile.block(), this.dataBufferFile.block()]);
    let lo = Math.min(m.minTs, t.minTs, d.minTs);
    let hi = Math.max(m.maxTs, t.maxTs, d.maxTs);
    const ts = (r: Record<string, unknown>) => (typeof r.ts === "number" ? [r.ts] : []);
    const phase = (r: Record<string, unknown>) => {
      const out: number[] = [];
      if (typeof r.t0 === "number") out.push(r.t0);
      if (typeof r.t1 === "number" && r.t1 !== OPEN_T1) out.push(r.t1);
      return out;
    };
    const edges = await Promise.all([
      this.phases.edgeStamps(phase),
      this.gpuUtil.edgeStamps(ts),
      this.engine.edgeStamps(ts),
      this.trajectories.edgeStamps(ts),
      this.gpuProcesses.edgeStamps(ts),
    ]);
    for (const list of edges)
      for (const v of list) {
        if (!Number.isFinite(v)) continue;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    return lo <= hi ? [lo, hi] : null;
  }

  /** Corrupt complete lines skipped so far, per stream. */
  corruptLines(): Record<StreamName, number> {
    return {
      metrics: this.metricsFile.file.corrupt,
      topology: this.topologyFile.file.corrupt,
      data_buffer: this.dataBufferFile.file.corrupt,
      phases: this.phases.corruptLines(),
      gpu_util: this.gpuUtil.corruptLines(),
      engine_series: this.engine.corruptLines(),
      trajectories: this.trajectories.corruptLines(),
      gpu_processes: this.gpuProcesses.corruptLines(),
    };
  }

  /**
   * Lane index (docs/api.md 8.3): from lane_catalog.json when present, else by scanning
   * gpu_util, phases and topology. Sorted by (node, gpu); `index` = position.
   */
  async laneIndex(): Promise<readonly LaneInfo[]> {
    const cat = this.catalogLanes();
    if (cat) return cat;
    const [gpuFiles, phaseFiles] = await Promise.all([this.gpuUtil.files(), this.phases.files()]);
    const flat = await this.flatSignature();
    const topo = this.topologyFile.file;
    // Kept across restarts (a scan reads every gpu_util and phase partition of the run).
    const version = `${filesStamp(gpuFiles)}|${filesStamp(phaseFiles)}|${flat}|${topo.size}:${topo.ino}:${topo.mtimeMs}`;
    return this.keptMemo("laneIndex.scan", version, () => this.scanLanes());
  }

  private async scanLanes(): Promise<LaneInfo[]> {
    const [gpuBlocks, phaseBlocks, topo] = await Promise.all([
      this.gpuUtil.window(null, null),
      this.phases.window(null, null),
      this.topology(),
    ]);
    const lanes = new Map<string, { node: string; gpu: number; ranks: Set<number>; addrs: Set<string>; roles: Set<string> }>();
    const ensure = (node: string, gpu: number) => {
      const k = `${node}\u0000${gpu}`;
      let l = lanes.get(k);
      if (!l) lanes.set(k, (l = { node, gpu, ranks: new Set(), addrs: new Set(), roles: new Set() }));
      return l;
    };
    for (const b of gpuBlocks) for (const id of b.lanes) ensure(this.dicts.laneNode[id]!, this.dicts.laneGpu[id]!);
    const train = this.dicts.phaseStrings.lookup("train");
    for (const b of phaseBlocks)
      for (let i = 0; i < b.n; i++) {
        const node = b.str(b.node[i]!);
        const isTrain = b.role[i] === train;
        const rank = b.rank[i]!;
        for (let k = b.gpuOff[i]!; k < b.gpuOff[i + 1]!; k++) {
          const l = ensure(node, b.gpus[k]!);
          if (isTrain) {
            l.roles.add("train");
            if (rank >= 0) l.ranks.add(rank);
          }
        }
      }
    for (const snap of topo)
      for (const e of snap.engines)
        for (const [node, gpu] of e.gpus) {
          const l = ensure(node, gpu);
          l.roles.add("rollout");
          l.addrs.add(e.addr);
        }
    return sortLanes(
      [...lanes.values()].map((l) => ({
        node: l.node,
        gpu: l.gpu,
        index: 0,
        ranks: [...l.ranks].sort((a, b) => a - b),
        engine_addrs: [...l.addrs].sort(cmpStr),
        roles: [...l.roles].sort(cmpStr),
      })),
    );
  }

  /**
   * Memoise a derived result under `key` until `version` changes. Concurrent callers
   * share one computation; a failed computation is forgotten so the next call retries.
   */
  /**
   * `memo`, and for a store whose partitions are all closed (it does not follow its run) and
   * that has a cache dir, the result is also kept there as JSON: a restarted server reads it
   * back instead of recomputing it from every partition (#20: the whole-run scans of a
   * 1024-GPU day cost seconds). `version` must stamp every file the result depends on
   * (`filesStamp`); `toJson`/`fromJson` convert the value when it is not plain JSON.
   */
  keptMemo<T>(key: string, version: string, compute: () => Promise<T>, codec?: { toJson: (v: T) => unknown; fromJson: (j: unknown) => T | null }): Promise<T> {
    const cache = this.keptCache;
    if (!cache) return this.memo(key, version, compute);
    return this.memo(key, version, async () => {
      const kept = await cache.readDerived(key, version);
      if (kept !== undefined) {
        const value = codec ? codec.fromJson(kept) : (kept as T);
        if (value !== null) return value;
      }
      const value = await compute();
      cache.writeDerived(key, version, codec ? codec.toJson(value) : value);
      return value;
    });
  }

  /**
   * Whether `keptMemo(key, version, …)` would answer without computing: the value is held
   * in memory or kept in the data dir for that version.
   */
  async isKept(key: string, version: string): Promise<boolean> {
    if (this.memos.get(key)?.version === version) return true;
    const cache = this.keptCache;
    return cache ? (await cache.readDerived(key, version)) !== undefined : false;
  }

  /**
   * The facts of each phase hour file of `files` (docs/formats.md §4.16): from the hour's
   * index where it still describes the file, else from parsing the hour. Null when the
   * legacy flat file is among them (it has no hour: its markers are matched row by row).
   */
  async phaseHourFacts(files: readonly TailFile<PhaseBlock>[]): Promise<PhaseHourFacts[] | null> {
    if (files.some((f) => f.hourStart === null)) return null;
    const facts = await Promise.all(files.map((f) => (f.block !== null && f.offset > 0 ? Promise.resolve(null) : this.indexedFacts(f))));
    const missing = files.flatMap((_, k) => (facts[k] === null ? [k] : []));
    const blocks = await this.phases.read(missing.map((k) => files[k]!));
    missing.forEach((k, m) => (facts[k] = this.blockFacts(blocks[m]!, files[k]!.hourStart!)));
    return facts as PhaseHourFacts[];
  }

  /**
   * Facts of a resident phase block, kept while it has the same rows: a followed run's plan
   * is made again whenever its newest hour grows, and the closed hours' blocks do not change.
   */
  private readonly factsOfBlock = new WeakMap<PhaseBlock, { n: number; facts: PhaseHourFacts }>();
  private blockFacts(b: PhaseBlock, hourStart: number): PhaseHourFacts {
    const hit = this.factsOfBlock.get(b);
    if (hit && hit.n === b.n) return hit.facts;
    const facts = phaseHourFacts(blockRows(b), hourStart);
    this.factsOfBlock.set(b, { n: b.n, facts });
    return facts;
  }

  /** An hour's facts from its index file, when there is one made from the file's current bytes. */
  private async indexedFacts(f: TailFile<PhaseBlock>): Promise<PhaseHourFacts | null> {
    const fsys = this.fs;
    const rel = fsys.relOf(path.join(this.dir, phaseIndexRel(f.key)));
    let text: string;
    try {
      // An index is smaller than its hour (a tuple per marker or crossing row, ~50 bytes,
      // against a line per row): a larger one is not read into memory.
      const st = await fsys.statOrNull(rel);
      if (!st || st.size > Math.max(1 << 20, f.size)) return null;
      text = (await fsys.readFile(rel)).toString("utf8");
    } catch {
      return null; // none (or one outside the run directory): the hour is parsed
    }
    let fh: Awaited<ReturnType<TailFile<PhaseBlock>["open"]>> | null = null;
    try {
      fh = await f.open();
      return await factsFromIndex(text, fileReader(fh), f);
    } catch {
      return null;
    } finally {
      await fh?.close();
    }
  }

  /** Where results are kept across restarts: nowhere for a followed run (its files still grow). */
  private get keptCache() {
    return this.follow ? null : this.cache;
  }

  /** Drop the memo of `key` if it still holds `version`. */
  forget(key: string, version: string): void {
    if (this.memos.get(key)?.version === version) this.memos.delete(key);
  }

  memo<T>(key: string, version: string, compute: () => Promise<T>): Promise<T> {
    const hit = this.memos.get(key);
    if (hit && hit.version === version) return hit.value as Promise<T>;
    const value = compute();
    const entry = { version, value: value as Promise<unknown> };
    this.memos.set(key, entry);
    value.catch(() => {
      if (this.memos.get(key) === entry) this.memos.delete(key);
    });
    if (this.memos.size > 256) {
      const first = this.memos.keys().next().value;
      if (first !== undefined && first !== key) this.memos.delete(first);
    }
    return value;
  }
}

const META_REL = `${DASHBOARD_DIR}/${META_FILE}`;
const CATALOG_REL = `${DASHBOARD_DIR}/${LANE_CATALOG_FILE}`;

function statStamp(fsys: RunFs, rel: string): string {
  try {
    const st = fsys.statOrNullSync(rel);
    return st ? `${st.size}:${st.mtimeMs}:${st.ino}` : "";
  } catch {
    return "";
  }
}

/** A small text file of the run, or undefined when absent, outside the run or unreadable. */
function readSmallText(fsys: RunFs, rel: string): string | undefined {
  try {
    if (fsys.statOrNullSync(rel) === null) return undefined;
    return fsys.readFileSync(rel).toString("utf8");
  } catch {
    return undefined;
  }
}

function readMeta(fsys: RunFs, rel: string): RunMeta | null {
  const text = readSmallText(fsys, rel);
  return text === undefined ? null : parseRunHeader(text);
}

function readCatalog(fsys: RunFs, rel: string): LaneInfo[] | null {
  const text = readSmallText(fsys, rel);
  const lanes = text === undefined ? null : readCatalogLanes(text);
  return lanes && sortLanes(lanes.map((l) => ({ ...l, index: 0 })));
}

function sortLanes(lanes: LaneInfo[]): LaneInfo[] {
  lanes.sort((a, b) => cmpStr(a.node, b.node) || a.gpu - b.gpu);
  lanes.forEach((l, i) => (l.index = i));
  return lanes;
}

export function openMetricStore(runDir: string, opts: MetricStoreOptions): MetricStore {
  return new MetricStore(runDir, opts);
}

export type { PhaseEvent };
