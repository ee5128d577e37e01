/**
 * Accessors over unpickled Python values. Dicts may arrive as `Map`s or plain objects
 * (depending on the key types the unpickler saw), lists as arrays, tensors and numpy
 * arrays as lazy objects; these helpers hide the difference from the dump modules.
 */
export function isDictLike(v: unknown): v is Map<unknown, unknown> | Record<string, unknown> {
  if (v instanceof Map) return true;
  if (typeof v !== "object" || v === null) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** `d.get(key)`; `undefined` when the key is missing or `d` is not a dict. */
export function pyGet(d: unknown, key: string): unknown {
  if (d instanceof Map) return d.get(key);
  if (isDictLike(d)) return Object.prototype.hasOwnProperty.call(d, key) ? (d as Record<string, unknown>)[key] : undefined;
  return undefined;
}

export function pyHas(d: unknown, key: string): boolean {
  if (d instanceof Map) return d.has(key);
  if (isDictLike(d)) return Object.prototype.hasOwnProperty.call(d, key);
  return false;
}

export function pyKeys(d: unknown): string[] {
  if (d instanceof Map) return [...d.keys()].map(String);
  if (isDictLike(d)) return Object.keys(d);
  return [];
}

/** A Python number (int/float/bool/bigint) as a JS number, else null. */
export function pyNumber(v: unknown): number | null {
  if (typeof v === "number") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "bigint") return Number(v);
  return null;
}

export function pyInt(v: unknown): number | null {
  const n = pyNumber(v);
  return n === null || !Number.isFinite(n) ? null : Math.trunc(n);
}
