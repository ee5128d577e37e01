/**
 * Tools the test suites drive that come from Debian, never from a download of their own
 * (which cannot work offline): Chromium for the e2e suite (never a Playwright browser
 * build) and Prometheus + promtool for the collector's integration test. Missing: install
 * them when we are root with apt, else stop with the one command to run.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { CliError } from "./common";

interface DebianTool {
  /** Absolute paths that must exist afterwards (the first is returned). */
  paths: string[];
  pkg: string;
  purpose: string;
  /** An env variable that points at a custom binary (then nothing is installed). */
  envVar?: string;
}

function ensureDebianTool(tool: DebianTool): string {
  const wanted = (tool.envVar && process.env[tool.envVar]) || tool.paths[0]!;
  const missing = () => [wanted, ...tool.paths.slice(1)].filter((p) => !fs.existsSync(p));
  if (missing().length === 0) return wanted;
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const hasApt = spawnSync("sh", ["-c", "command -v apt-get"]).status === 0;
  if (!isRoot || !hasApt || (tool.envVar && process.env[tool.envVar])) {
    const hint = tool.envVar ? `\n(or set ${tool.envVar})` : "";
    throw new CliError(`${missing().join(", ")} not found (${tool.purpose}). Install it with:\n  sudo apt-get install -y ${tool.pkg}${hint}`);
  }
  process.stderr.write(`rlboard: installing Debian's ${tool.pkg} for ${tool.purpose} (apt-get)…\n`);
  execFileSync("sh", ["-c", `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${tool.pkg} >/dev/null`], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (missing().length) throw new CliError(`apt-get finished but ${missing().join(", ")} is still missing`);
  return wanted;
}

export function ensureChromium(): string {
  return ensureDebianTool({ paths: ["/usr/bin/chromium"], pkg: "chromium", purpose: "the e2e suite", envVar: "CHROMIUM_PATH" });
}

export function ensurePrometheus(): string {
  return ensureDebianTool({ paths: ["/usr/bin/prometheus", "/usr/bin/promtool"], pkg: "prometheus", purpose: "the collector's Prometheus integration test" });
}

export interface PrometheusJob {
  name: string;
  /** host:port */
  targets: string[];
  metricsPath?: string;
  /** static labels added to every series of the job */
  labels?: Record<string, string>;
}

export interface RunningPrometheus {
  url: string;
  /** what it printed so far (for a failing test's message) */
  log(): string;
  stop(): Promise<void>;
}

/**
 * Debian's Prometheus on a free 127.0.0.1 port, scraping `jobs` every `intervalS`, its
 * config and TSDB under `dir`; resolves once `/-/ready` answers 200. For the integration
 * tests (real Prometheus, never a fake).
 */
export async function startPrometheus(opts: { dir: string; jobs: PrometheusJob[]; intervalS?: number; port: number; readyTimeoutMs?: number }): Promise<RunningPrometheus> {
  const bin = ensurePrometheus();
  const interval = `${opts.intervalS ?? 1}s`;
  const yaml = [
    "global:",
    `  scrape_interval: ${interval}`,
    `  scrape_timeout: ${interval}`,
    `  evaluation_interval: ${interval}`,
    "scrape_configs:",
    ...opts.jobs.flatMap((j) => [
      `  - job_name: ${JSON.stringify(j.name)}`,
      ...(j.metricsPath ? [`    metrics_path: ${JSON.stringify(j.metricsPath)}`] : []),
      "    static_configs:",
      `      - targets: ${JSON.stringify(j.targets)}`,
      ...(j.labels ? [`        labels: ${JSON.stringify(j.labels)}`] : []),
    ]),
    "",
  ].join("\n");
  fs.mkdirSync(opts.dir, { recursive: true });
  const config = path.join(opts.dir, "prometheus.yml");
  fs.writeFileSync(config, yaml);
  const url = `http://127.0.0.1:${opts.port}`;
  const child = spawn(bin, [`--config.file=${config}`, `--storage.tsdb.path=${path.join(opts.dir, "tsdb")}`, `--web.listen-address=127.0.0.1:${opts.port}`, "--log.level=warn"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout.on("data", (d: Buffer) => (log += d.toString()));
  child.stderr.on("data", (d: Buffer) => (log += d.toString()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("close", r));
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(killer);
  };
  const end = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  for (;;) {
    const ready = await fetch(`${url}/-/ready`).then((r) => r.status === 200, () => false);
    if (ready) break;
    if (child.exitCode !== null || Date.now() > end) {
      await stop();
      throw new Error(`prometheus did not become ready on ${url}${child.exitCode !== null ? ` (exited ${child.exitCode})` : ""}\n${log.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, log: () => log, stop };
}
