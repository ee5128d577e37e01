/**
 * `index/phases/{YYYYMMDD_HH}.json` (docs/formats.md §4.16, rlboard): what a reader needs to
 * know of a phase hour without parsing it — its row count, its stamp range, its OPEN markers
 * that no row of the hour closes, and its closed rows that can close a marker of another
 * hour. The writer puts one beside each phase hour it has finished with (its facts are
 * computed by the reader's own parse, lib/store/telemetry/phase-index.ts); a reader uses one
 * only while the hour file still has the size, the modification time and the first and last
 * bytes it was made from.
 * Nothing requires it: a run without it (a miles run) is read by parsing every phase hour.
 */
import { z } from "zod";

/** Folder of the phase hour index, relative to the dashboard dir. */
export const PHASE_INDEX_DIR = "index/phases";
/** Bytes of the hour file kept, base64, from its start and from just before `size` (the fingerprint). */
export const PHASE_INDEX_FINGERPRINT_BYTES = 64;

/** The index file of hour `key`, relative to the dashboard dir. */
export function phaseIndexRel(key: string): string {
  return `${PHASE_INDEX_DIR}/${key}.json`;
}

const finite = z.number().refine(Number.isFinite);

/**
 * What a phase hour holds for the OPEN-marker resolution (docs/formats.md §4.3.1) and for
 * a window's choice of hours: `rows` parsed rows; `minT`/`maxT` the smallest / largest stamp
 * (t0 of every row, t1 of closed rows; null when the hour has none); `open` the markers
 * no closed row of the hour matches, as [row index, t0, node, rank, name]; `closes` the
 * closed rows whose t0 lies outside the hour, as [t0, node, rank, name] (only those can close
 * a marker of another hour when every marker lies in its own hour). `exact` is false when
 * the facts cannot stand in for the rows: a marker of `open` outside its hour, or with a t0 or
 * rank that is not finite (JSON cannot carry it).
 */
export const PhaseHourFactsSchema = z.object({
  rows: z.number().int().nonnegative(),
  minT: finite.nullable(),
  maxT: finite.nullable(),
  open: z.array(z.tuple([z.number().int().nonnegative(), finite, z.string(), finite, z.string()])),
  closes: z.array(z.tuple([finite, z.string(), finite, z.string()])),
  exact: z.boolean(),
});
export type PhaseHourFacts = z.infer<typeof PhaseHourFactsSchema>;

export const PhaseIndexFileSchema = z.object({
  v: z.literal(1),
  /** The hour file's size when it was indexed: the facts describe `[0, size)`. */
  size: z.number().int().nonnegative(),
  /** Its modification time then (ms, as `stat` gives it): an edit in place changes it. */
  mtimeMs: finite,
  /** base64 of its first and of its last PHASE_INDEX_FINGERPRINT_BYTES bytes before `size`. */
  head: z.string(),
  tail: z.string(),
  facts: PhaseHourFactsSchema,
});
export type PhaseIndexFile = z.infer<typeof PhaseIndexFileSchema>;

/**
 * `json` as an index file, or null when the schema rejects it. A day's 24 index files hold
 * ~60 k tuples, and zod took ~50 ms of a fresh server's first fleet request for them: a
 * plain check answers first, true only where the schema accepts the value unchanged (exact
 * key sets, finite numbers, five- and four-tuples), and anything else is left to zod
 * (phase-index.test.ts checks that the two agree).
 */
export function parsePhaseIndexFile(json: unknown): PhaseIndexFile | null {
  if (isIndexFile(json)) return json;
  const r = PhaseIndexFileSchema.safeParse(json);
  return r.success ? r.data : null;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown, keys: readonly string[]): v is Obj => {
  if (typeof v !== "object" || v === null || Object.getPrototypeOf(v) !== Object.prototype) return false;
  let n = 0;
  for (const k in v) if (Object.hasOwn(v, k)) n++;
  return n === keys.length && keys.every((k) => Object.hasOwn(v, k));
};
const isFinite_ = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isBound = (v: unknown) => v === null || isFinite_(v);

function isIndexFile(j: unknown): j is PhaseIndexFile {
  if (!isObj(j, ["v", "size", "mtimeMs", "head", "tail", "facts"])) return false;
  if (j.v !== 1 || !isCount(j.size) || !isFinite_(j.mtimeMs) || typeof j.head !== "string" || typeof j.tail !== "string") return false;
  const f = j.facts;
  if (!isObj(f, ["rows", "minT", "maxT", "open", "closes", "exact"])) return false;
  if (!isCount(f.rows) || !isBound(f.minT) || !isBound(f.maxT) || typeof f.exact !== "boolean" || !Array.isArray(f.open) || !Array.isArray(f.closes)) return false;
  for (const o of f.open as unknown[]) {
    if (!Array.isArray(o) || o.length !== 5 || !isCount(o[0]) || !isFinite_(o[1]) || typeof o[2] !== "string" || !isFinite_(o[3]) || typeof o[4] !== "string") return false;
  }
  for (const c of f.closes as unknown[]) {
    if (!Array.isArray(c) || c.length !== 4 || !isFinite_(c[0]) || typeof c[1] !== "string" || !isFinite_(c[2]) || typeof c[3] !== "string") return false;
  }
  return true;
}
