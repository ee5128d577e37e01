/**
 * The collector's configuration, parsed and validated exactly once:
 * command-line flags first, then `RLBOARD_*` environment variables, then
 * defaults. Nothing else in `collector/` reads `process.env` or `process.argv`.
 *
 * Any problem (unknown flag, bad number, missing `--dump-details`, …) becomes
 * one `ConfigError` whose message is a single line for stderr.
 */
import { networkInterfaces } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { LOG_LEVELS } from "./log";
import { SGLANG_DEFAULT_WHITELIST } from "@/lib/store/format";
import { GPU_SOURCES } from "./sources/gpu-sampler";

export class ConfigError extends Error {}

export const USAGE = `usage: npm run collector -- --dump-details DIR [options]
       npm run collector -- --gpu-only --push URL [options]

  --dump-details DIR      run directory; telemetry goes to DIR/dashboard/
  --port N                ingest port (default 7789; env RLBOARD_COLLECTOR_PORT; 0 = ephemeral)
  --host ADDR             bind address (default 127.0.0.1; env RLBOARD_COLLECTOR_HOST)
  --router URL            scrape URL/engine_metrics (router mode)
  --engines URL,URL,...   scrape each URL/metrics (direct mode; topology engines are added)
  --scrape-interval S     sglang scrape tick (default 2)
  --scrape-timeout S      per-request timeout (default 5)
  --sglang-metrics a,b    replace the default metric whitelist
                          (miles' name --dashboard-sglang-metrics is accepted too)
  --gpu-source SRC        auto | nvidia-smi | amd-smi | none (default auto)
  --gpu-interval S        GPU sample tick (default 1)
  --gpu-process-interval S  GPU per-process sweep (default 5)
  --node IP               node name written into GPU records (default: first non-internal IPv4)
  --run-name NAME         meta.json run_name (default: kept from meta.json, else "miles-run")
  --flush-interval S      flush at least this often (default 2)
  --flush-batch N         flush early once N records are buffered (default 64)
  --max-buffered N        per-stream buffer cap while writes fail (default 500000)
  --max-buffer-mb N       cap on all buffered records, in MiB (default 256; oldest dropped)
  --max-record-mb N       largest record accepted, in MiB (default 16; 413 beyond)
  --max-body-mb N         ingest body limit (default twice --max-record-mb; 413 beyond)
  --max-clock-skew S      refuse records stamped more than S seconds from the collector's
                          clock (default 86400; 0 = accept any time)
  --fsync                 fsync each appended file
  --host-telemetry        sample host CPU/memory and the job's processes from /proc into
                          dashboard/host/ (needs --dump-details, also with --gpu-only)
  --host-interval S       host sample tick (default 5)
  --host-procs REGEX      processes to report, by command line (default python|sglang|ray::);
                          producers can register pids instead: POST /v1/procs {"pids":[...]}
  --host-pid-file FILE    also report the pids listed in FILE (one "PID [ROLE]" a line,
                          re-read every tick; the way in for --gpu-only nodes)
  --logs GLOB             tail these log files on this node (repeatable) and append crash/OOM/
                          NCCL/... signal records to dashboard/log_signals/ (needs --dump-details)
  --logs-interval S       log scan tick (default 10)
  --gpu-only              per-node mode: only sample GPUs and push them to --push
  --push URL              driver collector base URL for --gpu-only
  --push-interval S       push cadence in --gpu-only mode (default 5)
  --data-dir DIR          rlboard data dir (env RLBOARD_DATA_DIR; unused by the collector itself)
  --log-level LEVEL       debug | info | warn | error (default info; env RLBOARD_LOG_LEVEL)`;

const positive = (name: string) => z.coerce.number({ error: `${name} must be a number` }).positive(`${name} must be > 0`);
const url = (name: string) =>
  z.string().refine((u) => /^https?:\/\/[^\s/]+/.test(u), {
    error: (iss) => `${name} must be an http(s) URL, got ${JSON.stringify(iss.input)}`,
  });

function csv(v: string | undefined): string[] | undefined {
  return v === undefined ? undefined : v.split(",").map((s) => s.trim()).filter(Boolean);
}

/** First non-internal IPv4 address, like the node IP Ray would report; loopback otherwise. */
export function detectNodeIp(): string {
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return "127.0.0.1";
}

