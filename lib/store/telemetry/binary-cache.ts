/**
 * Binary columns of closed partitions, so a second process start reads bytes, not JSON.
 *
 * Policy: only a partition older than the stream's newest hour, parsed completely
 * (consumed offset == file size), is written. An entry is valid only for the exact source
 * size and mtime it was built from (plus the format version); anything else — missing,
 * stale, truncated, unreadable — is ignored and the JSON is parsed as usual. Writes go to
 * a temp file renamed into place; failures are logged once and never fail a query. The
 * cache lives under the data dir given by the caller, never inside the run directory.
 *
 * File layout: u32 LE header length H, H bytes of JSON header, padding to 8, then the
 * typed sections listed in the header, each padded to 8 bytes. engine_series entries hold,
 * per metric, the raw columns and the folded (engine-level) parts — what whole-run
 * questions need — and are read section by section (a query touches a few metrics).
 */
import fs from "node:fs";
import path from "node:path";
import { buildUtilPeaks, type Dicts, EngineBlock, EngineMetricColumns, GpuBlock, type GpuMagnitudeSource, PhaseBlock } from "@/lib/store/telemetry/blocks";
import type { Interner, TypedArray } from "@/lib/store/telemetry/columns";
import { blockPartsSync } from "@/lib/store/telemetry/engine-parts";
import { parseInFlight, type TailFile } from "@/lib/store/telemetry/tail-file";

const VERSION = 5;
let tmpSeq = 0;

interface Header {
  v: number;
  size: number;
  mtimeMs: number;
  offset: number;
  corrupt: number;
  /** [kind, length] of each section in order */
  sections: [string, number][];
  meta: Record<string, unknown>;
}

type Ctor = { new (buf: ArrayBuffer, off: number, len: number): TypedArray; BYTES_PER_ELEMENT: number };
const CTORS: Record<string, Ctor> = {
  f64: Float64Array,
  u32: Uint32Array,
  u16: Uint16Array,
  u8: Uint8Array,
  i32: Int32Array,
  i16: Int16Array,
};
const kindOf = (a: TypedArray): string =>
  a instanceof Float64Array ? "f64" : a instanceof Uint32Array ? "u32" : a instanceof Uint16Array ? "u16" : a instanceof Uint8Array ? "u8" : a instanceof Int32Array ? "i32" : "i16";

const pad8 = (n: number) => (n + 7) & ~7;

function encode(h: Omit<Header, "sections">, arrays: TypedArray[]): Buffer {
  const header: Header = { ...h, sections: arrays.map((a) => [kindOf(a), a.length]) };
  const json = Buffer.from(JSON.stringify(header));
  let size = pad8(4 + json.length);
  for (const a of arrays) size += pad8(a.byteLength);
  const out = Buffer.alloc(size);
  out.writeUInt32LE(json.length, 0);
  json.copy(out, 4);
  let at = pad8(4 + json.length);
  for (const a of arrays) {
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), at);
    at += pad8(a.byteLength);
  }
  return out;
}

function decode(buf: Buffer): { header: Header; arrays: TypedArray[] } | null {
  if (buf.length < 4) return null;
  const hl = buf.readUInt32LE(0);
  if (4 + hl > buf.length) return null;
  const header = JSON.parse(buf.toString("utf8", 4, 4 + hl)) as Header;
  if (header.v !== VERSION) return null;
  // Sections are 8-byte aligned relative to the file start; copy only when the Buffer
  // itself is not (small files come from a shared pool).
  const ab = (buf.byteOffset % 8 === 0 && buf.buffer.byteLength === buf.byteOffset + buf.length
    ? buf.buffer
    : buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length)) as ArrayBuffer;
  const base = ab === buf.buffer ? buf.byteOffset : 0;
  let at = pad8(4 + hl);
  const arrays: TypedArray[] = [];
  for (const [kind, len] of header.sections) {
    const C = CTORS[kind];
    if (!C || base + at + len * C.BYTES_PER_ELEMENT > ab.byteLength) return null;
    arrays.push(new C(ab, base + at, len));
    at += pad8(len * C.BYTES_PER_ELEMENT);
  }
  return { header, arrays };
}

