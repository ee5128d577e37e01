/**
 * Binary frame for dense payloads (docs/api.md 8.9; docs/architecture.md):
 *
 *   offset 0      u32 little-endian H = byte length of the header
 *   offset 4      H bytes of UTF-8 JSON header (non-finite numbers written as null),
 *                 space-padded so the payload starts at a multiple of 8 (typed-array
 *                 views of any element size can then be taken without copying)
 *   offset 4 + H  payload bytes (the heatmap: R × X uint8, row-major; GPU series: below)
 *
 * Encoder and decoder live side by side so clients and tests share one definition.
 */

export interface Frame<H> {
  header: H;
  payload: Uint8Array;
}

export function encodeFrame(header: unknown, payload: Uint8Array): Uint8Array<ArrayBuffer> {
  const json = new TextEncoder().encode(JSON.stringify(header, (_k, v: unknown) => (typeof v === "number" && !Number.isFinite(v) ? null : v)));
  const h = json.length + ((8 - ((4 + json.length) % 8)) % 8);
  const out = new Uint8Array(4 + h + payload.length);
  new DataView(out.buffer).setUint32(0, h, true);
  out.set(json, 4);
  out.fill(0x20, 4 + json.length, 4 + h);
  out.set(payload, 4 + h);
  return out;
}

export function decodeFrame<H = unknown>(bytes: ArrayBuffer | Uint8Array): Frame<H> {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  if (u8.length < 4) throw new RangeError("frame too short");
  const h = new DataView(u8.buffer, u8.byteOffset, u8.byteLength).getUint32(0, true);
  if (4 + h > u8.length) throw new RangeError("frame header overruns the buffer");
  const header = JSON.parse(new TextDecoder().decode(u8.subarray(4, 4 + h))) as H;
  return { header, payload: u8.subarray(4 + h) };
}

/**
 * GPU series (docs/api.md 8.5, `GET /api/timeline/gpu?format=bin`): the same lanes, points and
 * values as the JSON answer, as columns. Header `{lanes: [[key, n], …]}` in answer order;
 * payload = ts f64 × N, mem_mb i32 × N, power_w i16 × N, util u8 × N (N = Σ n, lanes
 * back to back in each column), little-endian. A 32-lane 4 h answer is ~1.9 MB instead
 * of ~3.5 MB of JSON, and neither side parses or formats a number.
 */
export interface GpuLaneColumns {
  ts: Float64Array;
  util: Uint8Array;
  mem_mb: Int32Array;
  power_w: Int16Array;
}

export interface GpuLaneInput {
  ts: ArrayLike<number>;
  util: ArrayLike<number>;
  mem_mb: ArrayLike<number>;
  power_w: ArrayLike<number>;
}

export function encodeGpuFrame(lanes: Record<string, GpuLaneInput>): Uint8Array<ArrayBuffer> {
  const entries = Object.entries(lanes);
  const N = entries.reduce((s, [, l]) => s + l.ts.length, 0);
  const payload = new Uint8Array(15 * N);
  const ts = new Float64Array(payload.buffer, 0, N);
  const mem = new Int32Array(payload.buffer, 8 * N, N);
  const power = new Int16Array(payload.buffer, 12 * N, N);
  const util = new Uint8Array(payload.buffer, 14 * N, N);
  let o = 0;
  for (const [, l] of entries) {
    ts.set(l.ts, o);
    mem.set(l.mem_mb, o);
    power.set(l.power_w, o);
    util.set(l.util, o);
    o += l.ts.length;
  }
  return encodeFrame({ lanes: entries.map(([k, l]) => [k, l.ts.length]) }, payload);
}

export function decodeGpuFrame(bytes: ArrayBuffer | Uint8Array): { lanes: Record<string, GpuLaneColumns> } {
  const f = decodeFrame<{ lanes: [string, number][] }>(bytes);
  const N = f.header.lanes.reduce((s, [, n]) => s + n, 0);
  if (f.payload.length !== 15 * N) throw new RangeError(`gpu frame: payload of ${f.payload.length} bytes for ${N} points`);
  // views need an 8-aligned start; a frame sliced out of a larger buffer is copied once
  const p = f.payload.byteOffset % 8 === 0 ? f.payload : f.payload.slice();
  const ts = new Float64Array(p.buffer, p.byteOffset, N);
  const mem = new Int32Array(p.buffer, p.byteOffset + 8 * N, N);
  const power = new Int16Array(p.buffer, p.byteOffset + 12 * N, N);
  const util = new Uint8Array(p.buffer, p.byteOffset + 14 * N, N);
  const lanes: Record<string, GpuLaneColumns> = {};
  let o = 0;
  for (const [key, n] of f.header.lanes) {
    lanes[key] = { ts: ts.subarray(o, o + n), util: util.subarray(o, o + n), mem_mb: mem.subarray(o, o + n), power_w: power.subarray(o, o + n) };
    o += n;
  }
  return { lanes };
}

/**
 * Phase lanes (docs/api.md 8.4, `GET /api/timeline/phases?format=bin`): the same intervals in
 * the same order as the JSON answer, as columns. Header `{strings: [...], lanes: [[node, gpu,
 * n], …]}` (lanes in answer order, each lane's intervals contiguous); payload = t0 f64 × N,
 * t1 f64 × N, rank f64 × N, name u32 × N, role u32 × N (name and role index `strings`,
 * numbered in order of first use, a row's name before its role), little-endian. A 32-lane 4 h
 * answer of ~21 k intervals is ~0.7 MB instead of ~2.4 MB of JSON objects.
 */