const Schema = z
  .object({
    dumpDetails: z.string().min(1).optional(),
    dataDir: z.string().min(1).optional(),
    port: z.coerce
      .number({ error: (iss) => (iss.code === "invalid_type" ? "--port must be a number" : "--port must be an integer in 0..65535") })
      .int()
      .min(0)
      .max(65535),
    host: z.string().min(1),
    router: url("--router").optional(),
    engines: z.array(url("--engines entries")).default([]),
    scrapeIntervalS: positive("--scrape-interval"),
    scrapeTimeoutS: positive("--scrape-timeout"),
    sglangMetrics: z.array(z.string()).min(1, "--sglang-metrics names no metric"),
    gpuSource: z.enum(GPU_SOURCES, { error: `--gpu-source must be one of ${GPU_SOURCES.join(", ")}` }),
    gpuIntervalS: positive("--gpu-interval"),
    gpuProcessIntervalS: positive("--gpu-process-interval"),
    node: z.string().min(1),
    runName: z.string().min(1).optional(),
    flushIntervalS: positive("--flush-interval"),
    flushBatch: z.coerce.number().int().positive("--flush-batch must be > 0"),
    maxBuffered: z.coerce.number().int().min(100, "--max-buffered must be >= 100"),
    maxBufferMb: positive("--max-buffer-mb"),
    maxRecordMb: positive("--max-record-mb"),
    maxBodyMb: positive("--max-body-mb").optional(),
    maxClockSkewS: z.coerce.number({ error: "--max-clock-skew must be a number" }).min(0, "--max-clock-skew must be >= 0"),
    fsync: z.boolean(),
    logs: z.array(z.string().min(1, "--logs needs a GLOB")).default([]),
    logsIntervalS: positive("--logs-interval"),
    hostTelemetry: z.boolean(),
    hostIntervalS: positive("--host-interval"),
    hostProcs: z
      .string()
      .refine((p) => {
        try {
          new RegExp(p);
          return true;
        } catch {
          return false;
        }
      }, "--host-procs must be a valid regular expression")
      .optional(),
    hostPidFile: z.string().min(1, "--host-pid-file needs a FILE").optional(),
    gpuOnly: z.boolean(),
    push: url("--push").optional(),
    pushIntervalS: positive("--push-interval"),
    logLevel: z.enum(LOG_LEVELS, { error: `--log-level must be one of ${LOG_LEVELS.join(", ")}` }),
  })
  .superRefine((c, ctx) => {
    if (c.gpuOnly && !c.push) ctx.addIssue({ code: "custom", message: "--gpu-only needs --push URL" });
    if (!c.gpuOnly && !c.dumpDetails) ctx.addIssue({ code: "custom", message: "--dump-details DIR is required" });
    if (c.push && !c.gpuOnly) ctx.addIssue({ code: "custom", message: "--push is only valid with --gpu-only" });
    if (c.logs.length && !c.dumpDetails) ctx.addIssue({ code: "custom", message: "--logs needs --dump-details DIR (where dashboard/log_signals/ goes)" });
    if (c.hostPidFile && !c.hostTelemetry) ctx.addIssue({ code: "custom", message: "--host-pid-file needs --host-telemetry" });
    if (c.hostTelemetry && !c.dumpDetails) ctx.addIssue({ code: "custom", message: "--host-telemetry needs --dump-details DIR (where dashboard/host/ goes)" });
    if (c.router && c.engines.length > 0) ctx.addIssue({ code: "custom", message: "use either --router or --engines, not both" });
    if (c.maxBodyMb !== undefined && c.maxBodyMb < c.maxRecordMb) {
      ctx.addIssue({ code: "custom", message: `--max-body-mb (${c.maxBodyMb}) must be at least --max-record-mb (${c.maxRecordMb}): a request must fit one record at the limit` });
    }
    if (c.maxRecordMb > c.maxBufferMb) {
      ctx.addIssue({ code: "custom", message: `--max-record-mb (${c.maxRecordMb}) must not exceed --max-buffer-mb (${c.maxBufferMb})` });
    }
  });

export type CollectorConfig = Omit<z.output<typeof Schema>, "maxBodyMb"> & { help: false; maxBodyMb: number };