/** Header and absolute byte offset of every section, read from an open cache file. */
async function readHead(fh: fs.promises.FileHandle): Promise<{ header: Header; offsets: number[] } | null> {
  let head = Buffer.allocUnsafe(65536);
  let { bytesRead } = await fh.read(head, 0, head.length, 0);
  if (bytesRead < 4) return null;
  const hl = head.readUInt32LE(0);
  if (4 + hl > bytesRead) {
    if (bytesRead < head.length) return null;
    head = Buffer.allocUnsafe(4 + hl);
    ({ bytesRead } = await fh.read(head, 0, 4 + hl, 0));
    if (bytesRead < 4 + hl) return null;
  }
  const header = JSON.parse(head.toString("utf8", 4, 4 + hl)) as Header;
  if (header.v !== VERSION) return null;
  const offsets: number[] = [];
  let at = pad8(4 + hl);
  for (const [kind, len] of header.sections) {
    const C = CTORS[kind];
    if (!C) return null;
    offsets.push(at);
    at += pad8(len * C.BYTES_PER_ELEMENT);
  }
  offsets.push(at);
  return { header, offsets };
}

/** Sections [from, to) of an open cache file as typed arrays (one read, 8-byte aligned). */
async function readSections(fh: fs.promises.FileHandle, header: Header, offsets: number[], from: number, to: number): Promise<TypedArray[] | null> {
  const start = offsets[from]!;
  const len = offsets[to]! - start;
  const bytes = new Uint8Array(new ArrayBuffer(len));
  let got = 0;
  while (got < len) {
    const { bytesRead } = await fh.read(bytes, got, len - got, start + got);
    if (bytesRead <= 0) return null;
    got += bytesRead;
  }
  const out: TypedArray[] = [];
  for (let i = from; i < to; i++) {
    const [kind, n] = header.sections[i]!;
    out.push(new CTORS[kind]!(bytes.buffer, offsets[i]! - start, n));
  }
  return out;
}

const ENGINE_SECTIONS = 7;
/** gpu_util entries: with util peaks (`gpuTo`), and as written before them. */
const GPU_SECTIONS = 9;
const GPU_SECTIONS_NO_PEAKS = 6;

interface EngineMetricMeta {
  name: string;
  sorted: boolean;
  minTs: number | null;
  maxTs: number | null;
  rows: number;
  /** folded parts: [addr, labels, canonical key] */
  fold: [string, Record<string, string>, string][] | null;
}

/**
 * Writes are deferred (off the query path) and batched; whatever is still pending when
 * the process exits — including `process.exit()` right after a query — is written
 * synchronously from the `exit` hook, so a short-lived process still leaves its cache.
 */
interface Job {
  target: string;
  encode: () => Buffer | null;
  /** temp file of a write in flight */
  tmp: string | null;
}
const pending = new Map<string, Job>();
let flushTimer: NodeJS.Timeout | null = null;
let exitHooked = false;

function schedule(job: Job): void {
  pending.set(job.target, job);
  if (!exitHooked) {
    exitHooked = true;
    process.on("exit", flushSync);
  }
  if (!flushTimer) {
    flushTimer = setTimeout(() => {
      flushTimer = null;
      void flushAsync();
    }, 250);
    flushTimer.unref();
  }
}

/**
 * How long a write waits for parses in flight to end: a query that parses many partitions
 * (a 24-hour fleet view without the cache) would otherwise encode the first ones' columns
 * on the event loop between its own reads, ~1 s of a 1024-GPU day (#20).
 */
const MAX_DEFER_MS = 10_000;

/** Queries being answered now (`whileAnswering`): writes wait for them too. */
let answering = 0;

/**
 * Run `task` (a query's answer) with the cache writes held back until it settles (up to
 * MAX_DEFER_MS): a query that parsed partitions would otherwise encode them between the end
 * of its parse and its answer, ~260 ms of a 1024-GPU heatmap's first request (#20).
 */
