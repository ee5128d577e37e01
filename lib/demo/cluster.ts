/**
 * Telemetry simulator: turns a schedule (phase intervals per rank, train-side GPU
 * activity, engine requests, metrics…) into the streams a miles collector writes, in the
 * order it writes them, through RunWriter (never hand-built JSONL).
 *
 * Emission model (docs/formats.md §2.4, §6): the collector flushes every 5 s; within one
 * flush window every stream's lines keep arrival order. GPU samplers tick at 1 Hz and push
 * 5-s batches per node (so a window's gpu_util lines are node-major and, across nodes,
 * not time-sorted — as on disk); the scraper ticks every `scrapeIntervalS` with one `ts`
 * shared by every engine and metric; phase OPEN markers arrive at `t0`, closings up to
 * 2 s after `t1` (sink batching); a process sweep runs every 5 s per node.
 *
 * GPU values follow the schedule: a lane's util/mem/power come from the train-side
 * activity covering the tick, else from its engine's load (running requests), else idle.
 * Engine gauges and cumulative counters are integrated exactly from the request list.
 *
 * Stateful and append-only: `emitUntil(t)` writes everything that has "arrived" by `t`;
 * schedules may be extended with items later than the emission point (the live writer).
 */
import type { RunWriter } from "@/lib/store/writer/run-writer";
import type {
  DataBufferSample,
  EngineSample,
  GpuProcessSample,
  GpuSample,
  MetricsRecord,
  PhaseEvent,
  TopologySnapshot,
  TrajectoryEvent,
  SGLANG_SPEC_WHITELIST,
} from "@/lib/store/format";
import { clamp, round, type Rng } from "./prng";

export interface LaneRef {
  node: string;
  gpu: number;
}

export interface EngineSpec {
  addr: string;
  lanes: LaneRef[];
  /** dp-attention ranks (1 = no `dp_rank` label). */
  dpRanks: number;
  /** KV pool in tokens, per dp rank (drives sglang_token_usage). */
  kvTokens: number;
  /** Prefix-cache hit rate the engine reports around (gauge). */
  cacheHit: number;
  /** Running requests at which the GPUs saturate. */
  saturation: number;
}

export interface ClusterSpec {
  nodes: string[];
  gpusPerNode: number;
  engines: EngineSpec[];
  colocate: boolean;
  /** Device memory (MiB) of one GPU. */
  memTotalMb: number;
  scrapeIntervalS: number;
  metrics: readonly string[];
  /** Per-lane scaling of util/power (a throttled GPU), keyed "node:gpu". */
  laneScale?: ReadonlyMap<string, number>;
  /** Process names on a lane for the gpu_processes stream (null = stream off). */
  processes: ((lane: LaneRef, colocate: boolean) => { pid: number; name: string; share: number }[]) | null;
}

/** A Timer interval; `t1 === null` never closes (crashed / stalled). */
export interface SimPhase {
  name: string;
  t0: number;
  t1: number | null;
  node: string;
  gpus: number[];
  rank: number;
  role: "train" | "rollout_manager";
}

/** Train-side GPU activity on one lane (leaf phases only, non-overlapping per lane). */
export interface Activity {
  t0: number;
  t1: number;
  utilLo: number;
  utilHi: number;
  memMb: number;
}

export interface EngineRequest {
  engine: number;
  dp: number;
  /** Arrival (queue start), generation start, end (Infinity = hung). */
  q0: number;
  t0: number;
  t1: number;
  promptTokens: number;
  completionTokens: number;
  ttft: number;
  aborted: boolean;
}

export const laneKey = (l: LaneRef): string => `${l.node}:${l.gpu}`;

/** An NVML-style GPU UUID. */
export function gpuUuid(rng: Rng): string {
  const hex = (n: number) => Array.from({ length: n }, () => rng.int(0, 15).toString(16)).join("");
  return `GPU-${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`;
}

const FLUSH_WINDOW_S = 5;
const PHASE_BATCH_DELAY_S = 1.5;
const PROCESS_SWEEP_S = 5;

interface Timed<R> {
  at: number;
  rec: R;
}

/** Items sorted by arrival time, consumed from the front. */
class Queue<R> {
  private items: Timed<R>[] = [];
  private sorted = true;

