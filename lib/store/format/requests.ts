/**
 * Per-request SGLang timing (docs/formats.md §4.14): `dashboard/requests/{rollout_id}.jsonl`
 * (`eval_{rollout_id}.jsonl` for eval rollouts), one line per SGLang call of that rollout,
 * appended as the calls finish. Written by the collector's `POST /v1/requests`
 * (collector/ingest.ts → lib/store/writer/requests.ts, fed by the Python client's
 * `record_request`), read by lib/store/telemetry/requests.ts for the `perf/*` metrics and
 * the trace timeline of miles runs. A folder the Python original does not know: it ignores
 * it. Pure: schema, names and the line codec.
 */
import { z } from "zod";
import { parseJsonlText, serializeJsonl } from "./jsonl";
import { DASHBOARD_DIR, REQUESTS_STREAM } from "./streams";

/** The stream's directory relative to the run directory. */
export const REQUESTS_DIR = `${DASHBOARD_DIR}/${REQUESTS_STREAM}`;

/** A `meta_info` value kept as SGLang returned it: scalars and small flat objects only. */
const MetaValue = z.union([z.number(), z.string(), z.boolean(), z.null(), z.record(z.string(), z.union([z.number(), z.string(), z.boolean(), z.null()]))]);

export const RequestRecord = z
  .object({
    /** when the call finished (epoch seconds) */
    ts: z.number().finite(),
    rollout_id: z.number().int().min(0),
    evaluation: z.boolean().default(false),
    sample_index: z.number().int().nullable(),
    group_index: z.number().int().nullable(),
    /** the engine (or router) URL that answered */
    engine: z.string().max(512).nullable(),
    /** when the call was sent (epoch seconds), if known */
    start_ts: z.number().finite().nullable().default(null),
    /** SGLang's `meta_info` timing and PD fields as returned (`e2e_latency`, `queue_time`, `prompt_tokens`, `pd_*`, …) */
    meta_info: z.record(z.string(), MetaValue),
  })
  .strict();
export type RequestRecord = z.output<typeof RequestRecord>;
export type RequestRecordInput = z.input<typeof RequestRecord>;

/** The file (inside REQUESTS_DIR) of a rollout's records. */
export function requestsFileName(rolloutId: number, evaluation: boolean): string {
  return `${evaluation ? "eval_" : ""}${rolloutId}.jsonl`;
}

/** The rollout of a file name in REQUESTS_DIR, or null for any other name. */
export function parseRequestsFileName(name: string): { rolloutId: number; evaluation: boolean } | null {
  const m = /^(eval_)?(\d+)\.jsonl$/.exec(name);
  return m ? { rolloutId: Number(m[2]), evaluation: m[1] !== undefined } : null;
}

export function serializeRequestRecords(records: readonly RequestRecord[]): string {
  return serializeJsonl(records);
}

/** The records of one file's text (lib/store/format/jsonl.ts rules; bad lines counted). */
export function parseRequestText(text: string): { records: RequestRecord[]; bad: number } {
  return parseJsonlText(text, RequestRecord);
}
