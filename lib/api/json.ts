/**
 * The one JSON serializer for API answers. JSON cannot carry NaN/±Infinity: every
 * non-finite number becomes `null` (docs/api.md 9.1) — JSON.stringify already does that
 * for numbers, recursively, so the only thing added here is that typed arrays serialise
 * as plain arrays (their NaN elements also become null).
 *
 * Speed matters: a 32-lane timeline answer is several MB. A JSON.stringify replacer is
 * called for every number and takes V8 off its fast path (3× slower), so typed arrays
 * are converted by a walk that only visits objects.
 */
export function jsonSafeStringify(value: unknown): string {
  return JSON.stringify(plain(value));
}

/** Typed arrays → arrays, copying only the objects on the path to one. */
function plain(v: unknown): unknown {
  if (typeof v !== "object" || v === null) return v;
  if (ArrayBuffer.isView(v)) return v instanceof DataView ? v : Array.from(v as unknown as ArrayLike<number | bigint>, Number);
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (typeof x !== "object" || x === null) continue;
      const y = plain(x);
      if (y !== x) (out ??= v.slice())[i] = y;
    }
    return out ?? v;
  }
  if (typeof (v as { toJSON?: unknown }).toJSON === "function" || v instanceof Map || v instanceof Set) return v;
  let out: Record<string, unknown> | null = null;
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k];
    if (typeof x !== "object" || x === null) continue;
    const y = plain(x);
    if (y !== x) (out ??= { ...(v as Record<string, unknown>) })[k] = y;
  }
  return out ?? v;
}

export function jsonResponse(value: unknown, init?: ResponseInit): Response {
  const headers = new Headers(init?.headers);
  headers.set("content-type", "application/json");
  return new Response(jsonSafeStringify(value), { ...init, headers });
}