  push(at: number, rec: R): void {
    const last = this.items[this.items.length - 1];
    if (last && at < last.at) this.sorted = false;
    this.items.push({ at, rec });
  }

  /** Remove and return everything with `at <= t`, in arrival order (stable). */
  take(t: number): R[] {
    if (!this.sorted) {
      this.items.sort((a, b) => a.at - b.at);
      this.sorted = true;
    }
    let n = 0;
    while (n < this.items.length && this.items[n]!.at <= t) n++;
    if (n === 0) return [];
    return this.items.splice(0, n).map((x) => x.rec);
  }
}

/** Per engine × dp rank: exact sweep of request events for gauges and counters. */
class EngineTrack {
  private events: { t: number; kind: number; r: EngineRequest }[] = [];
  private sorted = true;
  private ptr = 0;
  private last = -Infinity;
  running = 0;
  queued = 0;
  rate = 0;
  /** Σ prompt tokens and Σ rate·t0 of running requests (for KV usage). */
  private promptActive = 0;
  private rateT0 = 0;
  promptTotal = 0;
  genTotal = 0;
  requests = 0;
  aborted = 0;
  ttftSum = 0;
  ttftCount = 0;
  e2eSum = 0;
  e2eCount = 0;

  add(r: EngineRequest): void {
    const push = (t: number, kind: number) => {
      if (!Number.isFinite(t)) return;
      const lastEv = this.events[this.events.length - 1];
      if (lastEv && (t < lastEv.t || (t === lastEv.t && kind < lastEv.kind))) this.sorted = false;
      this.events.push({ t, kind, r });
    };
    // kinds ordered so that at equal times ends come before starts; a request that never
    // left the queue (t0 = Infinity) ends as a queue abort (kind 0)
    push(r.q0, 2);
    push(r.t0, 3);
    push(r.t0 + r.ttft, 4);
    push(r.t1, Number.isFinite(r.t0) ? 1 : 0);
  }

  private rateOf(r: EngineRequest): number {
    const d = r.t1 - r.t0;
    return Number.isFinite(d) && d > 0 ? r.completionTokens / d : 0;
  }

  /** Process events up to `t` (inclusive), integrating generated tokens. */
  advance(t: number): void {
    if (!this.sorted) {
      this.events.splice(0, this.ptr);
      this.events.sort((a, b) => a.t - b.t || a.kind - b.kind);
      this.ptr = 0;
      this.sorted = true;
    }
    while (this.ptr < this.events.length && this.events[this.ptr]!.t <= t) {
      const e = this.events[this.ptr++]!;
      this.integrate(e.t);
      const r = e.r;
      switch (e.kind) {
        case 0:
          this.queued--;
          this.requests++;
          if (r.aborted) this.aborted++;
          this.e2eSum += r.t1 - r.q0;
          this.e2eCount++;
          break;
        case 2:
          this.queued++;
          break;
        case 3: {
          this.queued--;
          this.running++;
          const rt = this.rateOf(r);
          this.rate += rt;
          this.rateT0 += rt * r.t0;
          this.promptActive += r.promptTokens;
          break;
        }
        case 4:
          this.promptTotal += r.promptTokens;
          this.ttftSum += r.ttft;
          this.ttftCount++;
          break;
        case 1: {
          this.running--;
          const rt = this.rateOf(r);
          this.rate -= rt;
          this.rateT0 -= rt * r.t0;
          this.promptActive -= r.promptTokens;
          this.requests++;
          if (r.aborted) this.aborted++;
          this.e2eSum += r.t1 - r.q0;
          this.e2eCount++;
          break;
        }
      }
      if (this.ptr > 4096) {
        this.events.splice(0, this.ptr);
        this.ptr = 0;
      }
    }
    this.integrate(t);
  }

  private integrate(t: number): void {
    if (t > this.last) {
      if (Number.isFinite(this.last)) this.genTotal += Math.max(0, this.rate) * (t - this.last);
      this.last = t;
    }
  }

  /** Tokens resident in the KV cache now. */
  kvUsed(t: number): number {
    return this.promptActive + Math.max(0, this.rate * t - this.rateT0);
  }
}