export async function whileAnswering<T>(task: () => Promise<T>): Promise<T> {
  answering++;
  try {
    return await task();
  } finally {
    answering--;
  }
}

async function flushAsync(): Promise<void> {
  const since = performance.now();
  for (const job of [...pending.values()]) {
    while ((parseInFlight() || answering > 0) && performance.now() - since < MAX_DEFER_MS) await new Promise((r) => setTimeout(r, 20));
    if (job.tmp || pending.get(job.target) !== job) continue;
    const bytes = job.encode();
    if (!bytes) {
      pending.delete(job.target);
      continue;
    }
    const tmp = (job.tmp = `${job.target}.${process.pid}.${++tmpSeq}.tmp`);
    try {
      await fs.promises.mkdir(path.dirname(job.target), { recursive: true });
      await fs.promises.writeFile(tmp, bytes);
      await fs.promises.rename(tmp, job.target);
    } catch {
      await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
    }
    if (pending.get(job.target) === job) pending.delete(job.target);
    // yield between files: other work (queries) goes first
    await new Promise((r) => setImmediate(r));
  }
}

function flushSync(): void {
  for (const job of pending.values()) {
    try {
      if (job.tmp) fs.rmSync(job.tmp, { force: true });
      const bytes = job.encode();
      if (!bytes) continue;
      const tmp = `${job.target}.${process.pid}.${++tmpSeq}.tmp`;
      fs.mkdirSync(path.dirname(job.target), { recursive: true });
      fs.writeFileSync(tmp, bytes);
      fs.renameSync(tmp, job.target);
    } catch {
      // best effort: the cache is an optimisation
    }
  }
  pending.clear();
}

/** Wait until every scheduled cache write is on disk (tests, tools). */
export async function flushBinaryCache(): Promise<void> {
  if (flushTimer) {
    clearTimeout(flushTimer);
    flushTimer = null;
  }
  while (pending.size > 0) {
    const before = pending.size;
    await flushAsync();
    if (pending.size >= before) await new Promise((r) => setTimeout(r, 5));
  }
}

/** Kept JSON carries NaN and ±Infinity as `{"$num": "NaN"}` (plain JSON would turn them into null). */
function keepNumbers(_key: string, x: unknown): unknown {
  return typeof x === "number" && !Number.isFinite(x) ? { $num: String(x) } : x;
}

function reviveNumbers(_key: string, x: unknown): unknown {
  if (typeof x === "object" && x !== null && !Array.isArray(x)) {
    const o = x as Record<string, unknown>;
    if (typeof o.$num === "string" && Object.keys(o).length === 1) return Number(o.$num);
  }
  return x;
}

export class BinaryCache {
  private warned = false;
  constructor(
    readonly dir: string,
    private readonly dicts: Dicts,
  ) {}

  private file(stream: string, key: string): string {
    return path.join(this.dir, stream, `${key}.bin`);
  }

  /**
   * A JSON result derived from closed partitions (`<dir>/derived/<name>.json`), when one was
   * kept for exactly `version` (the caller's stamp of the files it read); else undefined.
   * Unreadable or foreign entries count as absent.
   */
  async readDerived(name: string, version: string): Promise<unknown> {
    try {
      const kept = JSON.parse(await fs.promises.readFile(this.derivedFile(name), "utf8"), reviveNumbers) as { v?: unknown; version?: unknown; value?: unknown };
      return kept.v === VERSION && kept.version === version ? kept.value : undefined;
    } catch {
      return undefined;
    }
  }

  /** Keep `value` (JSON) for `version`; written in the background like the columns. */
  writeDerived(name: string, version: string, value: unknown): void {
    schedule({ target: this.derivedFile(name), tmp: null, encode: () => Buffer.from(JSON.stringify({ v: VERSION, version, value }, keepNumbers)) });
  }

  private derivedFile(name: string): string {
    return path.join(this.dir, "derived", `${name.replace(/[^A-Za-z0-9_.-]/g, "_")}.json`);
  }

