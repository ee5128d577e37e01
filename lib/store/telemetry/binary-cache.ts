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
 * typed sections listed in the header, each padded to 8 bytes.
 */
import fs from "node:fs";
import path from "node:path";
import { type Dicts, EngineBlock, EngineMetricColumns, GpuBlock, PhaseBlock } from "@/lib/store/telemetry/blocks";
import type { TypedArray } from "@/lib/store/telemetry/columns";
import type { TailFile } from "@/lib/store/telemetry/tail-file";
import type { PhaseEvent } from "@/lib/store/telemetry/types";

const VERSION = 1;
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

export class BinaryCache {
  private warned = false;
  constructor(
    readonly dir: string,
    private readonly dicts: Dicts,
  ) {}

  private file(stream: string, key: string): string {
    return path.join(this.dir, stream, `${key}.bin`);
  }

  /** Adopt a cached block for `file` when a valid entry exists. */
  async load(stream: string, file: TailFile<never>): Promise<void> {
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
      const block =
        stream === "gpu_util" ? this.gpuFrom(header, arrays) : stream === "engine_series" ? this.engineFrom(header, arrays) : phasesFrom(header, arrays);
      if (block) await file.withLock(async () => (file.block ? undefined : file.adopt(block as never, header.offset, header.corrupt)));
    } catch (err) {
      this.warn(err);
    }
  }

  /** Write `file`'s block (fire and forget). */
  save(stream: string, file: TailFile<never>): void {
    const block = file.block as unknown;
    if (!block || file.offset !== file.size) return;
    const base = { v: VERSION, size: file.size, mtimeMs: file.mtimeMs, offset: file.offset, corrupt: file.corrupt };
    let bytes: Buffer;
    try {
      if (block instanceof GpuBlock) bytes = this.gpuTo(base, block);
      else if (block instanceof EngineBlock) bytes = this.engineTo(base, block);
      else if (block instanceof PhaseBlock) bytes = phasesTo(base, block);
      else return;
    } catch (err) {
      this.warn(err);
      return;
    }
    const target = this.file(stream, file.key);
    const tmp = `${target}.${process.pid}.${++tmpSeq}.tmp`;
    void fs.promises
      .mkdir(path.dirname(target), { recursive: true })
      .then(() => fs.promises.writeFile(tmp, bytes))
      .then(() => fs.promises.rename(tmp, target))
      .catch((err: unknown) => {
        this.warn(err);
        return fs.promises.rm(tmp, { force: true });
      });
  }

  private warn(err: unknown): void {
    if (this.warned) return;
    this.warned = true;
    console.warn(`[rlboard] telemetry binary cache under ${this.dir} unusable, parsing JSON instead:`, err);
  }

  // gpu_util: lane ids are store-local, so the entry carries its (node, gpu) list.
  private gpuTo(base: Omit<Header, "sections" | "meta">, b: GpuBlock): Buffer {
    const lanes = b.lane.toArray();
    const used = [...b.lanes].sort((x, y) => x - y);
    const local = new Map(used.map((id, i) => [id, i]));
    const mapped = new Uint16Array(lanes.length);
    for (let i = 0; i < lanes.length; i++) mapped[i] = local.get(lanes[i]!)!;
    const meta = { sorted: b.sorted, lanes: used.map((id) => [this.dicts.laneNode[id], this.dicts.laneGpu[id]]) };
    return encode({ ...base, meta }, [b.gTs.toArray(), b.gStart.toArray(), mapped, b.util.toArray(), b.mem.toArray(), b.power.toArray()]);
  }

  private gpuFrom(h: Header, a: TypedArray[]): GpuBlock | null {
    const [gTs, gStart, lane, util, mem, power] = a;
    if (!gTs || !gStart || !lane || !util || !mem || !power) return null;
    const lanes = (h.meta.lanes as [string, number][]).map(([node, gpu]) => this.dicts.laneId(node, gpu));
    const remapped = new Uint16Array(lane.length);
    for (let i = 0; i < lane.length; i++) remapped[i] = lanes[lane[i]!]!;
    return GpuBlock.restore({ gTs, gStart, lane: remapped, util, mem, power }, h.meta.sorted === true);
  }

  private engineTo(base: Omit<Header, "sections" | "meta">, b: EngineBlock): Buffer {
    const seriesIds = new Map<number, number>();
    const arrays: TypedArray[] = [];
    const metrics: [string, boolean][] = [];
    for (const [mid, cols] of b.metrics) {
      const s = cols.series.toArray();
      for (let i = 0; i < s.length; i++) {
        let l = seriesIds.get(s[i]!);
        if (l === undefined) seriesIds.set(s[i]!, (l = seriesIds.size));
        s[i] = l;
      }
      metrics.push([this.dicts.metrics.values[mid]!, cols.sorted]);
      arrays.push(cols.gTs.toArray(), cols.gStart.toArray(), s, cols.value.toArray());
    }
    const series = [...seriesIds.keys()].map((id) => [this.dicts.seriesAddr[id], this.dicts.seriesLabels[id]]);
    return encode({ ...base, meta: { metrics, series } }, arrays);
  }

  private engineFrom(h: Header, a: TypedArray[]): EngineBlock | null {
    const metrics = h.meta.metrics as [string, boolean][];
    const series = (h.meta.series as [string, Record<string, string | null>][]).map(([addr, labels]) => this.dicts.seriesId(addr, labels));
    if (a.length !== metrics.length * 4) return null;
    const b = new EngineBlock();
    metrics.forEach(([name, sorted], i) => {
      const [gTs, gStart, s, value] = a.slice(i * 4, i * 4 + 4) as [Float64Array, Uint32Array, Uint16Array, Float64Array];
      const remapped = new Uint16Array(s.length);
      for (let k = 0; k < s.length; k++) remapped[k] = series[s[k]!]!;
      const cols = EngineMetricColumns.restore(gTs, gStart, remapped, value, sorted);
      b.metrics.set(this.dicts.metrics.id(name), cols);
      if (cols.minTs < b.minTs) b.minTs = cols.minTs;
      if (cols.maxTs > b.maxTs) b.maxTs = cols.maxTs;
    });
    return b;
  }
}

