/**
 * Allocation-free pre-checks for the high-volume streams.
 *
 * Contract: `FAST_CHECKS[stream](r)` returns true only for a record that the
 * zod schema in records.ts accepts AND whose zod output equals the input
 * (plain numbers in fixed fields, exact key set; `PyFloat` tags only inside
 * metric dicts, where zod passes them through). Anything else — including
 * valid-but-unusual input such as `3.0` for an int field — returns false and
 * goes through zod, which stays the single authority for what is valid and
 * for error messages. Zod's per-field parse allocations were ~40 % of the
 * collector's CPU at 50k records/s; this keeps the common case cheap.
 * fast-validate.test.ts checks that both accept and reject the same table of records.
 */
import { PyFloat } from "./python-json";
import { GPU_VALUE_RANGE, MAX_TS, OPEN_T1, PHASE_ROLES, TRAJECTORY_KINDS as KINDS } from "./records";
import type { StreamName } from "./streams";

type Rec = Record<string, unknown>;

const isTs = (v: unknown): boolean => typeof v === "number" && v >= 0 && v < MAX_TS;
const isInt = (v: unknown): boolean => Number.isSafeInteger(v);
const isStr = (v: unknown): boolean => typeof v === "string";
const inRange = (v: unknown, [lo, hi]: readonly [number, number]): boolean => isInt(v) && (v as number) >= lo && (v as number) <= hi;

function isDict(v: unknown): v is Rec {
  return typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype;
}

/** A plain object with exactly `n` own enumerable keys. */
function hasKeys(r: unknown, n: number): r is Rec {
  if (!isDict(r)) return false;
  let count = 0;
  for (const k in r) if (Object.hasOwn(r, k)) count++;
  return count === n;
}

function isIntArray(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (const x of v) if (!Number.isSafeInteger(x)) return false;
  return true;
}

function allValues(d: Rec, ok: (v: unknown) => boolean): boolean {
  for (const k in d) if (!ok(d[k])) return false;
  return true;
}

// PyFloat tags pass through zod unchanged, so they are fine here too.
const metricValue = (v: unknown): boolean => {
  const t = typeof v;
  return t === "number" || t === "string" || t === "boolean" || v instanceof PyFloat;
};

const TRAJECTORY_KINDS: ReadonlySet<unknown> = new Set(KINDS);
const ROLES: ReadonlySet<unknown> = new Set(PHASE_ROLES);

export const FAST_CHECKS: Partial<Record<StreamName, (r: unknown) => boolean>> = {
  gpu_util: (r) =>
    hasKeys(r, 6) &&
    isTs(r.ts) &&
    isStr(r.node) &&
    isInt(r.gpu) &&
    (r.gpu as number) >= 0 &&
    inRange(r.util, GPU_VALUE_RANGE.util) &&
    inRange(r.mem_mb, GPU_VALUE_RANGE.mem_mb) &&
    inRange(r.power_w, GPU_VALUE_RANGE.power_w),
  gpu_processes: (r) =>
    hasKeys(r, 6) &&
    isTs(r.ts) &&
    isStr(r.node) &&
    isInt(r.gpu) &&
    (r.gpu as number) >= 0 &&
    isInt(r.pid) &&
    isStr(r.name) &&
    isInt(r.mem_mb),
  engine_series: (r) =>
    hasKeys(r, 5) &&
    isTs(r.ts) &&
    isStr(r.addr) &&
    isStr(r.metric) &&
    isDict(r.labels) &&
    allValues(r.labels, isStr) &&
    typeof r.value === "number",
  phases: (r) =>
    hasKeys(r, 7) &&
    isStr(r.name) &&
    isTs(r.t0) &&
    (r.t1 === OPEN_T1 || isTs(r.t1)) &&
    isStr(r.node) &&
    isIntArray(r.gpus) &&
    isInt(r.rank) &&
    ROLES.has(r.role),
  trajectories: (r) =>
    hasKeys(r, 7) &&
    isTs(r.ts) &&
    TRAJECTORY_KINDS.has(r.kind) &&
    isInt(r.sample_index) &&
    isInt(r.group_index) &&
    isInt(r.turn) &&
    isStr(r.weight_version) &&
    isStr(r.detail),
  metrics: (r) =>
    hasKeys(r, 4) &&
    isTs(r.ts) &&
    (r.step_key === null || isStr(r.step_key)) &&
    (r.step === null || isInt(r.step)) &&
    isDict(r.metrics) &&
    allValues(r.metrics, metricValue),
};
