/**
 * The collector's HTTP surface (node:http, no framework):
 *
 *   POST /v1/{stream}   body {"records":[...]} — records exactly as on disk
 *                       (docs/formats.md §4). Streams: phases, metrics, topology,
 *                       trajectories, gpu (= gpu_util), engine (=
 *                       engine_series), gpu_processes, data_buffer; the full
 *                       stream names are accepted as well.
 *   POST /v1/meta       {"args": {...}, "run_name"?: "..."} rewrites meta.json
 *   POST /v1/router     {"url": "http://…", "mode"?: "router"|"direct"}
 *                       re-points the sglang scraper (sglang-scraper.ts)
 *   POST /v1/procs      {"pids": [int, …], "role"?: "trainer"} registers this
 *                       node's job processes for host telemetry (host-sampler.ts;
 *                       409 without --host-telemetry, at most 1024 pids a call)
 *   GET  /health        {"ok": true, ...} (503 + ok:false while writes fail)
 *   GET  /metrics       Prometheus text (self-metrics.ts)
 *
 * Error policy: every error body is {"error":{"code","message"}}. Invalid
 * records do not poison a batch: the valid ones are kept, and the error names
 * the first bad record's index and field plus `accepted`/`rejected` counts:
 *   - 400 for a record the schema refuses (`records[3].ts: expected number`)
 *     or whose timestamp (`ts`; phases `t0` and a closed `t1`) is more than
 *     `maxClockSkewS` (default 1 day, `--max-clock-skew`) from the
 *     collector's clock — a year-9999 stamp would otherwise open the
 *     timeline on an empty far-future hour (docs/collector.md "Failure policy");
 *   - 413 for a record whose line would exceed the per-record limit
 *     (`--max-record-mb`, checked by RunWriter.add).
 * The status is the one of the lowest-index bad record. Bodies over
 * `--max-body-mb` get 413 too (the rest of the upload is drained, not
 * buffered). Unknown paths 404, wrong methods 405.
 *
 * Bodies are parsed as Python JSON: `NaN`/`Infinity` are accepted, and for
 * metrics and meta the float-ness of integral numbers (`95.0`) and dict key
 * order survive (lib/store/format/python-json.ts). Other streams go through the native
 * `JSON.parse` first because their float fields are fixed by the schema.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";
import {
  FAST_CHECKS,
  OPEN_T1,
  PyFloat,
  RequestRecord,
  STREAM_SCHEMAS,
  parsePyJson,
  type AnyRecord,
  type PhaseEvent,
  type PyValue,
  type StreamName,
} from "@/lib/store/format";
import type { Logger } from "./log";
import type { CollectorMetrics } from "./self-metrics";

export const ROUTE_STREAMS: Readonly<Record<string, StreamName>> = {
  phases: "phases",
  metrics: "metrics",
  topology: "topology",
  trajectories: "trajectories",
  gpu: "gpu_util",
  gpu_util: "gpu_util",
  engine: "engine_series",
  engine_series: "engine_series",
  gpu_processes: "gpu_processes",
  data_buffer: "data_buffer",
};

export interface MetaUpdate {
  run_name?: string;
  args: ReadonlyMap<string, PyValue> | { readonly [key: string]: PyValue };
}

export interface RouterUpdate {
  url: string;
  mode?: "router" | "direct";
}

export interface ProcsUpdate {
  pids: number[];
  role?: string;
}

/** Largest pid Linux hands out (pid_max ≤ 2^22). */
const PID_MAX = 4_194_304;
const MAX_PIDS_PER_CALL = 1024;
const ROLE_RE = /^[A-Za-z][A-Za-z0-9_.-]{0,31}$/;