// phases: strings interned in the header, numbers in columns; rows re-materialised on load.
function phasesTo(base: Omit<Header, "sections" | "meta">, b: PhaseBlock): Buffer {
  const strings = new Map<string, number>();
  const sid = (s: string) => {
    let i = strings.get(s);
    if (i === undefined) strings.set(s, (i = strings.size));
    return i;
  };
  const n = b.rows.length;
  const t0 = new Float64Array(n);
  const t1 = new Float64Array(n);
  const rank = new Int32Array(n);
  const name = new Uint32Array(n);
  const node = new Uint32Array(n);
  const role = new Uint32Array(n);
  const gpuLen = new Uint32Array(n);
  const gpus: number[] = [];
  b.rows.forEach((ev, i) => {
    t0[i] = ev.t0;
    t1[i] = ev.t1;
    rank[i] = ev.rank;
    name[i] = sid(ev.name);
    node[i] = sid(ev.node);
    role[i] = sid(ev.role);
    gpuLen[i] = ev.gpus.length;
    gpus.push(...ev.gpus);
  });
  return encode({ ...base, meta: { strings: [...strings.keys()] } }, [t0, t1, rank, name, node, role, gpuLen, Int32Array.from(gpus)]);
}

function phasesFrom(h: Header, a: TypedArray[]): PhaseBlock | null {
  const [t0, t1, rank, name, node, role, gpuLen, gpus] = a;
  if (!t0 || !t1 || !rank || !name || !node || !role || !gpuLen || !gpus) return null;
  const strings = h.meta.strings as string[];
  const b = new PhaseBlock();
  // Most events own zero or one GPU: share those (read-only) lists.
  const single: number[][] = [];
  const none: number[] = [];
  let g = 0;
  for (let i = 0; i < t0.length; i++) {
    const len = gpuLen[i]!;
    const ev: PhaseEvent = {
      name: strings[name[i]!]!,
      t0: t0[i]!,
      t1: t1[i]!,
      node: strings[node[i]!]!,
      gpus: len === 0 ? none : len === 1 ? (single[gpus[g]!] ??= [gpus[g]!]) : Array.from(gpus.subarray(g, g + len)),
      rank: rank[i]!,
      role: strings[role[i]!]!,
    };
    g += len;
    b.add(ev);
  }
  return b;
}
