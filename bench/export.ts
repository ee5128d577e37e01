/**
 * Offline export bench (#17, docs/export.md "Budget"): the bench's 64-GPU × 8 h fleet run
 * with 2 rollout steps of 512 agentic samples, exported by `npm run export` in a fresh
 * child process (wall time and peak RSS of that process), then the HTML opened from
 * file:// in Chromium with every network request blocked (time until the viewer's
 * `data-ready`). Targets: HTML ≤ 25 MB, export ≤ 20 s, peak RSS ≤ 1 GB, interactive ≤ 3 s.
 *
 * `benchExport(data, log)` is what bench/index.ts calls; `tsx bench/export.ts --child RUN OUT`
 * is the measured child (prints one JSON line).
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "@playwright/test";
import { ensureChromium } from "@/cli/debian-tools";
import { agenticSample, writeRolloutDump, writeTrainDumps, type DemoSample } from "@/lib/demo/dumps";
import { Rng } from "@/lib/demo/prng";
import { corpusWords, makeConversation } from "@/lib/demo/text";
import { DemoTokenizer } from "@/lib/demo/tokenizer";
import { BENCH_DATA_VERSION, BENCH_END_TS, DUMP_SAMPLES, type BenchData } from "./data";

export const EXPORT_TARGETS = { htmlMb: 25, exportS: 20, rssMb: 1024, interactiveS: 3 } as const;
const EXPORT_STEPS = 2;
const APP_ROOT = path.resolve(import.meta.dirname, "..");

export interface ExportBench {
  htmlMb: number;
  jsonMb: number;
  /** First export of the run (empty reader caches: every JSONL stream parsed). */
  exportS: number;
  exportCpuS: number;
  /** Second export with the caches of the first (what the server's route and a repeat `--cache-dir` export see). */
  warmExportS: number;
  warmExportCpuS: number;
  /** Peak RSS over both exports. */
  rssMb: number;
  /** Load average (1 min) when measured: wall times on a shared machine stretch with it. */
  load: number;
  interactiveS: number;
  /** Canvases the viewer drew on its first tab and on Compute Utilization. */
  drawn: { metrics: number; utilization: number };
  requests: string[];
  runDir: string;
}

/** Hard-link every file of `src` into `dst` (same file system: no copy; no symlinks, which readers never follow). */
function linkTree(src: string, dst: string): void {
  fs.mkdirSync(dst, { recursive: true });
  for (const e of fs.readdirSync(src, { withFileTypes: true })) {
    const s = path.join(src, e.name);
    const d = path.join(dst, e.name);
    if (e.isDirectory()) linkTree(s, d);
    else if (e.isFile()) {
      try {
        fs.linkSync(s, d);
      } catch {
        fs.copyFileSync(s, d);
      }
    }
  }
}

/** `<bench>/export-run/`: the fleet's telemetry plus two 512-sample steps (built once per bench data version). */
export async function ensureExportRun(data: BenchData, log: (s: string) => void): Promise<string> {
  const dir = path.join(data.root, "export-run");
  const stamp = path.join(dir, ".stamp");
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === BENCH_DATA_VERSION) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  log(`export: building ${dir} (fleet telemetry + ${EXPORT_STEPS} steps × ${DUMP_SAMPLES} samples, once)…`);
  linkTree(path.join(data.fleetDir, "dashboard"), path.join(dir, "dashboard"));
  const rng = new Rng(1717).fork("bench-export");
  const tok = new DemoTokenizer(corpusWords());
  tok.writeTo(path.join(dir, "tokenizer"));
  for (let rolloutId = 0; rolloutId < EXPORT_STEPS; rolloutId++) {
    const samples: DemoSample[] = [];
    for (let g = 0; g < DUMP_SAMPLES / 8; g++) {
      const family = rng.pick(["math", "search", "code"]);
      for (let j = 0; j < 8; j++) {
        const conv = makeConversation(rng.fork(`c${rolloutId}.${g}.${j}`), { pCorrect: 0.5, runaway: g === 5 && j === 3, family });
        samples.push(
          agenticSample(rng.fork(`s${rolloutId}.${g}.${j}`), tok, conv, { index: g * 8 + j, groupIndex: g, maxResponseLen: 8192, versionOfTurn: () => String(rolloutId) }),
        );
      }
    }
    const writtenAt = BENCH_END_TS - 3600 * (EXPORT_STEPS - rolloutId);
    await writeRolloutDump({ runDir: dir, rolloutId, evaluation: false, samples, writtenAt, mirror: true, sidecar: true });
    await writeTrainDumps(rng.fork(`train${rolloutId}`), { runDir: dir, rolloutId, samples, layout: { dp: 4, tp: 2 }, writtenAt: writtenAt + 5 });
  }
  fs.writeFileSync(stamp, BENCH_DATA_VERSION);
  return dir;
}

interface ChildOut {
  ms: number;
  /** user + system CPU seconds of the export (a loaded machine stretches wall time, not this). */
  cpuS: number;
  maxRssKb: number;
  htmlBytes: number;
  jsonBytes: number;
}

function runChild(runDir: string, out: string, cacheDir: string): Promise<ChildOut> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", path.join(import.meta.dirname, "export.ts"), "--child", runDir, out, cacheDir],
      { cwd: APP_ROOT, timeout: 300_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`export child failed: ${stderr || err.message}`));
        resolve(JSON.parse(stdout.trim().split("\n").pop() ?? "{}") as ChildOut);
      },
    );
  });
}