/** Parse flags + env; returns `{ help: true }` for `--help`. Throws `ConfigError`. */
export function parseCollectorArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): CollectorConfig | { help: true } {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        "dump-details": { type: "string" },
        "data-dir": { type: "string" },
        port: { type: "string" },
        host: { type: "string" },
        router: { type: "string" },
        engines: { type: "string" },
        "scrape-interval": { type: "string" },
        "scrape-timeout": { type: "string" },
        "sglang-metrics": { type: "string" },
        "dashboard-sglang-metrics": { type: "string" },
        "gpu-source": { type: "string" },
        "gpu-interval": { type: "string" },
        "gpu-process-interval": { type: "string" },
        node: { type: "string" },
        "run-name": { type: "string" },
        "flush-interval": { type: "string" },
        "flush-batch": { type: "string" },
        "max-buffered": { type: "string" },
        "max-body-mb": { type: "string" },
        "max-buffer-mb": { type: "string" },
        "max-record-mb": { type: "string" },
        "max-clock-skew": { type: "string" },
        fsync: { type: "boolean" },
        logs: { type: "string", multiple: true },
        "logs-interval": { type: "string" },
        "host-telemetry": { type: "boolean" },
        "host-interval": { type: "string" },
        "host-procs": { type: "string" },
        "host-pid-file": { type: "string" },
        "gpu-only": { type: "boolean" },
        push: { type: "string" },
        "push-interval": { type: "string" },
        "log-level": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }).values;
  } catch (e) {
    throw new ConfigError((e as Error).message.split("\n")[0] ?? "invalid arguments");
  }
  if (values.help) return { help: true };
  const str = (k: string): string | undefined => values[k] as string | undefined;
  const emptyAsUndefined = (v: string | undefined): string | undefined => (v === "" ? undefined : v);
  if (str("sglang-metrics") !== undefined && str("dashboard-sglang-metrics") !== undefined)
    throw new ConfigError("use either --sglang-metrics or --dashboard-sglang-metrics, not both");
  const raw = {
    dumpDetails: str("dump-details"),
    dataDir: str("data-dir") ?? emptyAsUndefined(env.RLBOARD_DATA_DIR),
    port: str("port") ?? emptyAsUndefined(env.RLBOARD_COLLECTOR_PORT) ?? "7789",
    host: str("host") ?? emptyAsUndefined(env.RLBOARD_COLLECTOR_HOST) ?? "127.0.0.1",
    router: str("router"),
    engines: csv(str("engines")),
    scrapeIntervalS: str("scrape-interval") ?? "2",
    scrapeTimeoutS: str("scrape-timeout") ?? "5",
    sglangMetrics: csv(str("sglang-metrics") ?? str("dashboard-sglang-metrics")) ?? [...SGLANG_DEFAULT_WHITELIST],
    gpuSource: str("gpu-source") ?? "auto",
    gpuIntervalS: str("gpu-interval") ?? "1",
    gpuProcessIntervalS: str("gpu-process-interval") ?? "5",
    node: str("node") ?? detectNodeIp(),
    runName: str("run-name"),
    flushIntervalS: str("flush-interval") ?? "2",
    flushBatch: str("flush-batch") ?? "64",
    maxBuffered: str("max-buffered") ?? "500000",
    maxBufferMb: str("max-buffer-mb") ?? "256",
    maxRecordMb: str("max-record-mb") ?? "16",
    maxBodyMb: str("max-body-mb"),
    maxClockSkewS: str("max-clock-skew") ?? "86400",
    fsync: values.fsync === true,
    logs: (values.logs as string[] | undefined) ?? [],
    logsIntervalS: str("logs-interval") ?? "10",
    hostTelemetry: values["host-telemetry"] === true,
    hostIntervalS: str("host-interval") ?? "5",
    hostProcs: str("host-procs"),
    hostPidFile: str("host-pid-file"),
    gpuOnly: values["gpu-only"] === true,
    push: str("push"),
    pushIntervalS: str("push-interval") ?? "5",
    logLevel: str("log-level") ?? emptyAsUndefined(env.RLBOARD_LOG_LEVEL) ?? "info",
  };
  const parsed = Schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(issue?.message ?? "invalid configuration");
  }
  const c = parsed.data;
  return {
    ...c,
    help: false,
    dumpDetails: c.dumpDetails && resolve(c.dumpDetails),
    dataDir: c.dataDir && resolve(c.dataDir),
    maxBodyMb: c.maxBodyMb ?? 2 * c.maxRecordMb,
  };
}

/** The one place the collector reads the process environment. */
export function loadCollectorEnv(): CollectorConfig | { help: true } {
  return parseCollectorArgs(process.argv.slice(2), process.env);
}