  /** Adopt a cached block for `file` when a valid entry exists. */
  async load(stream: string, file: TailFile<never>): Promise<void> {
    if (stream === "engine_series") return this.loadEngine(file);
    if (stream === "gpu_util") return this.loadGpu(file);
    let buf: Buffer;
    try {
      buf = await fs.promises.readFile(this.file(stream, file.key));
    } catch {
      return;
    }
    try {
      const d = decode(buf);
      if (!d) return;
      const { header, arrays } = d;
      if (header.size !== file.size || header.mtimeMs !== file.mtimeMs || header.offset !== file.size) return;
      const block = phasesFrom(this.dicts.phaseStrings, header, arrays);
      if (block) await file.withLock(async () => (file.block ? undefined : file.adopt(block as never, header.offset, header.corrupt)));
    } catch (err) {
      this.warn(err);
    }
  }

  /**
   * engine_series: only the header is read here; raw columns and folded parts of a metric
   * are read when a query first needs them (usually a few of the ~25 metrics).
   */
  private async loadEngine(file: TailFile<never>): Promise<void> {
    const target = this.file("engine_series", file.key);
    const expect = { size: file.size, mtimeMs: file.mtimeMs };
    let head: Awaited<ReturnType<typeof readHead>> = null;
    try {
      const fh = await fs.promises.open(target, "r");
      try {
        head = await readHead(fh);
      } finally {
        await fh.close();
      }
    } catch {
      return;
    }
    try {
      if (!head) return;
      const { header } = head;
      if (header.size !== expect.size || header.mtimeMs !== expect.mtimeMs || header.offset !== expect.size) return;
      const metrics = header.meta.metrics as EngineMetricMeta[];
      const block = new EngineBlock();
      const info = new Map<number, { rows: number; minTs: number; maxTs: number }>();
      for (const m of metrics) {
        if (m.rows <= 0) continue;
        info.set(this.dicts.metrics.id(m.name), { rows: m.rows, minTs: m.minTs ?? Infinity, maxTs: m.maxTs ?? -Infinity });
      }
      block.minTs = (header.meta.minTs as number | null) ?? Infinity;
      block.maxTs = (header.meta.maxTs as number | null) ?? -Infinity;
      // Every section read re-reads the header through the same handle, so a cache file
      // replaced in between is still read consistently (and checked against the source).
      const withMetric = async <T>(metricId: number, what: "raw" | "fold", fn: (m: EngineMetricMeta, series: number[], a: TypedArray[]) => T): Promise<T | null> => {
        const name = this.dicts.metrics.values[metricId]!;
        try {
          const fh = await fs.promises.open(target, "r");
          try {
            const h = await readHead(fh);
            if (!h || h.header.size !== expect.size || h.header.mtimeMs !== expect.mtimeMs || h.header.offset !== expect.size) return null;
            const ms = h.header.meta.metrics as EngineMetricMeta[];
            const i = ms.findIndex((m) => m.name === name);
            if (i < 0) return null;
            const base = i * ENGINE_SECTIONS + (what === "raw" ? 0 : 4);
            const a = await readSections(fh, h.header, h.offsets, base, base + (what === "raw" ? 4 : 3));
            if (!a) return null;
            const series =
              what === "raw" ? (h.header.meta.series as [string, Record<string, string | null>][]).map(([addr, labels]) => this.dicts.seriesId(addr, labels)) : [];
            return fn(ms[i]!, series, a);
          } finally {
            await fh.close();
          }
        } catch (err) {
          this.warn(err);
          return null;
        }
      };
      block.source = {
        info,
        loadRaw: (metricId) =>
          withMetric(metricId, "raw", (m, series, a) => {
            const [gTs, gStart, s, value] = a as [Float64Array, Uint32Array, Uint16Array, Float64Array];
            let col = s;
            if (!series.every((id, k) => id === k)) {
              col = new Uint16Array(s.length);
              for (let k = 0; k < s.length; k++) col[k] = series[s[k]!]!;
            }
            return EngineMetricColumns.restore(gTs, gStart, col, value, m.sorted, m.minTs ?? Infinity, m.maxTs ?? -Infinity);
          }),
        loadFolded: (metricId) =>
          withMetric(metricId, "fold", (m, _series, a) => {
            if (!m.fold) return null;
            const [off, ts, value] = a as [Uint32Array, Float64Array, Float64Array];
            return m.fold.map(([addr, labels, key], k) => ({
              addr,
              labels,
              key,
              ts: ts.subarray(off[k], off[k + 1]),
              value: value.subarray(off[k], off[k + 1]),
            }));
          }).then((r) => r ?? null),
        reparse: () => file.parseFresh(),
      };
      await file.withLock(async () => (file.block ? undefined : file.adopt(block as never, header.offset, header.corrupt)));
    } catch (err) {
      this.warn(err);
    }
  }

