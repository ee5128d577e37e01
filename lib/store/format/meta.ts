/**
 * `meta.json` (docs/formats.md §2.5/§4.1): the run header, `json.dumps(indent=1)` layout,
 * no trailing newline, exactly the keys `run_name`, `start_ts`, `args`, `schema_version` in
 * that order. Both directions live here: the byte-exact serializer (the writer rewrites
 * the file atomically at every start, lib/store/writer/meta-file.ts) and the tolerant
 * readers — one that keeps Python's value tags (the writer keeps args across restarts)
 * and one with plain values (MetricStore, the run scan, the run list's config columns).
 */
import { PyFloat, dumpPyIndent1, parseLenientJson, parsePyJson, pyFloat } from "./python-json";
import type { PyValue } from "./python-json";

export { META_FILE } from "./streams";

/** The header as the writer holds it. */
export interface RunMeta {
  run_name: string;
  /** Epoch seconds (always written as a float). */
  start_ts: number;
  /** Curated CLI args; free-form values (see python-json.ts for float tagging). */
  args: ReadonlyMap<string, PyValue> | { readonly [key: string]: PyValue };
}

/** The header as readers see it: whatever fields are usable, the rest null / empty. */
export interface RunHeader {
  run_name: string | null;
  start_ts: number | null;
  args: Record<string, unknown>;
  schema_version: number;
}

export function serializeMeta(meta: RunMeta): string {
  return dumpPyIndent1(
    new Map<string, PyValue>([
      ["run_name", meta.run_name],
      ["start_ts", pyFloat(meta.start_ts)],
      ["args", meta.args],
      ["schema_version", 1],
    ]),
  );
}

/** A previous header with its value tags, or undefined when the text is not a usable one. */
export function parseMetaPy(text: string): RunMeta | undefined {
  try {
    const v = parsePyJson(text);
    if (v === null || typeof v !== "object" || v instanceof Map || Array.isArray(v)) return undefined;
    const o = v as { readonly [key: string]: PyValue };
    const args = o.args;
    const startTs = o.start_ts;
    if (typeof o.run_name !== "string") return undefined;
    if (args === null || typeof args !== "object" || Array.isArray(args) || args instanceof PyFloat) return undefined;
    const start = startTs instanceof PyFloat ? startTs.value : typeof startTs === "number" ? startTs : NaN;
    return { run_name: o.run_name, start_ts: start, args: args as RunMeta["args"] };
  } catch {
    return undefined;
  }
}

/**
 * The header with plain values (NaN / ±Infinity in args accepted, strings never rewritten),
 * or null when the text does not parse to an object (a half-written file).
 */
export function parseRunHeader(text: string): RunHeader | null {
  let raw: unknown;
  try {
    raw = parseLenientJson(text);
  } catch {
    return null;
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return null;
  const o = raw as Record<string, unknown>;
  const args = o.args && typeof o.args === "object" && !Array.isArray(o.args) ? (o.args as Record<string, unknown>) : {};
  return {
    run_name: typeof o.run_name === "string" ? o.run_name : null,
    start_ts: typeof o.start_ts === "number" ? o.start_ts : null,
    args,
    schema_version: typeof o.schema_version === "number" ? o.schema_version : 1,
  };
}
