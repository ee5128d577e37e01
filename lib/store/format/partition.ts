/**
 * Hourly partitions (docs/formats.md §3): a partitioned stream's record goes to
 * `{stream}/{YYYYMMDD_HH}.jsonl`, the UTC hour of its partition timestamp (fraction
 * floored). A partition `K` covers `[hourStart(K), hourStart(K) + 3600)`. The one
 * implementation of the key, used by the writer, the readers and the host sampler.
 */
import { OPEN_T1 } from "./records";
import type { StreamRecords } from "./records";
import { isPartitioned, type StreamName } from "./streams";

export const HOUR_S = 3600;

/** `YYYYMMDD_HH.jsonl`: the name of an hour file (other names in a stream dir are ignored). */
export const HOUR_FILE_RE = /^(\d{8}_\d{2})\.jsonl$/;
const KEY_RE = /^(\d{4})(\d{2})(\d{2})_(\d{2})$/;

const hourKeyCache = new Map<number, string>();

/** `YYYYMMDD_HH` of the UTC hour containing epoch second `ts`; throws outside years 0000..9999. */
export function hourKey(ts: number): string {
  return hourKeyOfIndex(Math.floor(ts / HOUR_S));
}

/** The key of hour number `hour` (epoch seconds / 3600, floored); cached, this is on the write path. */
export function hourKeyOfIndex(hour: number): string {
  let key = hourKeyCache.get(hour);
  if (key === undefined) {
    const iso = new Date(hour * 3_600_000).toISOString(); // 2025-08-12T12:00:00.000Z
    if (!/^\d{4}-/.test(iso)) throw new RangeError(`timestamp outside years 0000..9999: hour ${hour}`);
    key = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}_${iso.slice(11, 13)}`;
    if (hourKeyCache.size > 10_000) hourKeyCache.clear();
    hourKeyCache.set(hour, key);
  }
  return key;
}

/** The read side's name for the same key. */
export const partitionKey = hourKey;

/** Unix start of the hour named by `key`, or null when the stem is not `YYYYMMDD_HH`. */
export function hourStartOfKey(key: string): number | null {
  const m = KEY_RE.exec(key);
  if (!m) return null;
  const [y, mo, d, h] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23) return null;
  const ms = Date.UTC(y, mo - 1, d, h);
  // Reject dates that roll over (20250231_00).
  if (hourKey(ms / 1000) !== key) return null;
  return ms / 1000;
}

/** The timestamp that picks a record's hour file: `ts`, or for a phase `t1` (`t0` while OPEN). */
export function partitionTs<S extends StreamName>(stream: S, r: StreamRecords[S]): number {
  if (stream === "phases") {
    const p = r as StreamRecords["phases"];
    return p.t1 === OPEN_T1 ? p.t0 : p.t1;
  }
  return (r as { ts: number }).ts;
}

/** Path of the file a record goes to, relative to the dashboard dir. */
export function streamFile<S extends StreamName>(stream: S, r: StreamRecords[S]): string {
  return isPartitioned(stream) ? `${stream}/${hourKey(partitionTs(stream, r))}.jsonl` : `${stream}.jsonl`;
}
