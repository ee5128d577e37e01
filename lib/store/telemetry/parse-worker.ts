/**
 * A parse worker's entry (parse-pool.ts): each message is one `RangeJob`; the reply holds
 * the part's columns, their buffers transferred rather than copied.
 */
import { parentPort } from "node:worker_threads";
import { parseRangeJob, partBuffers, type RangeJob } from "@/lib/store/telemetry/read-range";

const port = parentPort;
if (!port) throw new Error("parse-worker.ts runs as a worker thread (parse-pool.ts starts it)");

port.on("message", (job: RangeJob) => {
  parseRangeJob(job).then(
    (result) => port.postMessage({ ok: true, result }, partBuffers(result)),
    (err: unknown) => port.postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) }),
  );
});
