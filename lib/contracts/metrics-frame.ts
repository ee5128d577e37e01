/**
 * Scalar metrics as a binary column frame (docs/api.md 9.2, `GET /api/metrics?format=bin`):
 * the same keys, points and values as the JSON answer, in the frame of
 * lib/contracts/binary.ts.
 *
 *   header   {"series": [[key, n, n_ts, others], …]} in answer order; `others` lists the
 *            y values that are not numbers as [index, value] pairs (strings, booleans)
 *   payload  x f64 × Σn, then y f64 × Σn, then ts f64 × Σn_ts (keys back to back in each
 *            column), little-endian; NaN where the JSON answer has null (a null step, a
 *            null/NaN/±Inf value, or a non-number listed in `others`)
 *
 * Why: the compare overlay reads 2 runs × 10k steps × the metrics on screen; as JSON that
 * is ~250 kB of text per series for the server to format and compress and for the
 * browser to parse (issue #14 bench). Decoded, a frame gives back exactly the JSON answer
 * (app/api/metrics/route.test.ts).
 */
import { decodeFrame, encodeFrame } from "@/lib/contracts/binary";

type Scalar = number | string | boolean | null;

export interface MetricSeriesInput {
  x: readonly (number | null)[];
  y: readonly Scalar[];
  ts: readonly number[];
}

export interface MetricSeriesJson {
  x: (number | null)[];
  y: Scalar[];
  ts: number[];
}

type HeaderEntry = [key: string, n: number, nTs: number, others: [number, string | boolean][]];

const f64 = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : Number.NaN);

export function encodeMetricsFrame(series: Record<string, MetricSeriesInput>): Uint8Array<ArrayBuffer> {
  const entries = Object.entries(series);
  let N = 0;
  let T = 0;
  for (const [, s] of entries) {
    if (s.y.length !== s.x.length) throw new RangeError("metrics frame: x and y differ in length");
    N += s.x.length;
    T += s.ts.length;
  }
  const payload = new Uint8Array(8 * (2 * N + T));
  const x = new Float64Array(payload.buffer, 0, N);
  const y = new Float64Array(payload.buffer, 8 * N, N);
  const ts = new Float64Array(payload.buffer, 16 * N, T);
  const header: HeaderEntry[] = [];
  let o = 0;
  let ot = 0;
  for (const [key, s] of entries) {
    const others: [number, string | boolean][] = [];
    const n = s.x.length;
    for (let i = 0; i < n; i++) {
      x[o + i] = f64(s.x[i]);
      const v = s.y[i];
      if (typeof v === "string" || typeof v === "boolean") others.push([i, v]);
      y[o + i] = f64(v);
    }
    for (let i = 0; i < s.ts.length; i++) ts[ot + i] = f64(s.ts[i]);
    header.push([key, n, s.ts.length, others]);
    o += n;
    ot += s.ts.length;
  }
  return encodeFrame({ series: header }, payload);
}

/** One key of a frame as its columns: views into the frame's buffer (no copy), NaN where the JSON answer has null. */
export interface MetricColumns {
  x: Float64Array;
  y: Float64Array;
  ts: Float64Array;
  /** the y values that are not numbers, [index, value] (NaN in `y`) */
  others: [number, string | boolean][];
}

export function decodeMetricsColumns(bytes: ArrayBuffer | Uint8Array): Record<string, MetricColumns> {
  const f = decodeFrame<{ series: HeaderEntry[] }>(bytes);
  let N = 0;
  let T = 0;
  for (const [, n, nTs] of f.header.series) {
    N += n;
    T += nTs;
  }
  if (f.payload.length !== 8 * (2 * N + T)) throw new RangeError(`metrics frame: payload of ${f.payload.length} bytes for ${N} points and ${T} timestamps`);
  // views need an 8-aligned start; a frame sliced out of a larger buffer is copied once
  const p = f.payload.byteOffset % 8 === 0 ? f.payload : f.payload.slice();
  const x = new Float64Array(p.buffer, p.byteOffset, N);
  const y = new Float64Array(p.buffer, p.byteOffset + 8 * N, N);
  const ts = new Float64Array(p.buffer, p.byteOffset + 16 * N, T);
  const out: Record<string, MetricColumns> = {};
  let o = 0;
  let ot = 0;
  for (const [key, n, nTs, others] of f.header.series) {
    out[key] = { x: x.subarray(o, o + n), y: y.subarray(o, o + n), ts: ts.subarray(ot, ot + nTs), others };
    o += n;
    ot += nTs;
  }
  return out;
}

/** The JSON answer the frame was made from (null where the frame has NaN). */
export function decodeMetricsFrame(bytes: ArrayBuffer | Uint8Array): Record<string, MetricSeriesJson> {
  const out: Record<string, MetricSeriesJson> = {};
  for (const [key, c] of Object.entries(decodeMetricsColumns(bytes))) {
    const n = c.x.length;
    const xs = new Array<number | null>(n);
    const ys = new Array<Scalar>(n);
    for (let i = 0; i < n; i++) {
      const a = c.x[i]!;
      xs[i] = a === a ? a : null;
      const b = c.y[i]!;
      ys[i] = b === b ? b : null;
    }
    for (const [i, v] of c.others) ys[i] = v;
    out[key] = { x: xs, y: ys, ts: Array.from(c.ts) };
  }
  return out;
}
