/**
 * File layout of a dump directory D (docs/api.md 1.1, 1.9): names, listing with the
 * visibility rule, stats for cache keys, and the load-failure policy (a fresh file that
 * fails to parse is "still being written" → 503; a missing one is 404; an older one that
 * fails to parse is `corrupt_file` → 500 with a message naming the file and the problem).
 * Every path is relative to the run directory and goes through its `RunFs` (safe-fs.ts):
 * nothing resolving outside the run directory is listed, stat'ed or opened.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { ApiError, corruptFile, notFound, stillWriting } from "@/lib/contracts/errors";
import { PtFormatError } from "@/lib/store/pt/errors";
import { isOutside, type RunFs } from "@/lib/store/safe-fs";

/** A rollout younger than this (seconds) is hidden unless its train companion exists. */
export const MIN_AGE_SECONDS = 10.0;
/** A load failure on a file younger than this (seconds) means "still being written". */
export const FRESH_SECONDS = 60.0;

const INT = /^[0-9]+$/;
/** Concurrent stats while listing a run's dumps. */
const LIST_STAT_CONCURRENCY = 32;

/** `Promise.all(items.map(fn))` with at most `limit` calls in flight; results in order. */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export function rolloutStem(rolloutId: number, evaluation: boolean): string {
  return evaluation ? `eval_${rolloutId}` : String(rolloutId);
}

export function rolloutRel(rolloutId: number, evaluation: boolean): string {
  return path.posix.join("rollout_data", `${rolloutStem(rolloutId, evaluation)}.pt`);
}

export function mirrorRel(rolloutId: number, evaluation: boolean): string {
  return path.posix.join("dashboard_columns", `rollout_${rolloutStem(rolloutId, evaluation)}.parquet`);
}

export function sidecarRel(rolloutId: number, evaluation: boolean): string {
  return path.posix.join("trajectory", `${rolloutStem(rolloutId, evaluation)}.jsonl`);
}

export function isErrno(err: unknown, code: string): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === code;
}

export interface FileStamp {
  size: number;
  /** mtime in nanoseconds, as a decimal string (exact). */
  mtimeNs: string;
  mtimeMs: number;
}

function toStamp(st: { size: bigint; mtimeNs: bigint }): FileStamp {
  return { size: Number(st.size), mtimeNs: st.mtimeNs.toString(), mtimeMs: Number(st.mtimeNs / 1_000_000n) };
}

/** Stamp of a file outside any run directory (the app's own cache dir). */
export async function stampAbs(abs: string): Promise<FileStamp> {
  return toStamp(await fs.stat(abs, { bigint: true }));
}

/** Stamp of a cache file, or null when missing. */
export async function stampAbsOrNull(abs: string): Promise<FileStamp | null> {
  try {
    return await stampAbs(abs);
  } catch (err) {
    if (isErrno(err, "ENOENT") || isErrno(err, "ENOTDIR")) return null;
    throw err;
  }
}

/**
 * Stat of `rel` in the run directory, or null when missing. A file resolving outside
 * the run directory throws the safe-fs refusal (403).
 */
export async function stampOrNull(fsys: RunFs, rel: string): Promise<FileStamp | null> {
  try {
    return toStamp(await fsys.stat(rel, { bigint: true }));
  } catch (err) {
    if (isErrno(err, "ENOENT") || isErrno(err, "ENOTDIR")) return null;
    throw err;
  }
}

/** `stampOrNull`, with a file resolving outside counted as missing (listings). */
async function visibleStamp(fsys: RunFs, rel: string): Promise<FileStamp | null> {
  try {
    return await stampOrNull(fsys, rel);
  } catch (err) {
    if (isOutside(err)) return null;
    throw err;
  }
}

export interface TrainShardFile {
  name: string;
  rank: number;
}

/** `train_data/{rolloutId}_*.pt` in shard order (ascending by the integer after the last `_`). */
export async function listTrainShards(fsys: RunFs, rolloutId: number): Promise<TrainShardFile[]> {
  const prefix = `${rolloutId}_`;
  const out: TrainShardFile[] = [];
  for (const name of await fsys.readdir("train_data")) {
    if (!name.startsWith(prefix) || !name.endsWith(".pt")) continue;
    const stem = name.slice(0, -3);
    const rank = stem.slice(stem.lastIndexOf("_") + 1);
    if (!INT.test(rank)) continue; // the reference would crash on int(); we skip
    out.push({ name, rank: Number.parseInt(rank, 10) });
  }
  return out.sort((a, b) => a.rank - b.rank || (a.name < b.name ? -1 : 1));
}

/**
 * Visible rollout ids (1.9): older than MIN_AGE_SECONDS, or (train only) with a first
 * train companion `train_data/{rolloutId}_0.pt`. Stems other than `int` / `eval_int` are skipped.
 */
export async function listRolloutIds(fsys: RunFs, nowMs = Date.now()): Promise<{ train: number[]; eval: number[] }> {
  const candidates: { name: string; rolloutId: number; evaluation: boolean }[] = [];
  for (const name of await fsys.readdir("rollout_data")) {
    if (!name.endsWith(".pt")) continue;
    const stem = name.slice(0, -3);
    const evaluation = stem.startsWith("eval_");
    const digits = evaluation ? stem.slice(5) : stem;
    if (!INT.test(digits)) continue;
    candidates.push({ name, rolloutId: Number.parseInt(digits, 10), evaluation });
  }
  // The stats are independent: run them concurrently (bounded), not one after another.
  const visible = await mapBounded(candidates, LIST_STAT_CONCURRENCY, async ({ name, rolloutId, evaluation }) => {
    const st = await visibleStamp(fsys, path.posix.join("rollout_data", name));
    if (st === null) return false;
    if ((nowMs - st.mtimeMs) / 1000 > MIN_AGE_SECONDS) return true;
    return !evaluation && (await visibleStamp(fsys, path.posix.join("train_data", `${rolloutId}_0.pt`))) !== null;
  });
  const train: number[] = [];
  const evals: number[] = [];
  candidates.forEach((c, i) => {
    if (visible[i]) (c.evaluation ? evals : train).push(c.rolloutId);
  });
  const asc = (a: number, b: number) => a - b;
  return { train: [...new Set(train)].sort(asc), eval: [...new Set(evals)].sort(asc) };
}

/**
 * Run `load` on `rel` with the 1.9 failure policy: ENOENT → 404; any other failure on a
 * file younger than FRESH_SECONDS → 503 still_writing; an older file that fails to parse
 * (`PtFormatError`) → `corrupt_file`; other errors (bugs) are rethrown (500, hidden).
 * ApiErrors (the safe-fs refusal included) pass through untouched.
 */
export async function guardedLoad<T>(fsys: RunFs, rel: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (ApiError.is(err)) throw err;
    if (isErrno(err, "ENOENT")) throw notFound(`no such file: ${rel}`);
    const st = await stampOrNull(fsys, rel);
    if (st === null) throw notFound(`no such file: ${rel}`);
    if ((Date.now() - st.mtimeMs) / 1000 < FRESH_SECONDS) throw stillWriting(rel);
    if (err instanceof PtFormatError) throw corruptFile(rel, err.detail, err);
    throw err;
  }
}

/**
 * Lazy tensor reads happen after loading (join, token point reads); a malformed `.pt`
 * found then gets the same policy, applied to the file the error names.
 */
export async function guardPtReads<T>(fsys: RunFs, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof PtFormatError) {
      return guardedLoad(fsys, fsys.relOf(err.path), () => Promise.reject(err));
    }
    throw err;
  }
}