  /** Schedule writing `file`'s block (off the query path; see `schedule`). */
  save(stream: string, file: TailFile<never>): void {
    const block = file.block as unknown;
    if (!block || file.offset !== file.size) return;
    const base = { v: VERSION, size: file.size, mtimeMs: file.mtimeMs, offset: file.offset, corrupt: file.corrupt };
    schedule({
      target: this.file(stream, file.key),
      tmp: null,
      encode: () => {
        try {
          if (block instanceof GpuBlock) return this.gpuTo(base, block);
          if (block instanceof EngineBlock) return this.engineTo(base, block);
          if (block instanceof PhaseBlock) return phasesTo(base, block);
        } catch (err) {
          this.warn(err);
        }
        return null;
      },
    });
  }

  private warn(err: unknown): void {
    if (this.warned) return;
    this.warned = true;
    console.warn(`[rlboard] telemetry binary cache under ${this.dir} unusable, parsing JSON instead:`, err);
  }

  // gpu_util: lane ids are store-local, so the entry carries its (node, gpu) list (the
  // block's lanes in ascending id order; local id = position). Sections: ticks, group
  // starts, lanes, util, the util peaks (`UtilPeaks`: chunk low and high ticks, peaks by
  // local lane id; `meta.peaks` has their chunking), mem, power. An entry written before the
  // peaks has the other six and loads as well (its block builds peaks when asked again).
  private gpuTo(base: Omit<Header, "sections" | "meta">, b: GpuBlock): Buffer {
    const lanes = b.lane.toArray();
    const used = [...b.lanes].sort((x, y) => x - y);
    const local = new Uint16Array(used.reduce((m, x) => Math.max(m, x), 0) + 1);
    used.forEach((id, i) => (local[id] = i));
    const mapped = new Uint16Array(lanes.length);
    for (let i = 0; i < lanes.length; i++) mapped[i] = local[lanes[i]!]!;
    const gTs = b.gTs.toArray();
    const gStart = b.gStart.toArray();
    const util = b.util.toArray();
    // The first whole-fleet view of a restarted server reads these instead of building them.
    const peaks = buildUtilPeaks(gTs, gStart, mapped, util, b.rows, used.length);
    const meta = {
      sorted: b.sorted,
      minTs: b.minTs,
      maxTs: b.maxTs,
      lanes: used.map((id) => [this.dicts.laneNode[id], this.dicts.laneGpu[id]]),
      peaks: { groupsPerChunk: peaks.groupsPerChunk },
    };
    return encode({ ...base, meta }, [gTs, gStart, mapped, util, peaks.lo, peaks.hi, peaks.peak, b.mem.toArray(), b.power.toArray()]);
  }

