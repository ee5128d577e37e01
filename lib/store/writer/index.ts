/**
 * Write side of the run-directory store: everything that produces bytes under
 * `{dump}/dashboard/` in the exact format of docs/formats.md, which lives in
 * lib/store/format (record schemas, partition key, Python JSON). Plain Node, no Next.
 *
 * Typical use (demo generator, bench, collector):
 *
 *   const w = await RunWriter.open({ dashDir: join(dump, "dashboard"), meta: { run_name, start_ts } });
 *   w.add("phases", [{ name: "actor_train", t0, t1, node, gpus: [0], rank: 0, role: "train" }]);
 *   w.add("metrics", [{ ts, step_key: "rollout/step", step: 3, metrics: { "perf/step_time": pyFloat(95) } }]);
 *   await w.flush();
 */
export { LINE_SERIALIZERS, serializeRecord } from "./serialize";
export { MAX_WRITE_CHARS, PartitionedAppender, prepareRecord } from "./partitioned-appender";
export type { AppendResult, AppenderOptions, FileError, PreparedResult } from "./partitioned-appender";
export { loadLaneCatalog, readLaneCatalog, rebuildLaneCatalog, writeLaneCatalog } from "./lane-catalog";
export { readMeta, writeMeta } from "./meta-file";
export { RunWriter, DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_MAX_BUFFERED_PER_STREAM, DEFAULT_MAX_RECORD_BYTES, consoleWriterLog } from "./run-writer";
export type { AddResult, FlushReport, RunWriterOptions, StreamStats, WriterLog } from "./run-writer";
export { nodeWriterFs } from "./writer-fs";
export { RequestsAppender } from "./requests";
export type { WriterFileHandle, WriterFs } from "./writer-fs";