export interface IngestDeps {
  maxBodyBytes: number;
  /** Per-record limit enforced by `accept` (for the 413 message). */
  maxRecordBytes: number;
  /** Allowed distance of record timestamps from `now()`, seconds; 0 = no check. */
  maxClockSkewS: number;
  /** The collector's clock, epoch seconds. */
  now(): number;
  /** Takes validated records of one stream; answers the ones refused for their size (index into `records`). */
  accept(stream: StreamName, records: AnyRecord[]): { refused: readonly { index: number; bytes: number }[] };
  setMeta(update: MetaUpdate): Promise<void>;
  /** Re-point the scraper; answers the scraper's state after the update. */
  setRouter(update: RouterUpdate): { mode: string; router: string | undefined; changed: boolean };
  /**
   * Register pids for host telemetry; absent without --host-telemetry (409). Throws an
   * Error whose message is the 400 answer when the registry is full.
   */
  registerProcs?(update: ProcsUpdate): { registered: number[]; missing: number[] };
  /** Append per-request SGLang timing records (`POST /v1/requests`, docs/formats.md §4.14); absent → 409. */
  recordRequests?(records: RequestRecord[]): Promise<void>;
  health(): { ok: boolean } & Record<string, unknown>;
  metrics: CollectorMetrics;
  renderMetrics(): string;
  log: Logger;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, e: HttpError, extra: Record<string, unknown> = {}): void {
  send(res, e.status, { error: { code: e.code, message: e.message }, ...extra });
}

/** Read the body up to `limit` bytes; beyond it keep draining (no buffering) and fail with 413. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = Number.isFinite(declared) && declared > limit;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > limit) tooLarge = true;
      if (tooLarge) {
        chunks.length = 0;
        // A client that keeps streaming far past the limit is cut off.
        if (size > limit * 4 + (1 << 20)) req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => {
      if (tooLarge) reject(new HttpError(413, "payload_too_large", `request body exceeds ${limit} bytes (--max-body-mb)`));
      else resolve(Buffer.concat(chunks, size));
    });
    req.on("error", reject);
  });
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
}

/** `records[3].ts: expected number, received string` */
export function describeIssue(index: number, error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return `records[${index}]: invalid record`;
  const msg = issue.message.replace(/^Invalid input: /, "");
  return `records[${index}]${formatPath(issue.path)}: ${msg}`;
}

/** `1 day`, `2 days`, `3600 s` */
function formatSkew(s: number): string {
  if (s % 86400 === 0) return s === 86400 ? "1 day" : `${s / 86400} days`;
  return `${s} s`;
}

/**
 * The first timestamp of a valid record that lies more than `skew` seconds
 * from `now`, as `[field, value]` (an OPEN phase's `t1` of -1.0 is no time).
 */
function farTimestamp(stream: StreamName, r: AnyRecord, now: number, skew: number): [string, number] | undefined {
  const far = (t: number): boolean => t < now - skew || t > now + skew;
  if (stream === "phases") {
    const p = r as PhaseEvent;
    if (far(p.t0)) return ["t0", p.t0];
    if (p.t1 !== OPEN_T1 && far(p.t1)) return ["t1", p.t1];
    return undefined;
  }
  const ts = (r as { ts: number }).ts;
  return far(ts) ? ["ts", ts] : undefined;
}

function parseBody(text: string, pythonTypes: boolean): PyValue {
  if (!pythonTypes) {
    try {
      return JSON.parse(text) as PyValue;
    } catch {
      // NaN / Infinity tokens (Python's default json.dumps) — fall through.
    }
  }
  try {
    return parsePyJson(text);
  } catch (e) {
    throw new HttpError(400, "bad_request", `body is not JSON: ${(e as Error).message}`);
  }
}

function isPlainObject(v: PyValue): v is { readonly [key: string]: PyValue } {
  return v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Map) && !(v instanceof PyFloat);
}

