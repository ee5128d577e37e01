/**
 * Config delta and verdict of a comparison (docs/api.md "GET /api/compare"): the
 * `meta.json` args snapshots (docs/formats.md, run header) flattened to dotted paths and
 * compared key by key against the baseline (the first run).
 */

/** A flattened args value: the JSON value of a leaf (arrays and empty objects are leaves). */
export type ArgValue = unknown;

/**
 * `{a: {b: 1, c: [2]}}` → `{"a.b": 1, "a.c": [2]}`. Nested plain objects recurse; arrays,
 * scalars, null and empty objects are leaves. Keys keep their order of appearance.
 */
export function flattenArgs(args: Record<string, unknown>, prefix = ""): Map<string, ArgValue> {
  const out = new Map<string, ArgValue>();
  const walk = (v: unknown, key: string) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 0) {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) walk(x, key ? `${key}.${k}` : k);
    } else out.set(key, v);
  };
  for (const [k, v] of Object.entries(args)) walk(v, prefix ? `${prefix}.${k}` : k);
  return out;
}

/** Canonical text of a leaf, so `[1, 2]` equals `[1, 2]` and key order inside objects does not matter. */
export function canonical(v: unknown): string {
  if (v === undefined) return "\u0000absent";
  if (typeof v === "number" && !Number.isFinite(v)) return String(v);
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  const keys = Object.keys(v).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(",")}}`;
}

/**
 * Keys that name a run rather than configure it (each run of an ablation has its own):
 * they appear in the config delta, flagged `identity`, but never count for the verdict.
 */
export const IDENTITY_KEYS: readonly string[] = [
  "wandb_run_id",
  "wandb_group",
  "wandb_run_name",
  "wandb_name",
  "wandb_dir",
  "run_name",
  "save",
  "load",
  "dump_details",
];

export function isIdentityKey(key: string): boolean {
  return IDENTITY_KEYS.includes(key);
}

export interface ConfigDeltaRow {
  key: string;
  /** `values[i]` for `runs[i]`; null when the run's args lack the key (see `absent`). */
  values: ArgValue[];
  /** `absent[i]`: the key is not in run i's args at all. */
  absent: boolean[];
  /** The key names the run (IDENTITY_KEYS): shown, not counted for the verdict. */
  identity: boolean;
}

export type VerdictKind = "single" | "multiple" | "identical" | "unknown";
export interface Verdict {
  kind: VerdictKind;
  /** single: the one differing key; multiple: every differing key; otherwise []. */
  keys: string[];
  /** Runs (by index) without an args snapshot — the reason for `unknown`. */
  missing_args: number[];
  message: string;
}

/** Args of each run (null = no snapshot: no meta.json, or an empty `args`). */
export function configDelta(args: readonly (Record<string, unknown> | null)[]): ConfigDeltaRow[] {
  const flat = args.map((a) => (a ? flattenArgs(a) : new Map<string, ArgValue>()));
  const keys: string[] = [];
  const seen = new Set<string>();
  for (const m of flat)
    for (const k of m.keys())
      if (!seen.has(k)) {
        seen.add(k);
        keys.push(k);
      }
  keys.sort();
  const rows: ConfigDeltaRow[] = [];
  for (const key of keys) {
    const texts = flat.map((m) => canonical(m.get(key)));
    if (texts.every((t) => t === texts[0])) continue;
    rows.push({
      key,
      values: flat.map((m) => (m.has(key) ? m.get(key) : null)),
      absent: flat.map((m) => !m.has(key)),
      identity: isIdentityKey(key),
    });
  }
  return rows;
}

export function hasArgs(args: Record<string, unknown> | null | undefined): args is Record<string, unknown> {
  return !!args && Object.keys(args).length > 0;
}

/**
 * `unknown` whenever any run lacks args (never implying the runs matched), else by the
 * number of differing non-identity keys: 0 identical, 1 single (named), more multiple.
 */
export function verdictOf(args: readonly (Record<string, unknown> | null)[], delta: readonly ConfigDeltaRow[]): Verdict {
  const missing = args.flatMap((a, i) => (hasArgs(a) ? [] : [i]));
  if (missing.length)
    return {
      kind: "unknown",
      keys: [],
      missing_args: missing,
      message: `unknown: ${missing.length === 1 ? "one run has" : `${missing.length} runs have`} no args snapshot (meta.json args), so the configs cannot be compared`,
    };
  const keys = delta.filter((r) => !r.identity).map((r) => r.key);
  if (keys.length === 0) return { kind: "identical", keys: [], missing_args: [], message: "identical: no config key differs" };
  if (keys.length === 1) return { kind: "single", keys, missing_args: [], message: `single: only '${keys[0]}' differs` };
  return { kind: "multiple", keys, missing_args: [], message: `multiple: ${keys.length} config keys differ` };
}
