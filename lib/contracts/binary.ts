/**
 * Binary frame for dense payloads (api.md 8.9; STYLE 5):
 *
 *   offset 0      u32 little-endian H = byte length of the header
 *   offset 4      H bytes of UTF-8 JSON header (non-finite numbers written as null)
 *   offset 4 + H  payload bytes (the heatmap: R × X uint8, row-major)
 *
 * Encoder and decoder live side by side so clients and tests share one definition.
 */

export interface Frame<H> {
  header: H;
  payload: Uint8Array;
}

export function encodeFrame(header: unknown, payload: Uint8Array): Uint8Array<ArrayBuffer> {
  const json = new TextEncoder().encode(JSON.stringify(header, (_k, v: unknown) => (typeof v === "number" && !Number.isFinite(v) ? null : v)));
  const out = new Uint8Array(4 + json.length + payload.length);
  new DataView(out.buffer).setUint32(0, json.length, true);
  out.set(json, 4);
  out.set(payload, 4 + json.length);
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