export function createIngestHandler(deps: IngestDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const ingest = async (stream: StreamName, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req, deps.maxBodyBytes);
    const parsed = parseBody(body.toString("utf8"), stream === "metrics");
    const records = isPlainObject(parsed) ? parsed.records : undefined;
    if (!Array.isArray(records)) throw new HttpError(400, "bad_request", 'body must be {"records": [...]}');
    const schema = STREAM_SCHEMAS[stream] as z.ZodType<AnyRecord>;
    const fast = FAST_CHECKS[stream];
    const valid: AnyRecord[] = [];
    /** Input index of each valid record; only built once a record was rejected (else identity). */
    let validIndex: number[] | undefined;
    let first: { index: number; error: HttpError } | undefined;
    let rejected = 0;
    const reject = (index: number, error: HttpError): void => {
      rejected++;
      if (!first || index < first.index) first = { index, error };
      validIndex ??= Array.from({ length: valid.length }, (_, k) => k);
    };
    const now = deps.now();
    const skew = deps.maxClockSkewS;
    const list = records as readonly unknown[];
    for (let i = 0; i < list.length; i++) {
      const x = list[i];
      let rec: AnyRecord;
      if (fast?.(x)) rec = x as AnyRecord; // zod would return an equal record (fast-validate.ts)
      else {
        const r = schema.safeParse(x);
        if (!r.success) {
          reject(i, new HttpError(400, "bad_request", describeIssue(i, r.error)));
          continue;
        }
        rec = r.data;
      }
      if (skew > 0) {
        const bad = farTimestamp(stream, rec, now, skew);
        if (bad) {
          const msg = `records[${i}].${bad[0]}: ${bad[1]} is more than ${formatSkew(skew)} from the collector clock (${now.toFixed(3)})`;
          reject(i, new HttpError(400, "bad_request", msg));
          continue;
        }
      }
      valid.push(rec);
      validIndex?.push(i);
    }
    let accepted = valid.length;
    if (valid.length > 0) {
      const { refused } = deps.accept(stream, valid);
      accepted -= refused.length;
      for (const r of refused) {
        const i = validIndex ? (validIndex[r.index] as number) : r.index;
        const msg = `records[${i}]: ${r.bytes} bytes as a line exceeds the per-record limit of ${deps.maxRecordBytes} bytes (--max-record-mb)`;
        reject(i, new HttpError(413, "payload_too_large", msg));
      }
    }
    if (first) {
      deps.metrics.rejected[stream] += rejected;
      if (first.error.status === 413) deps.metrics.ingestRequests.too_large++;
      else deps.metrics.ingestRequests.bad_request++;
      deps.log.debug(`POST /v1/${stream}: ${rejected} of ${list.length} records rejected; first: ${first.error.message}`);
      sendError(res, first.error, { accepted, rejected });
      return;
    }
    deps.metrics.ingestRequests.ok++;
    send(res, 200, { accepted });
  };

  const meta = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const parsed = parseBody((await readBody(req, deps.maxBodyBytes)).toString("utf8"), true);
    if (!isPlainObject(parsed)) throw new HttpError(400, "bad_request", 'body must be {"args": {...}, "run_name"?: "..."}');
    const { args, run_name: runName, ...rest } = parsed;
    const extra = Object.keys(rest);
    if (extra.length > 0) throw new HttpError(400, "bad_request", `unknown key ${JSON.stringify(extra[0])}`);
    if (args === undefined || !(args instanceof Map || isPlainObject(args))) throw new HttpError(400, "bad_request", "args: expected object");
    if (runName !== undefined && typeof runName !== "string") throw new HttpError(400, "bad_request", "run_name: expected string");
    await deps.setMeta({ args, ...(runName === undefined ? {} : { run_name: runName }) });
    send(res, 200, { ok: true });
  };

  const router = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const parsed = parseBody((await readBody(req, deps.maxBodyBytes)).toString("utf8"), false);
    if (!isPlainObject(parsed)) throw new HttpError(400, "bad_request", 'body must be {"url": "http://host:port", "mode"?: "router"|"direct"}');
    const { url, mode, ...rest } = parsed;
    const extra = Object.keys(rest);
    if (extra.length > 0) throw new HttpError(400, "bad_request", `unknown key ${JSON.stringify(extra[0])}`);
    if (typeof url !== "string" || !/^https?:\/\/[^\s/]+/.test(url)) throw new HttpError(400, "bad_request", "url: expected an http(s) URL");
    if (mode !== undefined && mode !== "router" && mode !== "direct") throw new HttpError(400, "bad_request", 'mode: expected "router" or "direct"');
    send(res, 200, { ok: true, ...deps.setRouter({ url, ...(mode === undefined ? {} : { mode }) }) });
  };

  const procs = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const parsed = parseBody((await readBody(req, deps.maxBodyBytes)).toString("utf8"), false);
    if (!isPlainObject(parsed)) throw new HttpError(400, "bad_request", 'body must be {"pids": [int, ...], "role"?: "trainer"}');
    const { pids, role, ...rest } = parsed;
    const extra = Object.keys(rest);
    if (extra.length > 0) throw new HttpError(400, "bad_request", `unknown key ${JSON.stringify(extra[0])}`);
    if (!Array.isArray(pids) || pids.length === 0) throw new HttpError(400, "bad_request", "pids: expected a non-empty array of process ids");
    if (pids.length > MAX_PIDS_PER_CALL) throw new HttpError(400, "bad_request", `pids: at most ${MAX_PIDS_PER_CALL} per call`);
    const bad = pids.findIndex((p) => typeof p !== "number" || !Number.isInteger(p) || p <= 0 || p > PID_MAX);
    if (bad >= 0) throw new HttpError(400, "bad_request", `pids[${bad}]: expected an integer process id in 1..${PID_MAX}`);
    if (role !== undefined && (typeof role !== "string" || !ROLE_RE.test(role))) throw new HttpError(400, "bad_request", "role: expected a short name (letters, digits, _.-; at most 32)");
    if (!deps.registerProcs) throw new HttpError(409, "host_telemetry_off", "host telemetry is off: start the collector with --host-telemetry");
    let answer: { registered: number[]; missing: number[] };
    try {
      answer = deps.registerProcs({ pids: pids as number[], ...(role === undefined ? {} : { role }) });
    } catch (e) {
      throw new HttpError(400, "too_many_pids", (e as Error).message);
    }
    send(res, 200, { ok: true, ...answer });
  };

  const requests = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const parsed = parseBody((await readBody(req, deps.maxBodyBytes)).toString("utf8"), false);
    const records = isPlainObject(parsed) ? parsed.records : undefined;
    if (!Array.isArray(records)) throw new HttpError(400, "bad_request", 'body must be {"records": [...]}');
    const valid: RequestRecord[] = [];
    for (let i = 0; i < records.length; i++) {
      const r = RequestRecord.safeParse(records[i]);
      if (!r.success) throw new HttpError(400, "bad_request", describeIssue(i, r.error));
      valid.push(r.data);
    }
    if (!deps.recordRequests) throw new HttpError(409, "requests_off", "this collector does not record per-request timing");
    await deps.recordRequests(valid);
    send(res, 200, { accepted: valid.length });
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const method = req.method ?? "GET";
    if (path === "/health") {
      if (method !== "GET") throw new HttpError(405, "method_not_allowed", "use GET");
      const h = deps.health();
      send(res, h.ok ? 200 : 503, h);
      return;
    }
    if (path === "/metrics") {
      if (method !== "GET") throw new HttpError(405, "method_not_allowed", "use GET");
      const text = deps.renderMetrics();
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
      res.end(text);
      return;
    }
    const m = /^\/v1\/([a-z_]+)$/.exec(path);
    const name = m?.[1];
    if (name === "meta" || name === "router" || name === "procs" || name === "requests" || (name !== undefined && Object.hasOwn(ROUTE_STREAMS, name))) {
      if (method !== "POST") throw new HttpError(405, "method_not_allowed", "use POST");
      if (name === "meta") await meta(req, res);
      else if (name === "requests") await requests(req, res);
      else if (name === "router") await router(req, res);
      else if (name === "procs") await procs(req, res);
      else await ingest(ROUTE_STREAMS[name] as StreamName, req, res);
      return;
    }
    throw new HttpError(404, "not_found", `no route for ${method} ${path}`);
  };

  return (req, res) => {
    route(req, res).catch((e: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (e instanceof HttpError) {
        if (e.status === 413) deps.metrics.ingestRequests.too_large++;
        else if (e.status === 400) deps.metrics.ingestRequests.bad_request++;
        sendError(res, e);
        // Drain whatever the client still sends so the error can be read.
        req.resume();
        return;
      }
      deps.log.error(`ingest ${req.method} ${req.url} failed`, e);
      sendError(res, new HttpError(500, "internal", "internal error"));
    });
  };
}
