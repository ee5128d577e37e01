/**
 * Collector ingest benchmark: a real collector child process (`collector/launch.sh`, GPU
 * sampling off) on 127.0.0.1, fed by a few concurrent HTTP clients posting 1000-record
 * batches (70 % gpu_util, 20 % engine_series, 10 % phases) for a bounded time and batch
 * count. Throughput counts records accepted until the collector has flushed them all
 * (so a growing buffer cannot pass for speed); CPU comes from /proc/<pid>/stat over the
 * same interval; RSS is sampled every 250 ms (and VmHWM read at the end).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface IngestResult {
  accepted: number;
  rejectedBatches: number;
  seconds: number;
  recordsPerS: number;
  cores: number;
  rssPeakMb: number;
  hwmMb: number | null;
  linesOnDisk: number;
  /** The collector's own counters (GET /metrics) just before it was stopped. */
  written: Record<string, number>;
  dropped: number;
}

const APP_ROOT = path.resolve(import.meta.dirname, "..");
const CLK_TCK = 100;

function procCpuS(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

function procMemMb(pid: number, key: "VmRSS" | "VmHWM"): number | null {
  try {
    const m = new RegExp(`${key}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

function bodies(): { stream: string; body: string; n: number }[] {
  const out: { stream: string; body: string; n: number }[] = [];
  // Near the real clock: the collector refuses records stamped more than a day away (--max-clock-skew).
  const base = Math.floor(Date.now() / 1000) - 1200;
  for (let v = 0; v < 8; v++) {
    const gpu = Array.from({ length: 1000 }, (_, i) => ({
      ts: base + v * 125 + Math.floor(i / 64) + 0.013,
      node: `10.2.0.${1 + ((i >> 3) % 8)}`,
      gpu: i % 8,
      util: (i * 37 + v) % 101,
      mem_mb: 61_000 + ((i * 13) % 900),
      power_w: 300 + ((i * 7) % 400),
    }));
    const engine = Array.from({ length: 1000 }, (_, i) => ({
      ts: base + v * 125 + Math.floor(i / 32) * 2 + 0.004,
      addr: `http://127.0.0.1:${39_001 + (i % 8)}`, // the collector scrapes addresses it sees: keep them local
      metric: i % 2 ? "sglang_num_running_reqs" : "sglang_generation_tokens_total",
      labels: { dp_rank: String((i >> 3) % 2) },
      value: (i % 2 ? (i % 40) : 1_000_000 + i * 37) + 0.5,
    }));
    const phases = Array.from({ length: 1000 }, (_, i) => ({
      name: ["actor_train", "log_probs", "train_wait", "update_weights"][i % 4],
      t0: base + v * 125 + i * 0.1,
      t1: base + v * 125 + i * 0.1 + 3.25,
      node: `10.2.0.${1 + ((i >> 3) % 8)}`,
      gpus: [i % 8],
      rank: i % 64,
      role: "train",
    }));
    for (let k = 0; k < 7; k++) out.push({ stream: "gpu", body: JSON.stringify({ records: gpu }), n: 1000 });
    for (let k = 0; k < 2; k++) out.push({ stream: "engine", body: JSON.stringify({ records: engine }), n: 1000 });
    out.push({ stream: "phases", body: JSON.stringify({ records: phases }), n: 1000 });
  }
  return out;
}

/**
 * A live run's rate (issue #20's 1024-GPU day): every second, one sample per GPU (nodes of
 * 8), `seriesPerS` engine rows spread over `engines` engines, and `phasesPerS` phase
 * events, each stream posted as one batch per second, as the per-node agents would.
 */
export interface LiveRate {
  gpus: number;
  engines: number;
  seriesPerS: number;
  phasesPerS: number;
}

/** One second of a live run's records, stamped `ts`. */
function liveSecond(rate: LiveRate, ts: number): { stream: string; body: string; n: number }[] {
  const gpu = Array.from({ length: rate.gpus }, (_, i) => ({
    ts: ts + (i >> 3) * 0.0001,
    node: `10.${3 + (i >> 11)}.${(i >> 3) & 255}.1`,
    gpu: i % 8,
    util: (i * 37 + ts) % 101,
    mem_mb: 61_000 + ((i * 13) % 900),
    power_w: 300 + ((i * 7) % 400),
  }));
  const engine = Array.from({ length: rate.seriesPerS }, (_, i) => ({
    ts: ts + 0.004,
    addr: `http://127.0.0.1:${39_001 + (i % rate.engines)}`, // local: the collector scrapes addresses it sees
    metric: `sglang_series_${Math.floor(i / rate.engines)}`,
    labels: {},
    value: ((i * 31 + ts) % 977) + 0.5,
  }));
  const phases = Array.from({ length: rate.phasesPerS }, (_, i) => ({
    name: ["actor_train", "log_probs", "train_wait", "update_weights"][i % 4],
    t0: ts - 3.25,
    t1: ts,
    node: `10.${3 + (i >> 11)}.${(i >> 3) & 255}.1`,
    gpus: [i % 8],
    rank: i,
    role: "train",
  }));
  return [
    { stream: "gpu", body: JSON.stringify({ records: gpu }), n: gpu.length },
    { stream: "engine", body: JSON.stringify({ records: engine }), n: engine.length },
    { stream: "phases", body: JSON.stringify({ records: phases }), n: phases.length },
  ];
}