export interface PhaseLaneColumns {
  node: string;
  gpu: number;
  t0: Float64Array;
  t1: Float64Array;
  rank: Float64Array;
  name: Uint32Array;
  role: Uint32Array;
}

export interface PhaseLanes {
  strings: string[];
  lanes: PhaseLaneColumns[];
}

/** One lane's intervals as the server holds them: `name`/`role` index `strings`. */
export interface PhaseLaneInput {
  node: string;
  gpu: number;
  n: number;
  t0: ArrayLike<number>;
  t1: ArrayLike<number>;
  rank: ArrayLike<number>;
  name: ArrayLike<number>;
  role: ArrayLike<number>;
}

const PHASE_ROW_BYTES = 32;

function phaseColumns(buffer: ArrayBuffer, byteOffset: number, N: number) {
  return {
    t0: new Float64Array(buffer, byteOffset, N),
    t1: new Float64Array(buffer, byteOffset + 8 * N, N),
    rank: new Float64Array(buffer, byteOffset + 16 * N, N),
    name: new Uint32Array(buffer, byteOffset + 24 * N, N),
    role: new Uint32Array(buffer, byteOffset + 28 * N, N),
  };
}

export function encodePhaseFrame(all: readonly PhaseLaneInput[], strings: readonly string[]): Uint8Array<ArrayBuffer> {
  const lanes = all.filter((l) => l.n > 0); // the JSON answer has no trace of an empty lane
  const N = lanes.reduce((s, l) => s + l.n, 0);
  const payload = new Uint8Array(PHASE_ROW_BYTES * N);
  const c = phaseColumns(payload.buffer, 0, N);
  const ids = new Map<number, number>(); // the store's string id → the frame's
  const used: string[] = [];
  const id = (s: number) => {
    let k = ids.get(s);
    if (k === undefined) {
      ids.set(s, (k = used.length));
      used.push(strings[s] ?? "");
    }
    return k;
  };
  let o = 0;
  for (const l of lanes) {
    for (let i = 0; i < l.n; i++, o++) {
      c.t0[o] = l.t0[i]!;
      c.t1[o] = l.t1[i]!;
      c.rank[o] = l.rank[i]!;
      c.name[o] = id(l.name[i]!);
      c.role[o] = id(l.role[i]!);
    }
  }
  return encodeFrame({ strings: used, lanes: lanes.map((l) => [l.node, l.gpu, l.n]) }, payload);
}

export function decodePhaseFrame(bytes: ArrayBuffer | Uint8Array): PhaseLanes {
  const f = decodeFrame<{ strings: string[]; lanes: [string, number, number][] }>(bytes);
  const N = f.header.lanes.reduce((s, [, , n]) => s + n, 0);
  if (f.payload.length !== PHASE_ROW_BYTES * N) throw new RangeError(`phase frame: payload of ${f.payload.length} bytes for ${N} intervals`);
  const p = f.payload.byteOffset % 8 === 0 ? f.payload : f.payload.slice();
  const c = phaseColumns(p.buffer as ArrayBuffer, p.byteOffset, N);
  const S = f.header.strings.length;
  for (let i = 0; i < N; i++) if (c.name[i]! >= S || c.role[i]! >= S) throw new RangeError(`phase frame: string ${Math.max(c.name[i]!, c.role[i]!)} of ${S}`);
  let o = 0;
  const lanes = f.header.lanes.map(([node, gpu, n]) => {
    const lane = {
      node,
      gpu,
      t0: c.t0.subarray(o, o + n),
      t1: c.t1.subarray(o, o + n),
      rank: c.rank.subarray(o, o + n),
      name: c.name.subarray(o, o + n),
      role: c.role.subarray(o, o + n),
    };
    o += n;
    return lane;
  });
  return { strings: f.header.strings, lanes };
}

/** The JSON answer's rows (sorted by node, gpu, t0) as the frame's columns — what decodePhaseFrame gives for the same answer. */
export function phaseLanesFromRows(rows: readonly { name: string; t0: number; t1: number; node: string; gpu: number; rank: number; role: string }[]): PhaseLanes {
  const strings: string[] = [];
  const ids = new Map<string, number>();
  const id = (s: string) => {
    let k = ids.get(s);
    if (k === undefined) {
      ids.set(s, (k = strings.length));
      strings.push(s);
    }
    return k;
  };
  const lanes: PhaseLaneColumns[] = [];
  for (let a = 0; a < rows.length; ) {
    let b = a + 1;
    while (b < rows.length && rows[b]!.node === rows[a]!.node && rows[b]!.gpu === rows[a]!.gpu) b++;
    const n = b - a;
    const lane: PhaseLaneColumns = {
      node: rows[a]!.node,
      gpu: rows[a]!.gpu,
      t0: new Float64Array(n),
      t1: new Float64Array(n),
      rank: new Float64Array(n),
      name: new Uint32Array(n),
      role: new Uint32Array(n),
    };
    for (let i = 0; i < n; i++) {
      const r = rows[a + i]!;
      lane.t0[i] = r.t0;
      lane.t1[i] = r.t1;
      lane.rank[i] = r.rank;
      lane.name[i] = id(r.name);
      lane.role[i] = id(r.role);
    }
    lanes.push(lane);
    a = b;
  }
  return { strings, lanes };
}