export interface EmitterOptions {
  /** First GPU sampler tick. */
  gpuStart: number;
  /** Emission starts here (flush windows are aligned to it). */
  origin: number;
  rng: Rng;
  /**
   * Draws the phase closings' arrival delays. Absent: they come from `rng`, which is only
   * deterministic when the whole schedule is added before anything is emitted. A generator
   * that interleaves adding and emitting (lib/demo/fleet.ts `stream`) gives its own, so its
   * bytes do not depend on when it emits.
   */
  delayRng?: Rng;
}

export class SimEmitter {
  private readonly phases = new Queue<PhaseEvent>();
  private readonly metricsQ = new Queue<MetricsRecord>();
  private readonly topologyQ = new Queue<TopologySnapshot>();
  private readonly trajQ = new Queue<TrajectoryEvent>();
  private readonly bufferQ = new Queue<DataBufferSample>();
  private readonly activity: Activity[][];
  private readonly actPtr: number[];
  private readonly lanes: LaneRef[];
  private readonly laneEngine: number[];
  private readonly tracks: EngineTrack[][];
  private readonly updates: { t0: number; t1: number }[] = [];
  private readonly awake: { t0: number; t1: number }[] = [];
  private readonly hungFrom: number[];
  private scrapeStart = Infinity;
  private nextGpu: number;
  private nextScrape = Infinity;
  private nextSweep: number;
  private windowEnd: number;
  private readonly rng: Rng;
  private readonly delayRng: Rng;
  private readonly nodeSkew: number[];
  /** Per-lane slowly varying memory jitter. */
  private readonly memJitter: number[];
  private readonly scale: number[];
  readonly laneIndex = new Map<string, number>();

  constructor(
    private readonly writer: RunWriter,
    readonly spec: ClusterSpec,
    opts: EmitterOptions,
  ) {
    this.rng = opts.rng;
    this.delayRng = opts.delayRng ?? opts.rng;
    this.lanes = [];
    for (const node of spec.nodes) for (let g = 0; g < spec.gpusPerNode; g++) this.lanes.push({ node, gpu: g });
    this.lanes.forEach((l, i) => this.laneIndex.set(laneKey(l), i));
    this.activity = this.lanes.map(() => []);
    this.actPtr = this.lanes.map(() => 0);
    this.laneEngine = this.lanes.map(() => -1);
    spec.engines.forEach((e, ei) => {
      for (const l of e.lanes) {
        const i = this.laneIndex.get(laneKey(l));
        if (i !== undefined) this.laneEngine[i] = ei;
      }
    });
    this.tracks = spec.engines.map((e) => Array.from({ length: e.dpRanks }, () => new EngineTrack()));
    this.hungFrom = spec.engines.map(() => Infinity);
    this.nextGpu = opts.gpuStart;
    this.nextSweep = opts.gpuStart + 4.7;
    this.windowEnd = opts.origin + FLUSH_WINDOW_S;
    this.nodeSkew = spec.nodes.map(() => round(this.rng.float(0.001, 0.08), 3));
    this.memJitter = this.lanes.map(() => this.rng.int(-900, 900));
    this.scale = this.lanes.map((l) => spec.laneScale?.get(laneKey(l)) ?? 1);
  }

  get lanesList(): readonly LaneRef[] {
    return this.lanes;
  }

  // ---- schedule input ----------------------------------------------------------------

  addPhase(p: SimPhase): void {
    const base = { name: p.name, t0: p.t0, node: p.node, gpus: p.gpus, rank: p.rank, role: p.role };
    this.phases.push(p.t0, { ...base, t1: -1.0 });
    if (p.t1 !== null) this.phases.push(p.t1 + this.delayRng.float(0, PHASE_BATCH_DELAY_S), { ...base, t1: p.t1 });
    if (p.role === "rollout_manager" && (p.name === "rollout" || p.name === "eval_rollout")) {
      this.awake.push({ t0: p.t0, t1: p.t1 ?? Infinity });
    }
  }

  addActivity(lane: LaneRef, a: Activity): void {
    const i = this.laneIndex.get(laneKey(lane));
    if (i === undefined) throw new Error(`unknown lane ${laneKey(lane)}`);
    const list = this.activity[i]!;
    const last = list[list.length - 1];
    list.push(a);
    if (last && a.t0 < last.t0) {
      list.sort((x, y) => x.t0 - y.t0);
      this.actPtr[i] = 0;
    }
  }

  addRequest(r: EngineRequest): void {
    this.tracks[r.engine]![r.dp]!.add(r);
  }