export async function benchIngest(opts: { seconds: number; clients: number; maxBatches: number; live?: LiveRate }): Promise<IngestResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-bench-ingest-"));
  const child = spawn(
    // The production path (`npm run collector`): the launcher builds/execs the bundle.
    "sh",
    ["collector/launch.sh", "--dump-details", dir, "--gpu-source", "none", "--port", "0", "--host", "127.0.0.1"],
    { cwd: APP_ROOT, stdio: ["ignore", "ignore", "pipe"] },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error(`collector did not start: ${stderr.slice(-400)}`)), 60_000);
      const poll = setInterval(() => {
        const m = /listening on (http:\/\/[^,\s]+)/.exec(stderr);
        if (m) {
          clearInterval(poll);
          clearTimeout(deadline);
          resolve(m[1]!);
        } else if (child.exitCode !== null) {
          clearInterval(poll);
          clearTimeout(deadline);
          reject(new Error(`collector exited: ${stderr.slice(-400)}`));
        }
      }, 50);
    });
    const pid = child.pid!;
    const payloads = opts.live ? [] : bodies();
    let rssPeak = 0;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, procMemMb(pid, "VmRSS") ?? 0);
    }, 250);
    let accepted = 0;
    let rejectedBatches = 0;
    let next = 0;
    const cpu0 = procCpuS(pid);
    const t0 = performance.now();
    const endAt = t0 + opts.seconds * 1000;
    const post = async (p: { stream: string; body: string; n: number }) => {
      const res = await fetch(`${url}/v1/${p.stream}`, { method: "POST", body: p.body, headers: { "content-type": "application/json" } });
      await res.arrayBuffer();
      if (res.ok) accepted += p.n;
      else rejectedBatches++;
    };
    const worker = async () => {
      while (performance.now() < endAt && next < opts.maxBatches) await post(payloads[next++ % payloads.length]!);
    };
    const live = async (rate: LiveRate) => {
      // Paced: second k's batches go out at t0 + k s, stamped near the real clock.
      const base = Math.floor(Date.now() / 1000);
      for (let k = 0; k < opts.seconds && k < opts.maxBatches; k++) {
        const wait = t0 + k * 1000 - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        await Promise.all(liveSecond(rate, base + k).map(post));
      }
    };
    await (opts.live ? live(opts.live) : Promise.all(Array.from({ length: opts.clients }, worker)));
    // Sustained means written: wait until the collector reports every accepted record
    // as written (its own counters), bounded by 30 s.
    const drainDeadline = performance.now() + 30_000;
    let written: Record<string, number> = {};
    let dropped = 0;
    for (;;) {
      ({ written, dropped } = await collectorCounters(url));
      const total = Object.values(written).reduce((a, b) => a + b, 0);
      if (total >= accepted || performance.now() > drainDeadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const seconds = (performance.now() - t0) / 1000;
    const cores = (procCpuS(pid) - cpu0) / seconds;
    clearInterval(sampler);
    rssPeak = Math.max(rssPeak, procMemMb(pid, "VmRSS") ?? 0);
    const hwmMb = procMemMb(pid, "VmHWM");
    child.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    return {
      accepted,
      rejectedBatches,
      seconds,
      recordsPerS: accepted / seconds,
      cores,
      rssPeakMb: rssPeak,
      hwmMb,
      linesOnDisk: countLines(path.join(dir, "dashboard")),
      written,
      dropped,
    };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function collectorCounters(url: string): Promise<{ written: Record<string, number>; dropped: number }> {
  const prom = await (await fetch(`${url}/metrics`)).text();
  const written: Record<string, number> = {};
  let dropped = 0;
  for (const m of prom.matchAll(/^rlboard_collector_records_(written|dropped)_total\{stream="([a-z_]+)"\} (\d+)/gm)) {
    // topology lines are synthesised by the collector (external engines), not posted
    if (m[1] === "written" && Number(m[3]) && m[2] !== "topology") written[m[2]!] = Number(m[3]);
    if (m[1] === "dropped") dropped += Number(m[3]);
  }
  return { written, dropped };
}

function countLines(dir: string): number {
  let n = 0;
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".jsonl")) {
        const b = fs.readFileSync(p);
        for (let i = 0; i < b.length; i++) if (b[i] === 10) n++;
      }
    }
  };
  try {
    walk(dir);
  } catch {
    /* nothing written */
  }
  return n;
}