async function openOffline(html: string): Promise<{ interactiveS: number; drawn: ExportBench["drawn"]; requests: string[] }> {
  const browser = await chromium.launch({ executablePath: ensureChromium() });
  try {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const requests: string[] = [];
    await ctx.route("**/*", (r) => {
      const url = r.request().url();
      if (url === `file://${html}`) return r.continue();
      requests.push(url);
      return r.abort();
    });
    const page = await ctx.newPage();
    await page.goto(`file://${html}`);
    await page.waitForSelector("html[data-ready='1']", { timeout: 60_000 });
    // time from navigation start until the first tab drew (the viewer stamps it)
    const interactiveS = Number(await page.evaluate(() => document.documentElement.dataset.readyMs)) / 1000;
    const count = () => page.evaluate(() => [...document.querySelectorAll("canvas[data-drawn]")].filter((c) => (c as HTMLElement).offsetParent !== null && Number((c as HTMLElement).dataset.drawn) > 0).length);
    const metrics = await count();
    await page.click("button[data-tab='utilization']");
    await page.waitForSelector("#panel-utilization canvas[data-drawn]");
    const utilization = await count();
    return { interactiveS, drawn: { metrics, utilization }, requests };
  } finally {
    await browser.close();
  }
}

export async function benchExport(data: BenchData, log: (s: string) => void): Promise<ExportBench> {
  const runDir = await ensureExportRun(data, log);
  const out = path.join(data.root, "export-out");
  fs.mkdirSync(out, { recursive: true });
  const cacheDir = path.join(data.root, "export-cache");
  fs.rmSync(cacheDir, { recursive: true, force: true });
  log("export: exporting in a child process (cold caches, then warm)…");
  const load = os.loadavg()[0]!;
  const child = await runChild(runDir, out, cacheDir);
  const warm = await runChild(runDir, out, cacheDir);
  log("export: opening the report from file:// with the network blocked…");
  const page = await openOffline(path.join(out, "report.html"));
  return {
    htmlMb: child.htmlBytes / 1e6,
    jsonMb: child.jsonBytes / 1e6,
    exportS: child.ms / 1000,
    exportCpuS: child.cpuS,
    warmExportS: warm.ms / 1000,
    warmExportCpuS: warm.cpuS,
    rssMb: Math.max(child.maxRssKb, warm.maxRssKb) / 1024,
    load,
    interactiveS: page.interactiveS,
    drawn: page.drawn,
    requests: page.requests,
    runDir,
  };
}

async function child(runDir: string, out: string, cacheDir: string): Promise<void> {
  const { exportRunDir } = await import("@/lib/export");
  const t = performance.now();
  const c = process.cpuUsage();
  const { html, json } = await exportRunDir(runDir, { steps: null, samples_per_step: 4, max_lanes: 64 }, { cacheDir });
  const cpu = process.cpuUsage(c);
  fs.writeFileSync(path.join(out, "report.html"), html);
  fs.writeFileSync(path.join(out, "report.json"), json);
  const ms = performance.now() - t;
  process.stdout.write(JSON.stringify({ ms, cpuS: (cpu.user + cpu.system) / 1e6, maxRssKb: process.resourceUsage().maxRSS, htmlBytes: Buffer.byteLength(html), jsonBytes: Buffer.byteLength(json) } satisfies ChildOut) + "\n");
}

if (process.argv[2] === "--child") {
  child(process.argv[3]!, process.argv[4]!, process.argv[5]!).catch((err: unknown) => {
    process.stderr.write(String(err instanceof Error ? err.stack : err) + "\n");
    process.exit(1);
  });
} else if (import.meta.url === `file://${process.argv[1]}`) {
  // standalone: `tsx bench/export.ts [--data-dir ./data]` prints the figures
  const { ensureBenchData } = await import("./data");
  const { resolveDataDir } = await import("@/cli/common");
  const i = process.argv.indexOf("--data-dir");
  const data = await ensureBenchData(resolveDataDir(i > 0 ? process.argv[i + 1] : undefined), (s) => process.stderr.write(`bench: ${s}\n`));
  const r = await benchExport(data, (s) => process.stderr.write(`bench: ${s}\n`));
  const T = EXPORT_TARGETS;
  const row = (name: string, v: number, unit: string, target: number) =>
    `${name.padEnd(28)} ${v.toFixed(2).padStart(8)} ${unit.padEnd(3)} ≤ ${target} ${v <= target ? "PASS" : "MISS"}`;
  process.stdout.write(
    [
      row("export HTML size", r.htmlMb, "MB", T.htmlMb),
      row("export wall time (cold)", r.exportS, "s", T.exportS),
      row("export CPU time (cold)", r.exportCpuS, "s", T.exportS),
      row("export wall time (warm)", r.warmExportS, "s", T.exportS),
      row("export CPU time (warm)", r.warmExportCpuS, "s", T.exportS),
      row("export peak RSS", r.rssMb, "MB", T.rssMb),
      row("report interactive", r.interactiveS, "s", T.interactiveS),
      `report JSON ${r.jsonMb.toFixed(2)} MB; canvases drawn: metrics ${r.drawn.metrics}, utilization ${r.drawn.utilization}; network requests attempted: ${r.requests.length}; load average ${r.load.toFixed(1)}`,
      "",
    ].join("\n"),
  );
}
