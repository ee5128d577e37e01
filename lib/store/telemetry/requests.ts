/**
 * Reader of the per-request SGLang timing stream (docs/formats.md §4.14,
 * `dashboard/requests/{rollout_id}.jsonl`) through the run's confined fs. A step's records
 * are cached while its file keeps its size and mtime (a live step's file grows: it is
 * re-read, complete lines only).
 */
import { parseRequestsFileName, parseRequestText, REQUESTS_DIR, requestsFileName, type RequestRecord } from "@/lib/store/format";
import type { RunFs } from "@/lib/store/safe-fs";

const cache = new WeakMap<RunFs, Map<string, { stamp: string; records: RequestRecord[] }>>();

/** Rollout ids with a requests file, ascending ({train, eval}); empty when the stream is absent. */
export async function listRequestSteps(fs: RunFs): Promise<{ train: number[]; eval: number[] }> {
  let names: string[];
  try {
    names = await fs.readdir(REQUESTS_DIR);
  } catch {
    return { train: [], eval: [] };
  }
  const train: number[] = [];
  const evals: number[] = [];
  for (const n of names) {
    const p = parseRequestsFileName(n);
    if (p) (p.evaluation ? evals : train).push(p.rolloutId);
  }
  return { train: train.sort((a, b) => a - b), eval: evals.sort((a, b) => a - b) };
}

/** The records of one rollout, in file order ([] when it has no file). */
export async function readStepRequests(fs: RunFs, rolloutId: number, evaluation: boolean): Promise<RequestRecord[]> {
  const rel = `${REQUESTS_DIR}/${requestsFileName(rolloutId, evaluation)}`;
  const st = await fs.statOrNull(rel);
  if (!st) return [];
  const stamp = `${st.size}:${st.mtimeMs}`;
  let perFs = cache.get(fs);
  if (!perFs) cache.set(fs, (perFs = new Map<string, { stamp: string; records: RequestRecord[] }>()));
  const hit = perFs.get(rel);
  if (hit && hit.stamp === stamp) return hit.records;
  const { records } = parseRequestText((await fs.readFile(rel)).toString("utf8"));
  perFs.set(rel, { stamp, records });
  return records;
}