  /** Weight sync into the engines (their GPUs show NCCL traffic). */
  addEngineUpdate(t0: number, t1: number): void {
    this.updates.push({ t0, t1 });
  }

  /** From `t` on, engine `e` is wedged: its kernels spin (100 % util), nothing completes. */
  hangEngine(e: number, t: number): void {
    this.hungFrom[e] = t;
  }

  /** Continue cumulative counters from values already on disk (a resumed writer). */
  seedCounters(engine: number, dp: number, values: ReadonlyMap<string, number>): void {
    const tr = this.tracks[engine]?.[dp];
    if (!tr) return;
    for (const [metric, v] of values) {
      switch (metric) {
        case "sglang_prompt_tokens_total":
          tr.promptTotal = v;
          break;
        case "sglang_generation_tokens_total":
          tr.genTotal = v;
          break;
        case "sglang_num_requests_total":
          tr.requests = v;
          break;
        case "sglang_num_aborted_requests_total":
          tr.aborted = v;
          break;
        case "sglang_time_to_first_token_seconds_sum":
          tr.ttftSum = v;
          break;
        case "sglang_time_to_first_token_seconds_count":
          tr.ttftCount = v;
          break;
        case "sglang_e2e_request_latency_seconds_sum":
          tr.e2eSum = v;
          break;
        case "sglang_e2e_request_latency_seconds_count":
          tr.e2eCount = v;
          break;
      }
    }
  }

  /**
   * Stop at `t`: emit a last (partial) window up to `t`, closing every phase that is open
   * at `t` there (its closing record gets `t1 = t`) and dropping what starts later, so a
   * clean shutdown leaves no dangling OPEN marker.
   */
  finish(t: number): number {
    this.emitUntil(t);
    const pending = this.phases.take(Infinity);
    for (const p of pending) {
      if (p.t0 > t) continue;
      const rec = p.t1 === -1.0 || p.t1 <= t ? p : { ...p, t1: Math.max(p.t0, t) };
      this.phases.push(Math.min(t, p.t1 === -1.0 ? p.t0 : rec.t1), rec);
    }
    const n = this.emitWindow(t);
    this.windowEnd = Infinity;
    return n;
  }

  addMetrics(r: MetricsRecord): void {
    this.metricsQ.push(r.ts, r);
  }

  addTrajectory(e: TrajectoryEvent, arrival = e.ts): void {
    this.trajQ.push(arrival, e);
  }

  addTopology(s: TopologySnapshot): void {
    this.topologyQ.push(s.ts, s);
    if (s.ts < this.scrapeStart) {
      this.scrapeStart = s.ts;
      this.nextScrape = Math.ceil(s.ts / this.spec.scrapeIntervalS) * this.spec.scrapeIntervalS;
    }
  }

  addDataBuffer(r: DataBufferSample): void {
    this.bufferQ.push(r.ts, r);
  }

  // ---- emission ----------------------------------------------------------------------

  /** Emit every complete 5-s collector window ending at or before `t`. Returns records added. */
  emitUntil(t: number): number {
    let n = 0;
    while (this.windowEnd <= t) {
      n += this.emitWindow(this.windowEnd);
      this.windowEnd += FLUSH_WINDOW_S;
    }
    return n;
  }

  private emitWindow(w: number): number {
    const gpuByNode: GpuSample[][] = this.spec.nodes.map(() => []);
    const engine: EngineSample[] = [];
    const procs: GpuProcessSample[] = [];
    // Ticks of this window in time order (the samplers and the scraper interleave).
    for (;;) {
      const next = Math.min(this.nextGpu, this.nextScrape, this.nextSweep);
      if (next > w) break;
      if (next === this.nextGpu) {
        this.gpuTick(this.nextGpu, gpuByNode);
        this.nextGpu += 1;
      } else if (next === this.nextScrape) {
        this.scrapeTick(this.nextScrape, engine);
        this.nextScrape += this.spec.scrapeIntervalS;
      } else {
        this.sweepTick(this.nextSweep, procs);
        this.nextSweep += PROCESS_SWEEP_S;
      }
    }
    const w0 = this.writer;
    let n = 0;
    const add = <R>(fn: (rs: R[]) => void, rs: R[]) => {
      if (rs.length) {
        fn(rs);
        n += rs.length;
      }
    };
    add((rs: MetricsRecord[]) => w0.add("metrics", rs), this.metricsQ.take(w));
    add((rs: PhaseEvent[]) => w0.add("phases", rs), this.phases.take(w));
    add((rs: TopologySnapshot[]) => w0.add("topology", rs), this.topologyQ.take(w));
    add((rs: GpuSample[]) => w0.add("gpu_util", rs), gpuByNode.flat());
    add((rs: EngineSample[]) => w0.add("engine_series", rs), engine);
    add((rs: TrajectoryEvent[]) => w0.add("trajectories", rs), this.trajQ.take(w));
    if (this.spec.processes) add((rs: GpuProcessSample[]) => w0.add("gpu_processes", rs), procs);
    add((rs: DataBufferSample[]) => w0.add("data_buffer", rs), this.bufferQ.take(w));
    return n;
  }