  /**
   * gpu_util: ticks, lanes, util and util peaks are read now; mem and power (the last two
   * sections, most of the bytes) when a query first asks for them
   * (`GpuBlock.ensureMagnitudes`), through a fresh read of the header that must still
   * describe the same source, else by parsing the partition again.
   */
  private async loadGpu(file: TailFile<never>): Promise<void> {
    const target = this.file("gpu_util", file.key);
    const expect = { size: file.size, mtimeMs: file.mtimeMs };
    const valid = (h: Header) => h.size === expect.size && h.mtimeMs === expect.mtimeMs && h.offset === expect.size;
    /** Sections [from, to) of the entry, counted from its end when negative (mem and power are last). */
    const sections = async (from: number, to: number) => {
      const fh = await fs.promises.open(target, "r");
      try {
        const h = await readHead(fh);
        const n = h?.header.sections.length;
        if (!h || !valid(h.header) || (n !== GPU_SECTIONS && n !== GPU_SECTIONS_NO_PEAKS)) return null;
        const a = await readSections(fh, h.header, h.offsets, from < 0 ? n + from : from, to <= 0 ? n + to : to);
        return a ? { header: h.header, a } : null;
      } finally {
        await fh.close();
      }
    };
    let head: Awaited<ReturnType<typeof sections>>;
    try {
      head = await sections(0, -2);
    } catch {
      return;
    }
    try {
      if (!head) return;
      const block = this.gpuFrom(head.header, head.a, {
        load: async () => {
          try {
            const r = await sections(-2, 0);
            return r ? { mem: r.a[0] as Int32Array, power: r.a[1] as Int16Array } : null;
          } catch (err) {
            // an entry removed since (a cleaned cache dir) is no surprise: parse the JSON
            if ((err as NodeJS.ErrnoException).code !== "ENOENT") this.warn(err);
            return null;
          }
        },
        reparse: () => file.parseFresh(),
      });
      if (block) await file.withLock(async () => (file.block ? undefined : file.adopt(block as never, head.header.offset, head.header.corrupt)));
    } catch (err) {
      this.warn(err);
    }
  }

  private gpuFrom(h: Header, a: TypedArray[], magnitudes: GpuMagnitudeSource): GpuBlock | null {
    const [gTs, gStart, lane, util, lo, hi, peak] = a;
    if (!gTs || !gStart || !lane || !util) return null;
    const m = h.meta as { sorted: boolean; minTs: number | null; maxTs: number | null; lanes: [string, number][]; peaks?: { groupsPerChunk?: unknown } };
    const lanes = m.lanes.map(([node, gpu]) => this.dicts.laneId(node, gpu));
    // Local ids usually equal the store's (same first-seen order): keep the view then.
    const identity = lanes.every((id, i) => id === i);
    let col = lane as Uint16Array;
    if (!identity) {
      col = new Uint16Array(lane.length);
      for (let i = 0; i < lane.length; i++) col[i] = lanes[lane[i]!]!;
    }
    const block = GpuBlock.restore({ gTs, gStart, lane: col, util }, m.sorted === true, lanes, m.minTs ?? Infinity, m.maxTs ?? -Infinity, magnitudes);
    const perChunk = m.peaks?.groupsPerChunk;
    if (lo instanceof Float64Array && hi instanceof Float64Array && peak instanceof Int16Array && typeof perChunk === "number") {
      // peaks by local lane id → by store lane id (the same matrix when the ids agree)
      const U = lanes.length;
      const W = block.laneSpan();
      let byId = peak;
      if (!identity) {
        byId = new Int16Array(lo.length * W).fill(-1);
        for (let c = 0; c < lo.length; c++) for (let i = 0; i < U; i++) byId[c * W + lanes[i]!] = peak[c * U + i]!;
      }
      block.keepUtilPeaks({ rows: block.rows, groupsPerChunk: perChunk, lanes: W, lo, hi, peak: byId });
    }
    return block;
  }

