/**
 * Hourly partition keys (docs/formats.md §3): the UTC hour of a timestamp as `YYYYMMDD_HH`.
 * A partition `K` covers `[hourStart(K), hourStart(K) + 3600)`.
 */
export const HOUR_S = 3600;

const KEY_RE = /^(\d{4})(\d{2})(\d{2})_(\d{2})$/;

export function partitionKey(ts: number): string {
  const d = new Date(Math.floor(ts) * 1000);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${String(d.getUTCFullYear()).padStart(4, "0")}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}_${p(d.getUTCHours())}`;
}

/** Unix start of the hour named by `key`, or null when the stem is not `YYYYMMDD_HH`. */
export function hourStartOfKey(key: string): number | null {
  const m = KEY_RE.exec(key);
  if (!m) return null;
  const [y, mo, d, h] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23) return null;
  const ms = Date.UTC(y, mo - 1, d, h);
  // Reject dates that roll over (20250231_00).
  if (partitionKey(ms / 1000) !== key) return null;
  return ms / 1000;
}
