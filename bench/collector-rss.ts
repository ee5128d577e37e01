/**
 * Collector memory/CPU benchmark: start the daemon through the real CLI path
 * (`sh collector/launch.sh …`, what `npm run collector` runs), push a
 * realistic mix of records over HTTP at a fixed rate, and sample the daemon's
 * RSS (`/proc/<pid>/status` VmRSS, VmHWM) and CPU time (`/proc/<pid>/stat`,
 * all threads). Afterwards the daemon is stopped with SIGTERM and every
 * accepted record must be a line on disk.
 *
 *   npx tsx bench/collector-rss.ts [--rate 50000] [--duration 15] [--batch 500] [-- CMD ARGS…]
 *
 * Load: 6 engine_series : 3 gpu_util : 1 phases requests, `batch` records
 * each, 8 keep-alive connections; engine addresses are 4 stub engines of the
 * bench (the collector scrapes every engine address it sees, so the scraper
 * runs as in a real job). Bounds: 127.0.0.1 only, ephemeral ports, a
 * temporary dump dir removed afterwards, a hard 30 s deadline (the child is
 * killed and the measurement fails). Linux only (/proc).
 *
 * `measureCollector(opts)` is the library entry point (the project bench
 * imports it). The daemon's pid comes from its own `/health`, so a launcher
 * that forks instead of exec'ing is still measured correctly.
 *
 * Measured 2026-11-29, Node 20.20, 2-core VM shared with other jobs, defaults
 * (50 000 records/s, 500-record batches), 4 interleaved pairs:
 *
 *   before  tsx collector/index.ts   steady 146–162 MB  peak 162–210 MB  0.39–0.48 cores
 *   after   sh collector/launch.sh   steady  72–74 MB   peak  82–100 MB  0.35–0.44 cores
 *   after, --batch 64 (780 req/s)    steady  72 MB      peak  89 MB      0.63 cores
 *
 * Where it went (steady RSS, calm runs): tsx → esbuild bundle −40 MB at idle;
 * zod tree-shaken in the bundle −3.5 MB; outgoing HTTP on node:http instead
 * of fetch −35 MB (undici + its WebAssembly parser, loaded by the first
 * scrape); --max-semi-space-size=4 --heap-growing-percent=30 ~110 → ~78 MB;
 * glibc MALLOC_MMAP_THRESHOLD_ ~−5 MB. About 40 MB of the remainder is the
 * node binary's own file-backed pages. Peaks above steady are backlog
 * episodes: when the daemon is starved of CPU for a moment, records wait in
 * the writer's buffers (tens of thousands) until the flushes catch up.
 */