  /** Per metric: raw columns plus the folded (engine-level) parts, 7 sections. */
  private engineTo(base: Omit<Header, "sections" | "meta">, b: EngineBlock): Buffer {
    // local series ids in ascending store id order (so a fresh store usually maps 1:1)
    const used = new Set<number>();
    for (const cols of b.metrics.values()) for (const chunk of cols.series.chunks) for (const id of chunk) used.add(id);
    const order = [...used].sort((x, y) => x - y);
    const local = new Uint16Array(order.reduce((m, x) => Math.max(m, x), 0) + 1);
    order.forEach((id, i) => (local[id] = i));
    const arrays: TypedArray[] = [];
    const metrics: EngineMetricMeta[] = [];
    for (const [mid, cols] of b.metrics) {
      const s = cols.series.toArray();
      for (let i = 0; i < s.length; i++) s[i] = local[s[i]!]!;
      const parts = blockPartsSync(this.dicts, b, mid, false);
      const off = new Uint32Array(parts.length + 1);
      parts.forEach((p, k) => (off[k + 1] = off[k]! + p.ts.length));
      const fts = new Float64Array(off[parts.length]!);
      const fval = new Float64Array(off[parts.length]!);
      parts.forEach((p, k) => {
        fts.set(p.ts, off[k]);
        fval.set(p.value, off[k]);
      });
      metrics.push({
        name: this.dicts.metrics.values[mid]!,
        sorted: cols.sorted,
        minTs: cols.minTs,
        maxTs: cols.maxTs,
        rows: cols.rows,
        fold: parts.map((p) => [p.addr, p.labels, p.key]),
      });
      arrays.push(cols.gTs.toArray(), cols.gStart.toArray(), s, cols.value.toArray(), off, fts, fval);
    }
    const series = order.map((id) => [this.dicts.seriesAddr[id], this.dicts.seriesLabels[id]]);
    return encode({ ...base, meta: { metrics, series, minTs: b.minTs, maxTs: b.maxTs } }, arrays);
  }
}

// phases: strings in the header (block-local ids), columns as they are resident.
function phasesTo(base: Omit<Header, "sections" | "meta">, b: PhaseBlock): Buffer {
  b.trim();
  // local string ids in ascending store id order, so a fresh store usually maps 1:1.
  // Plain loops over a lookup table: a 1024-GPU hour has ~3 M ids to map, and
  // Uint32Array.from with a mapping function over a Map took seconds for it.
  const local = new Uint32Array(b.strings.values.length);
  for (const ids of [b.name, b.node, b.role]) for (let i = 0; i < ids.length; i++) local[ids[i]!] = 1;
  const strings: string[] = [];
  for (let g = 0; g < local.length; g++) if (local[g]) local[g] = strings.push(b.str(g)) - 1;
  const map = (ids: Uint32Array) => {
    const out = new Uint32Array(ids.length);
    for (let i = 0; i < ids.length; i++) out[i] = local[ids[i]!]!;
    return out;
  };
  const name = map(b.name);
  const node = map(b.node);
  const role = map(b.role);
  const meta = { strings, minT: b.minT, maxT: b.maxT };
  return encode({ ...base, meta }, [
    b.t0,
    b.t1,
    b.rank,
    name,
    node,
    role,
    b.gpuOff,
    b.gpus,
    b.open,
    Uint32Array.from(b.localUnmatched()),
  ]);
}

function phasesFrom(strings: Interner, h: Header, a: TypedArray[]): PhaseBlock | null {
  const [t0, t1, rank, name, node, role, gpuOff, gpus, open, unmatched] = a;
  if (!t0 || !t1 || !rank || !name || !node || !role || !gpuOff || !gpus || !(open instanceof Uint32Array) || !unmatched) return null;
  const meta = h.meta as { strings: string[]; minT: number | null; maxT: number | null };
  const ids = Uint32Array.from(meta.strings, (s) => strings.id(s));
  const identity = ids.every((id, i) => id === i);
  const remap = (local: Uint32Array) => {
    if (identity) return local;
    const out = new Uint32Array(local.length);
    for (let i = 0; i < local.length; i++) out[i] = ids[local[i]!]!;
    return out;
  };
  return PhaseBlock.restore(
    strings,
    {
      t0: t0 as Float64Array,
      t1: t1 as Float64Array,
      rank: rank as Float64Array,
      name: remap(name as Uint32Array),
      node: remap(node as Uint32Array),
      role: remap(role as Uint32Array),
      gpuOff: gpuOff as Uint32Array,
      gpus: gpus as Float64Array,
    },
    // JSON has no Infinity: an empty block's bounds come back as null
    { minT: meta.minT ?? Infinity, maxT: meta.maxT ?? -Infinity, open, unmatched: Array.from(unmatched) },
  );
}
