/**
 * Per-sample request traces of a rollout dump (slime's `Sample.trace`, docs/formats.md
 * "sample trace"): the dump's samples reduced to their ids, a few facts and the trace as
 * plain JSON (dicts → objects, ints → numbers). The per-token lists are only counted, as
 * for the summary. Values derived from a step's traces (the `perf/*` aggregates) are
 * cached per reader while the dump file keeps its size and mtime, so a metrics request
 * over many steps reads each file once; the traces themselves stay in memory for the
 * two most recent steps only.
 */
import { READ_NOFOLLOW } from "@/lib/store/safe-fs";
import type { DumpReader } from "./reader";
import { guardedLoad, rolloutRel, stampOrNull, type FileStamp } from "./files";
import { Lru } from "./lru";
import { openRolloutDump } from "./pt-source";
import { pyGet, pyInt, pyNumber } from "./pyobj";

export interface SampleTrace {
  sample_index: number | null;
  group_index: number | null;
  status: string | null;
  response_length: number | null;
  /** `prefix_cache_info` (cached / total prompt tokens), when dumped. */
  cached_tokens: number | null;
  total_prompt_tokens: number | null;
  /** The sample's `trace` as plain JSON, or null when it carries none. */
  trace: unknown;
}

export interface StepTraces {
  rollout_id: number;
  evaluation: boolean;
  /** The dump file, relative to the run. */
  file: string;
  /** True when at least one sample carries a trace. */
  has_traces: boolean;
  samples: SampleTrace[];
}

const SKIPPED_LISTS: ReadonlySet<string> = new Set(["tokens", "loss_mask", "rollout_log_probs"]);
const TRACE_LRU = 2;
const DIGEST_LRU = 4096;

function toPlain(v: unknown): unknown {
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), toPlain(x)]));
  if (Array.isArray(v)) return v.map(toPlain);
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "object" && v !== null) {
    const proto: unknown = Object.getPrototypeOf(v);
    if (proto === Object.prototype || proto === null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toPlain(x)]));
    return null;
  }
  return v;
}

interface Caches {
  traces: Lru<string, Promise<StepTraces>>;
  digests: Lru<string, Promise<unknown>>;
}
const perReader = new WeakMap<DumpReader, Caches>();

function caches(reader: DumpReader): Caches {
  let c = perReader.get(reader);
  if (!c) perReader.set(reader, (c = { traces: new Lru(TRACE_LRU), digests: new Lru(DIGEST_LRU) }));
  return c;
}

const stampKey = (rel: string, s: FileStamp) => `${rel}\u0000${s.size}:${s.mtimeNs}`;

async function load(reader: DumpReader, rolloutId: number, evaluation: boolean, rel: string): Promise<StepTraces> {
  const { rolloutId: storedId, samples } = await guardedLoad(reader.fs, rel, async () => {
    const dump = await openRolloutDump(await reader.fs.resolve(rel), { openFlags: READ_NOFOLLOW, skipListItems: SKIPPED_LISTS });
    try {
      return { rolloutId: dump.rolloutId, samples: dump.samples };
    } finally {
      await dump.close();
    }
  });
  if (pyInt(storedId) !== rolloutId) throw new Error(`${rel}: rollout_id ${String(storedId)} != ${rolloutId}`);
  let hasTraces = false;
  const out: SampleTrace[] = samples.map((raw) => {
    const status = pyGet(raw, "status");
    const prefix = pyGet(raw, "prefix_cache_info");
    const trace = toPlain(pyGet(raw, "trace") ?? null);
    if (trace !== null) hasTraces = true;
    return {
      sample_index: pyInt(pyGet(raw, "index")),
      group_index: pyInt(pyGet(raw, "group_index")),
      status: typeof status === "string" ? status : typeof pyGet(status, "_value_") === "string" ? (pyGet(status, "_value_") as string) : null,
      response_length: pyInt(pyGet(raw, "response_length")),
      cached_tokens: pyNumber(pyGet(prefix, "cached_tokens")),
      total_prompt_tokens: pyNumber(pyGet(prefix, "total_prompt_tokens")),
      trace,
    };
  });
  return { rollout_id: rolloutId, evaluation, file: rel, has_traces: hasTraces, samples: out };
}

/** The step's per-sample traces (404 when the dump is missing; 503/500 as for summaries). */
export async function stepTraces(reader: DumpReader, rolloutId: number, evaluation: boolean): Promise<StepTraces> {
  const rel = rolloutRel(rolloutId, evaluation);
  const st = await stampOrNull(reader.fs, rel);
  const key = st ? stampKey(rel, st) : rel;
  const c = caches(reader).traces;
  let p = c.get(key);
  if (!p) {
    p = load(reader, rolloutId, evaluation, rel);
    p.catch(() => c.delete(key));
    c.set(key, p);
  }
  return p;
}

/**
 * `derive(traces)` for a train step, computed once per dump file version and `name`
 * (a derived value must be small: thousands of them are kept).
 */
export async function traceDigest<T>(reader: DumpReader, rolloutId: number, name: string, derive: (t: StepTraces) => T): Promise<T> {
  const rel = rolloutRel(rolloutId, false);
  const st = await stampOrNull(reader.fs, rel);
  const key = `${name}\u0000${st ? stampKey(rel, st) : rel}`;
  const c = caches(reader).digests;
  let p = c.get(key) as Promise<T> | undefined;
  if (!p) {
    p = stepTraces(reader, rolloutId, false).then(derive);
    p.catch(() => c.delete(key));
    c.set(key, p);
  }
  return p;
}
