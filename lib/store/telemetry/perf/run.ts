/**
 * Perf driver (not part of the product; the project's bench lives in bench/):
 *
 *   npx tsx lib/store/telemetry/perf/run.ts --run /tmp/perf/run [--n 5] [--what cold,cache,warm,ready]
 *     [--window mid|tail|end] [--only phases,fleet]
 *
 * Generate the synthetic run first: `node lib/store/telemetry/perf/gen.mjs /tmp/perf/run`
 * (64 GPUs × 8 h at 1 Hz). Every cold figure is a fresh process; medians of wall and CPU.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openMetricStore } from "@/lib/store/telemetry";
import { QUERIES, type PerfTask } from "./probe";

const PROBE = path.join(import.meta.dirname, "probe.ts");
const argv = process.argv.slice(2);
const arg = (k: string, d: string) => {
  const i = argv.indexOf(`--${k}`);
  return i >= 0 ? argv[i + 1]! : d;
};
const run = arg("run", "/tmp/perf/run");
const n = Number(arg("n", "5"));
const what = arg("what", "cold,cache,warm,ready").split(",");
const only = arg("only", QUERIES.join(",")).split(",");
const windowKind = arg("window", "mid");

function probe(task: PerfTask, node: string[] = []): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...node, "--import", "tsx", PROBE, JSON.stringify(task)], { maxBuffer: 256 << 20, timeout: 300_000 }, (err, stdout, stderr) => {
      const line = stdout.trim().split("\n").pop() ?? "";
      try {
        const out = JSON.parse(line) as Record<string, unknown>;
        if (out.ok) return resolve(out);
        reject(new Error(String(out.error)));
      } catch {
        reject(new Error(`${err?.message ?? ""} ${stderr.slice(-800)}`));
      }
    });
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const f = (x: number) => x.toFixed(x < 20 ? 1 : 0);

async function main() {
  const meta = JSON.parse(fs.readFileSync(path.join(run, "dashboard", "meta.json"), "utf8")) as { start_ts: number };
  // mid: [start+2h, start+6h] (the author's window); tail: [start+4h, start+8h];
  // end: the newest 4 h of the time range (what `npm run bench` asks)
  let t0 = windowKind === "tail" ? meta.start_ts + 4 * 3600 : meta.start_ts + 2 * 3600;
  if (windowKind === "end") t0 = (await openMetricStore(run, { follow: false }).timeRange())![1] - 4 * 3600;
  const t1 = t0 + 4 * 3600;
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), "perf-cache-"));
  const tmpCaches: string[] = [cache];
  try {
    if (what.includes("cache") || what.includes("warm") || what.includes("ready")) await probe({ kind: "prime", run, cacheDir: cache });
    for (const mode of ["cold", "cache"]) {
      if (!what.includes(mode)) continue;
      for (const q of QUERIES) {
        if (!only.includes(q)) continue;
        const walls: number[] = [];
        const cpus: number[] = [];
        for (let i = 0; i < n; i++) {
          let dir = cache;
          if (mode === "cold") tmpCaches.push((dir = fs.mkdtempSync(path.join(os.tmpdir(), "perf-cold-"))));
          const r = await probe({ kind: "cold", run, cacheDir: dir, query: q, t0, t1 });
          walls.push(r.wall as number);
          cpus.push(r.cpu as number);
        }
        console.log(
          `${mode.padEnd(6)} ${q.padEnd(13)} cpu ${f(median(cpus)).padStart(6)} ms (min ${f(Math.min(...cpus))})  wall ${f(median(walls)).padStart(6)} ms (min ${f(Math.min(...walls))})`,
        );
      }
    }
    if (what.includes("warm")) {
      const rs: Record<string, unknown>[] = [];
      for (let i = 0; i < Math.max(1, Math.min(n, 3)); i++) rs.push(await probe({ kind: "warm", run, cacheDir: cache, t0, t1, repeat: 9 }, ["--expose-gc"]));
      for (const q of QUERIES) {
        const cpus = rs.map((r) => (r.warm as Record<string, { cpu: number; wall: number }>)[q]!.cpu);
        const walls = rs.map((r) => (r.warm as Record<string, { cpu: number; wall: number }>)[q]!.wall);
        console.log(`warm   ${q.padEnd(13)} cpu ${f(median(cpus)).padStart(6)} ms  wall ${f(median(walls)).padStart(6)} ms`);
      }
      const r = rs[0]!;
      const g = r as { gpuBytes: number; gpuRows: number; engBytes: number; engRows: number; rssMb: number };
      console.log(`rss ${median(rs.map((x) => x.rssMb as number)).toFixed(0)} MB  gpu ${(g.gpuBytes / g.gpuRows).toFixed(2)} B/row (${g.gpuRows})  engine ${(g.engBytes / g.engRows).toFixed(2)} B/row (${g.engRows})`);
    }
    if (what.includes("ready")) {
      const walls: number[] = [];
      const cpus: number[] = [];
      const boots: number[] = [];
      for (let i = 0; i < n; i++) {
        const r = await probe({ kind: "ready", run, cacheDir: cache });
        walls.push(r.wall as number);
        cpus.push(r.cpu as number);
        boots.push(r.sinceProcessStart as number);
      }
      console.log(`ready (2nd start: open, meta, lanes, range, 4 h util carpet) cpu ${f(median(cpus))} ms  wall ${f(median(walls))} ms  since process start ${f(median(boots))} ms`);
    }
  } finally {
    for (const d of tmpCaches) fs.rmSync(d, { recursive: true, force: true });
  }
}

await main();
