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
