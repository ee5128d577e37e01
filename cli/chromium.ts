/**
 * The e2e suite drives Debian's Chromium (never a Playwright browser download, which
 * cannot work offline). Missing: install it when we are root with apt, else stop with the
 * one command to run.
 */
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import { CliError } from "./common";

export function ensureChromium(): string {
  const wanted = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
  if (fs.existsSync(wanted)) return wanted;
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const hasApt = spawnSync("sh", ["-c", "command -v apt-get"]).status === 0;
  if (!isRoot || !hasApt || process.env.CHROMIUM_PATH) {
    throw new CliError(`Chromium not found at ${wanted}. Install it with:\n  sudo apt-get install -y chromium\n(or set CHROMIUM_PATH)`);
  }
  process.stderr.write("rlboard: installing Debian's chromium for the e2e suite (apt-get)…\n");
  execFileSync("sh", ["-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null"], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (!fs.existsSync(wanted)) throw new CliError(`apt-get finished but ${wanted} is still missing`);
  return wanted;
}
