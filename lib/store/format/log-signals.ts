/**
 * Forwarded log-signal records (docs/formats.md §4.13): `dashboard/log_signals/{YYYYMMDD_HH}.jsonl`,
 * one line per signal that got new matching lines on a node since its previous record.
 * Written by the collector's `--logs GLOB` tailer (collector/sources/log-tailer.ts), read by
 * the run status (lib/health/index.ts); both use this schema, the line codec and the
 * partition naming below, and nothing else knows the layout.
 */
import { z } from "zod";
import { parseJsonlText, serializeJsonl } from "./jsonl";
import { hourKey } from "./partition";
import { DASHBOARD_DIR, LOG_SIGNALS_STREAM } from "./streams";

/** The stream's directory relative to the run directory. */
export const LOG_SIGNALS_DIR = `${DASHBOARD_DIR}/${LOG_SIGNALS_STREAM}`;

export const LogSignalSampleLine = z.object({ file: z.string(), line: z.number().int().min(0), text: z.string() });

export const LogSignalRecord = z.object({
  /** when the tailer appended the record (unix seconds) */
  ts: z.number().finite(),
  node: z.string(),
  signal: z.string(),
  /** new matching lines since the previous record of this node */
  count: z.number().int().min(0),
  first_ts: z.number().finite(),
  last_ts: z.number().finite(),
  /** the newest ≤ 3 of those lines */
  samples: z.array(LogSignalSampleLine).max(16),
});
export type LogSignalRecord = z.output<typeof LogSignalRecord>;

/** Partition file name of a record appended at `ts` (inside LOG_SIGNALS_DIR). */
export function logSignalsFileName(ts: number): string {
  return `${hourKey(ts)}.jsonl`;
}

export function serializeLogSignalRecords(records: readonly LogSignalRecord[]): string {
  return serializeJsonl(records);
}

/** The records of one partition file's text (lib/store/format/jsonl.ts rules). */
export function parseLogSignalText(text: string): LogSignalRecord[] {
  return parseJsonlText(text, LogSignalRecord).records;
}