import { execFileSync, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { Agent, createServer, request } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { median } from "./stats";

export interface MeasureCollectorOptions {
  /** Target ingest rate (records/s). Default 50 000. */
  recordsPerSec?: number;
  /** Measured load window in seconds (after warm-up). Default 15. */
  durationS?: number;
  /** Load before the measured window starts. Default 2. */
  warmupS?: number;
  /** Records per POST. Default 500 (the Python client sends ≤ 64; try `batch: 64` for many small producers). */
  batch?: number;
  /** Concurrent keep-alive connections. Default 8. */
  connections?: number;
  /** The command that starts the daemon; CLI flags are appended. Default: `sh collector/launch.sh`. */
  command?: readonly string[];
  /** Repository root (cwd of the command). Default: this file's parent directory. */
  cwd?: string;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

export interface CollectorMeasurement {
  /** Records accepted by the daemon per second over the measured window. */
  recordsPerSec: number;
  /** CPU time of the daemon process / wall time over the measured window. */
  cores: number;
  /** VmHWM of the daemon at the end of the load. */
  peakRssMb: number;
  /** Median VmRSS over the second half of the measured window. */
  steadyRssMb: number;
}

const HARD_DEADLINE_MS = 30_000;
const REPO = fileURLToPath(new URL("..", import.meta.url));

function clockTicks(): number {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** utime + stime of a process, in seconds. */
function cpuSeconds(pid: number, hz: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the `(comm)`: state is field 3, utime 14, stime 15.
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(rest[11]) + Number(rest[12])) / hz;
}

/** VmRSS and VmHWM in MiB. */
function rss(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

type Stream = "engine" | "gpu" | "phases";
/** Per 10 requests: 6 engine_series, 3 gpu_util, 1 phases (scraped engine metrics dominate a real run). */
const MIX: readonly Stream[] = ["engine", "gpu", "engine", "phases", "engine", "gpu", "engine", "engine", "gpu", "engine"];

const ENGINE_METRICS = [
  "sglang_num_running_reqs",
  "sglang_num_queue_reqs",
  "sglang_token_usage",
  "sglang_gen_throughput",
  "sglang_cache_hit_rate",
  "sglang_prompt_tokens_total",
  "sglang_generation_tokens_total",
  "sglang_time_to_first_token_seconds_sum",
];

/**
 * A few pre-serialized bodies per stream, timestamps near now (current hour
 * file). Engine addresses are the bench's own stub engines: the collector
 * scrapes every address that shows up in engine_series (as an external
 * engine), so they must point at something on 127.0.0.1 that we control.
 */
function makeBodies(batch: number, t0: number, engines: readonly string[]): Record<Stream, Buffer[]> {
  const bodies: Record<Stream, Buffer[]> = { engine: [], gpu: [], phases: [] };
  for (let v = 0; v < 8; v++) {
    const engine = [];
    const gpu = [];
    const phases = [];
    for (let i = 0; i < batch; i++) {
      const ts = t0 + (v * batch + i) / 1000;
      const node = `10.0.${v}.${(i >> 3) & 15}`;
      engine.push({
        ts,
        addr: engines[i % engines.length],
        metric: ENGINE_METRICS[i % ENGINE_METRICS.length],
        labels: { engine_type: "unified", dp_rank: String(i % 2) },
        value: i % 3 === 0 ? i : i * 1.37 + 0.25,
      });
      gpu.push({ ts, node, gpu: i % 8, util: (i * 7) % 101, mem_mb: 40000 + ((i * 131) % 40000), power_w: 200 + (i % 500) });
      phases.push({
        name: ["actor_train", "ref_logprob", "update_weights", "rollout"][i % 4],
        t0: ts - 3.5,
        t1: i % 16 === 0 ? -1.0 : ts,
        node,
        gpus: [0, 1, 2, 3, 4, 5, 6, 7].slice(0, 1 + (i % 8)),
        rank: i % 64,
        role: i % 10 === 0 ? "rollout_manager" : "train",
      });
    }
    bodies.engine.push(Buffer.from(JSON.stringify({ records: engine })));
    bodies.gpu.push(Buffer.from(JSON.stringify({ records: gpu })));
    bodies.phases.push(Buffer.from(JSON.stringify({ records: phases })));
  }
  return bodies;
}

/** A stub SGLang engine: `GET /metrics` answers an empty exposition. */
async function stubEngine(): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/plain; version=0.0.4" });
    res.end("");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function post(agent: Agent, url: URL, path: string, body: Buffer): Promise<{ status: number; accepted: number }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { agent, host: url.hostname, port: url.port, path, method: "POST", headers: { "content-type": "application/json", "content-length": body.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const m = /"accepted":(\d+)/.exec(text);
          if (m) resolve({ status: res.statusCode ?? 0, accepted: Number(m[1]) });
          else reject(new Error(`unexpected answer ${res.statusCode}: ${text.slice(0, 200)}`));
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function healthPid(url: string): Promise<number> {
  const res = await fetch(`${url}/health`);
  const j = (await res.json()) as { pid?: number };
  if (typeof j.pid !== "number") throw new Error("collector /health has no pid");
  return j.pid;
}

function waitListening(child: ChildProcess, stderr: () => string, deadline: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const tick = (): void => {
      const m = /collector listening on (http:\/\/[^,\s]+)/.exec(stderr());
      if (m?.[1]) resolve(m[1]);
      else if (child.exitCode !== null || child.signalCode !== null) reject(new Error(`collector exited early:\n${stderr()}`));
      else if (Date.now() > deadline) reject(new Error(`collector did not start:\n${stderr()}`));
      else setTimeout(tick, 20);
    };
    tick();
  });
}

export async function measureCollector(opts: MeasureCollectorOptions = {}): Promise<CollectorMeasurement> {
  const rate = opts.recordsPerSec ?? 50_000;
  const durationS = opts.durationS ?? 15;
  const warmupS = opts.warmupS ?? 2;
  const batch = opts.batch ?? 500;
  const connections = opts.connections ?? 8;
  const command = opts.command ?? ["sh", "collector/launch.sh"];
  const log = opts.log ?? (() => {});
  if (warmupS + durationS > 22) throw new Error("warmupS + durationS must stay ≤ 22 s (30 s hard bound)");
  const started = Date.now();
  const deadline = started + HARD_DEADLINE_MS;
  const hz = clockTicks();

  const dump = mkdtempSync(join(tmpdir(), "rlb-bench-rss-"));
  const stubs = await Promise.all([0, 1, 2, 3].map(() => stubEngine())).catch((e: unknown) => {
    rmSync(dump, { recursive: true, force: true });
    throw e;
  });
  const [cmd, ...cmdArgs] = command;
  const child = spawn(
    cmd!,
    [...cmdArgs, "--dump-details", dump, "--host", "127.0.0.1", "--port", "0", "--gpu-source", "none", "--log-level", "info"],
    { cwd: opts.cwd ?? REPO, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, RLBOARD_LOG_LEVEL: "" } },
  );
  let err = "";
  child.stderr.on("data", (d: Buffer) => {
    err += d.toString();
    if (err.length > 1 << 20) err = err.slice(-(1 << 19));
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const hardKill = setTimeout(() => child.kill("SIGKILL"), HARD_DEADLINE_MS + 2000);
  hardKill.unref();
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  let pid = 0;
  try {
    const url = await waitListening(child, () => err, deadline);
    pid = await healthPid(url);
    log(`collector pid ${pid} at ${url}, start ${Date.now() - started} ms, idle RSS ${round1(rss(pid).rss)} MB`);
    const base = new URL(url);
    const bodies = makeBodies(
      batch,
      Date.now() / 1000,
      stubs.map((s) => s.url),
    );
    const paths: Record<Stream, string> = { engine: "/v1/engine", gpu: "/v1/gpu", phases: "/v1/phases" };

    let sentRecords = 0;
    let inflight = 0;
    let reqNo = 0;
    let windowAccepted = 0;
    let totalAccepted = 0;
    let inWindow = false;
    let failure: Error | undefined;
    let rejected = 0;
    const loadStart = Date.now();
    const windowStart = loadStart + warmupS * 1000;
    const loadEnd = windowStart + durationS * 1000;
    if (loadEnd + 3000 > deadline) throw new Error("collector start took too long to fit the 30 s bound");

    let cpu0 = 0;
    let tWin0 = 0;
    const samples: { t: number; rss: number }[] = [];

    await new Promise<void>((resolve) => {
      const pump = (): void => {
        const now = Date.now();
        if (failure || now >= loadEnd) return;
        const due = ((now - loadStart) / 1000) * rate;
        while (sentRecords + batch <= due + batch && inflight < connections * 2) {
          const stream = MIX[reqNo % MIX.length]!;
          const body = bodies[stream][reqNo % bodies[stream].length]!;
          reqNo++;
          sentRecords += batch;
          inflight++;
          post(agent, base, paths[stream], body).then(
            (r) => {
              inflight--;
              if (r.status !== 200) rejected++;
              totalAccepted += r.accepted;
              if (inWindow) windowAccepted += r.accepted;
            },
            (e: unknown) => {
              inflight--;
              failure ??= e as Error;
            },
          );
        }
      };
      const pumpTimer = setInterval(pump, 2);
      const sampleTimer = setInterval(() => {
        const now = Date.now();
        if (!inWindow && now >= windowStart) {
          inWindow = true;
          tWin0 = now;
          cpu0 = cpuSeconds(pid, hz);
        }
        if (inWindow) samples.push({ t: now, rss: rss(pid).rss });
        if (opts.log && samples.length % 20 === 1) {
          void fetch(`${url}/health`)
            .then((r) => r.json() as Promise<{ buffered: number; memory_mb: Record<string, number> }>)
            .then((h) => log(`t+${((now - loadStart) / 1000).toFixed(1)} s: RSS ${round1(rss(pid).rss)} MB, buffered ${h.buffered}, heap ${h.memory_mb.heapUsed}/${h.memory_mb.heapTotal} MB, ext ${h.memory_mb.external} MB, arrayBuffers ${h.memory_mb.arrayBuffers} MB`))
            .catch(() => {});
        }
        if (now >= loadEnd || failure) {
          clearInterval(pumpTimer);
          clearInterval(sampleTimer);
          resolve();
        }
      }, 100);
    });
    const tWin1 = Date.now();
    const cpu1 = cpuSeconds(pid, hz);
    inWindow = false;
    const { hwm } = rss(pid);
    if (failure) throw failure;
    if (rejected > 0) throw new Error(`${rejected} requests were not answered 200:\n${err.slice(-2000)}`);

    const winS = (tWin1 - tWin0) / 1000;
    const half = tWin0 + (tWin1 - tWin0) / 2;
    const result: CollectorMeasurement = {
      recordsPerSec: Math.round(windowAccepted / winS),
      cores: Math.round(((cpu1 - cpu0) / winS) * 100) / 100,
      peakRssMb: round1(hwm),
      steadyRssMb: round1(median(samples.filter((s) => s.t >= half).map((s) => s.rss))),
    };
    log(`window ${winS.toFixed(1)} s, ${samples.length} RSS samples, min/max ${round1(Math.min(...samples.map((s) => s.rss)))}/${round1(Math.max(...samples.map((s) => s.rss)))} MB`);

    // Let the last answers arrive, stop the daemon (final flush), then check
    // that every accepted record reached disk: throughput means written.
    const drainEnd = Date.now() + 3000;
    while (inflight > 0 && Date.now() < drainEnd) await new Promise((r) => setTimeout(r, 10));
    agent.destroy();
    process.kill(pid, "SIGTERM");
    const code = await Promise.race([exited, new Promise<"timeout">((r) => setTimeout(() => r("timeout"), Math.max(1000, deadline - Date.now())))]);
    if (code !== 0) throw new Error(`collector did not stop cleanly (${String(code)}):\n${err.slice(-2000)}`);
    const written = countLines(join(dump, "dashboard"), ["engine_series", "gpu_util", "phases"]);
    log(`accepted ${totalAccepted} records in total, ${written} lines on disk`);
    if (written !== totalAccepted) {
      const perStream = ["engine_series", "gpu_util", "phases"].map((d) => `${d} ${countLines(join(dump, "dashboard"), [d])}`).join(", ");
      throw new Error(`accepted ${totalAccepted} records but ${written} lines reached disk (${perStream}):\n${err.slice(-3000)}`);
    }
    return result;
  } finally {
    clearTimeout(hardKill);
    agent.destroy();
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      if (pid && pid !== child.pid) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    }
    for (const s of stubs) {
      s.server.closeAllConnections();
      s.server.close();
    }
    rmSync(dump, { recursive: true, force: true });
  }
}

/** Lines in every file of the given stream directories. */
function countLines(dash: string, dirs: readonly string[]): number {
  let n = 0;
  for (const d of dirs) {
    const dir = join(dash, d);
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) {
      const buf = readFileSync(join(dir, f));
      for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, i + 1)) n++;
    }
  }
  return n;
}

function flag(argv: readonly string[], name: string): number | undefined {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? Number(argv[i + 1]) : undefined;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const argv = process.argv.slice(2);
  const cmdIdx = argv.indexOf("--");
  const command = cmdIdx >= 0 ? argv.slice(cmdIdx + 1) : undefined;
  const opts: MeasureCollectorOptions = {
    ...(flag(argv, "rate") ? { recordsPerSec: flag(argv, "rate")! } : {}),
    ...(flag(argv, "duration") ? { durationS: flag(argv, "duration")! } : {}),
    ...(flag(argv, "batch") ? { batch: flag(argv, "batch")! } : {}),
    ...(command?.length ? { command } : {}),
    log: (l) => process.stderr.write(`bench-rss: ${l}\n`),
  };
  measureCollector(opts).then(
    (r) => {
      process.stdout.write(
        `records/s ${r.recordsPerSec}  cores ${r.cores}  peak RSS ${r.peakRssMb} MB  steady RSS ${r.steadyRssMb} MB\n`,
      );
    },
    (e: unknown) => {
      process.stderr.write(`bench-rss: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}