  private inWindows(list: readonly { t0: number; t1: number }[], t: number): boolean {
    for (let i = list.length - 1; i >= 0; i--) {
      const x = list[i]!;
      if (t >= x.t0 && t < x.t1) return true;
    }
    return false;
  }

  private trainActivity(i: number, t: number): Activity | null {
    const acts = this.activity[i]!;
    let p = this.actPtr[i]!;
    if (p > 0 && acts[p - 1] && acts[p - 1]!.t0 > t) p = 0; // activities added out of order
    while (p < acts.length && acts[p]!.t1 <= t) p++;
    if (p > 1024) {
      // Ticks come in time order: what ended before `t` is never covered again, so a long
      // run's schedule does not stay resident behind the emission point.
      acts.splice(0, p);
      p = 0;
    }
    this.actPtr[i] = p;
    const a = acts[p];
    return a && a.t0 <= t ? a : null;
  }

  private engineRunning(e: number, t: number): number {
    let n = 0;
    for (const tr of this.tracks[e]!) {
      tr.advance(t);
      n += tr.running;
    }
    return n;
  }

  private gpuTick(tick: number, out: GpuSample[][]): void {
    const rng = this.rng;
    const total = this.spec.memTotalMb;
    const engineState = this.spec.engines.map((e, ei) => ({
      running: this.engineRunning(ei, tick),
      hung: tick >= this.hungFrom[ei]!,
      sat: e.saturation,
    }));
    const updating = this.inWindows(this.updates, tick);
    const awake = this.inWindows(this.awake, tick);
    this.spec.nodes.forEach((node, ni) => {
      const ts = round(tick + this.nodeSkew[ni]! + rng.float(0, 0.004), 3);
      for (let g = 0; g < this.spec.gpusPerNode; g++) {
        const i = ni * this.spec.gpusPerNode + g;
        const act = this.trainActivity(i, tick);
        const ei = this.laneEngine[i]!;
        let util: number;
        let mem: number;
        if (act) {
          util = rng.float(act.utilLo, act.utilHi);
          mem = act.memMb;
        } else if (ei >= 0) {
          const st = engineState[ei]!;
          const engineMem = Math.round(total * (this.spec.colocate ? 0.72 : 0.86));
          if (st.hung) util = 100;
          else if (updating) util = rng.float(22, 48);
          else if (st.running > 0) util = 30 + 66 * Math.min(1, st.running / st.sat) + rng.normal(0, 3);
          else util = rng.float(0, 1.5);
          mem = this.spec.colocate && !awake && !st.hung && !updating ? rng.int(3800, 5200) : engineMem;
        } else {
          util = rng.float(0, 1);
          mem = this.spec.colocate ? rng.int(3800, 5200) : Math.round(total * 0.52);
        }
        const s = this.scale[i]!;
        util = Math.round(clamp(util * (util >= 99.5 ? 1 : s), 0, 100));
        mem = clamp(mem + this.memJitter[i]!, 0, total);
        const power = Math.round(68 + util * 6.2 * (0.85 + 0.15 * s) + rng.normal(0, 6));
        out[ni]!.push({ ts, node, gpu: g, util, mem_mb: mem, power_w: Math.max(40, power) });
      }
    });
  }

