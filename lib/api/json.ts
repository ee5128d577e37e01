/**
 * The one JSON serializer for API answers. JSON cannot carry NaN/±Infinity, so every
 * non-finite number becomes `null`, recursively (spec api.md 9.1). Typed arrays are
 * serialised as plain arrays. Nothing else is transformed.
 */
export function jsonSafeStringify(value: unknown): string {
  return JSON.stringify(value, replacer);
}

function replacer(this: unknown, _key: string, value: unknown): unknown {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    const out: (number | null)[] = [];
    const arr = value as unknown as ArrayLike<number | bigint>;
    for (let i = 0; i < arr.length; i++) {
      const v = Number(arr[i]);
      out.push(Number.isFinite(v) ? v : null);
    }
    return out;
  }
  return value;
}

export function jsonResponse(value: unknown, init?: ResponseInit): Response {
  const headers = new Headers(init?.headers);
  headers.set("content-type", "application/json");
  return new Response(jsonSafeStringify(value), { ...init, headers });
}
