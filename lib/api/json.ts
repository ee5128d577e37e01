/**
 * The one JSON serializer for API answers. JSON cannot carry NaN/±Infinity: every
 * non-finite number becomes `null` (spec api.md 9.1) — JSON.stringify already does that
 * for numbers, recursively, so the only thing added here is that typed arrays serialise
 * as plain arrays (their NaN elements also become null). The replacer does no per-number
 * work, which keeps multi-MB timeline answers cheap.
 */
export function jsonSafeStringify(value: unknown): string {
  return JSON.stringify(value, replacer);
}

function replacer(_key: string, value: unknown): unknown {
  if (typeof value === "object" && value !== null && ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    return Array.from(value as unknown as ArrayLike<number | bigint>, Number);
  }
  return value;
}

export function jsonResponse(value: unknown, init?: ResponseInit): Response {
  const headers = new Headers(init?.headers);
  headers.set("content-type", "application/json");
  return new Response(jsonSafeStringify(value), { ...init, headers });
}