  private scrapeTick(tick: number, out: EngineSample[]): void {
    const ts = round(tick + this.rng.float(0.001, 0.02), 3);
    this.spec.engines.forEach((e, ei) => {
      const hung = tick >= this.hungFrom[ei]!;
      const tracks = this.tracks[ei]!;
      for (const tr of tracks) tr.advance(tick);
      for (const metric of this.spec.metrics) {
        tracks.forEach((tr, dp) => {
          const labels: Record<string, string> = e.dpRanks > 1 ? { dp_rank: String(dp) } : {};
          const value = this.metricValue(metric, e, tr, tick, hung);
          if (value !== null) out.push({ ts, addr: e.addr, metric, labels, value });
        });
      }
    });
  }

  private metricValue(metric: string, e: EngineSpec, tr: EngineTrack, t: number, hung: boolean): number | null {
    switch (metric) {
      case "sglang_num_running_reqs":
        return tr.running;
      case "sglang_num_queue_reqs":
        return Math.max(0, tr.queued);
      case "sglang_gen_throughput":
        return hung ? 0 : round(Math.max(0, tr.rate) * (1 + this.rng.normal(0, 0.03)), 2);
      case "sglang_token_usage":
        return round(clamp(0.01 + tr.kvUsed(t) / e.kvTokens, 0, 0.99), 4);
      case "sglang_cache_hit_rate":
        return tr.running > 0 ? round(clamp(e.cacheHit + this.rng.normal(0, 0.03), 0, 1), 4) : round(e.cacheHit, 4);
      case "sglang_prompt_tokens_total":
        return tr.promptTotal;
      case "sglang_generation_tokens_total":
        return Math.floor(tr.genTotal);
      case "sglang_num_requests_total":
        return tr.requests;
      case "sglang_num_aborted_requests_total":
        return tr.aborted;
      case "sglang_time_to_first_token_seconds_sum":
        return round(tr.ttftSum, 6);
      case "sglang_time_to_first_token_seconds_count":
        return tr.ttftCount;
      case "sglang_e2e_request_latency_seconds_sum":
        return round(tr.e2eSum, 6);
      case "sglang_e2e_request_latency_seconds_count":
        return tr.e2eCount;
      default:
        return null;
    }
  }

  private sweepTick(tick: number, out: GpuProcessSample[]): void {
    const procs = this.spec.processes;
    if (!procs) return;
    this.spec.nodes.forEach((node, ni) => {
      const ts = round(tick + this.nodeSkew[ni]! + 0.01, 3);
      for (let g = 0; g < this.spec.gpusPerNode; g++) {
        const i = ni * this.spec.gpusPerNode + g;
        const lane = this.lanes[i]!;
        const act = this.trainActivity(i, tick);
        const ei = this.laneEngine[i]!;
        const total = this.spec.memTotalMb;
        for (const p of procs(lane, this.spec.colocate)) {
          const isEngine = p.name.startsWith("sglang");
          let mem: number;
          if (isEngine) mem = this.spec.colocate && act ? 0 : Math.round(total * (this.spec.colocate ? 0.7 : 0.85) * p.share);
          else mem = act ? Math.round(act.memMb * p.share) : this.spec.colocate ? 1536 : Math.round(total * 0.5 * p.share);
          if (ei < 0 && isEngine) continue;
          if (mem <= 0) continue;
          out.push({ ts, node, gpu: g, pid: p.pid, name: p.name, mem_mb: mem });
        }
      }
    });
  }
}

/**
 * The engine series the demo runs record: the gauges, counters and histogram pairs the
 * views chart (a subset of the format's whitelist, SGLANG_SPEC_WHITELIST, to keep demo runs
 * small; the type holds every name to that one list).
 */
export const DEMO_ENGINE_METRICS: readonly string[] = [
  "sglang_num_running_reqs",
  "sglang_num_queue_reqs",
  "sglang_gen_throughput",
  "sglang_token_usage",
  "sglang_cache_hit_rate",
  "sglang_prompt_tokens_total",
  "sglang_generation_tokens_total",
  "sglang_num_requests_total",
  "sglang_num_aborted_requests_total",
  "sglang_time_to_first_token_seconds_sum",
  "sglang_time_to_first_token_seconds_count",
  "sglang_e2e_request_latency_seconds_sum",
  "sglang_e2e_request_latency_seconds_count",
] satisfies readonly (typeof SGLANG_SPEC_WHITELIST)[number][];
