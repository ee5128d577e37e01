/**
 * Compare bench rows (issue #14, docs/bench.md): `compareRuns` (what GET /api/compare and
 * `npm run compare` answer) over two 64-GPU × 8 h runs — the bench's fleet-8h run opened
 * twice, through two independent stores with their own caches (no memo shared).
 * cold = the first report in a fresh process (only the product's persisted caches help);
 * warm = the median of `repeat` further reports in that process.
 *
 * As a child: `node --import tsx bench/compare.ts '{"runs":[…],"cacheDir":…,"repeat":N}'`
 * prints one JSON line.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { compareRuns, type CompareRun } from "@/lib/compare/report";
import { openDumpReader } from "@/lib/store/dumps";
import { openMetricStore } from "@/lib/store/telemetry";
import { median } from "./stats";

interface Task {
  runs: string[];
  cacheDir: string;
  repeat: number;
}

export interface CompareBench {
  coldMs: number;
  warmMs: number;
  kpis: number;
}


async function child(task: Task): Promise<CompareBench> {
  const runs: CompareRun[] = task.runs.map((dir, i) => ({
    id: `run${i}`,
    name: `run${i}`,
    // the same binary-column cache the product keeps in its data dir, one per opened run
    store: openMetricStore(dir, { follow: false, cacheDir: path.join(task.cacheDir, `cmp${i}`, "telemetry") }),
    dumps: openDumpReader(dir, { cacheDir: path.join(task.cacheDir, `cmp${i}`, "dumps") }),
  }));
  let t = performance.now();
  const first = await compareRuns(runs);
  const coldMs = performance.now() - t;
  const warm: number[] = [];
  for (let i = 0; i < task.repeat; i++) {
    t = performance.now();
    await compareRuns(runs);
    warm.push(performance.now() - t);
  }
  return { coldMs, warmMs: median(warm), kpis: first.kpis.length };
}

/** Two fresh processes: the first primes the caches (its figure is dropped), the second is measured. */
export async function benchCompare(runDir: string, cacheDir: string, repeat: number): Promise<CompareBench> {
  const once = () =>
    new Promise<CompareBench>((resolve, reject) => {
      const task: Task = { runs: [runDir, runDir], cacheDir, repeat };
      execFile(
        process.execPath,
        ["--import", "tsx", path.join(import.meta.dirname, "compare.ts"), JSON.stringify(task)],
        { cwd: path.resolve(import.meta.dirname, ".."), timeout: 300_000, maxBuffer: 16 << 20 },
        (err, stdout, stderr) => {
          try {
            const out = JSON.parse(stdout.trim().split("\n").pop() ?? "") as { ok: boolean; error?: string } & CompareBench;
            if (out.ok) resolve(out);
            else reject(new Error(`compare bench failed: ${out.error ?? "?"}`));
          } catch {
            reject(new Error(`compare bench failed: ${err?.message ?? ""} ${stderr.slice(-600)}`));
          }
        },
      );
    });
  await once();
  return once();
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.dirname, "compare.ts") && process.argv[2]) {
  child(JSON.parse(process.argv[2]) as Task)
    .then((r) => process.stdout.write(JSON.stringify({ ok: true, ...r }) + "\n"))
    .catch((e: unknown) => process.stdout.write(JSON.stringify({ ok: false, error: e instanceof Error ? e.message : String(e) }) + "\n"));
}
