/**
 * Tools the test suites drive that come from Debian, never from a download of their own
 * (which cannot work offline): Chromium for the e2e suite (never a Playwright browser
 * build) and Prometheus + promtool for the collector's integration test. Missing: install
 * them when we are root with apt, else stop with the one command to run.
 */
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
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
