/**
 * A parse worker's entry (parse-pool.ts): each message is one `RangeJob`; the reply holds
 * the part's columns, their buffers transferred rather than copied.
 */
import { parentPort } from "node:worker_threads";
import { parseRangeJob, type RangeJob } from "@/lib/store/telemetry/read-range";

const port = parentPort;
if (!port) throw new Error("parse-worker.ts runs as a worker thread (parse-pool.ts starts it)");

port.on("message", (job: RangeJob) => {
  parseRangeJob(job).then(
    (result) => {
      const p = result.part;
      const buffers = new Set<ArrayBuffer>();
      for (const a of [p.gTs, p.gStart, p.lane, p.util, p.mem, p.power]) buffers.add(a.buffer as ArrayBuffer);
      port.postMessage({ ok: true, result }, [...buffers]);
    },
    (err: unknown) => port.postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) }),
  );
});
