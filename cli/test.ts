/**
 * `npm test`: lint, typecheck, the vitest suites and the Playwright e2e suite, in that
 * order, each printing its own output, then one summary. Every stage runs even when an
 * earlier one failed (so one run shows everything that is wrong); the exit code is
 * non-zero if any stage failed. The last line is "<N> passed, <M> failed" (test counts).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { APP_ROOT } from "./server-process";
import { CliError } from "./common";
import { ensurePrometheus } from "./debian-tools";

interface Stage {
  name: string;
  ok: boolean;
  passed: number;
  failed: number;
  seconds: number;
}

const npx = (bin: string) => path.join(APP_ROOT, "node_modules", ".bin", bin);

function run(name: string, cmd: string, args: string[], env: Record<string, string> = {}): { ok: boolean; seconds: number } {
  process.stdout.write(`\n=== ${name} ===\n`);
  const t0 = Date.now();
  const res = spawnSync(cmd, args, { cwd: APP_ROOT, stdio: "inherit", env: { ...process.env, ...env } });
  return { ok: res.status === 0, seconds: (Date.now() - t0) / 1000 };
}

function readJson<T>(file: string): T | null {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as T;
  } catch {
    return null;
  }
}

function main(): void {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-test-"));
  const only = new Set(process.argv.slice(2));
  const want = (s: string) => only.size === 0 || only.has(s);
  const stages: Stage[] = [];

  if (want("lint")) {
    const r = run("lint", npx("eslint"), [".", "--max-warnings", "0"]);
    stages.push({ name: "lint", ok: r.ok, passed: 0, failed: 0, seconds: r.seconds });
  }
  if (want("typecheck")) {
    const r = run("typecheck", npx("tsc"), ["--noEmit", "-p", "tsconfig.json"]);
    stages.push({ name: "typecheck", ok: r.ok, passed: 0, failed: 0, seconds: r.seconds });
  }
  if (want("unit")) {
    try {
      ensurePrometheus();
    } catch (err) {
      // The Prometheus integration test then fails with the same instructions.
      if (err instanceof CliError) process.stderr.write(`rlboard: ${err.message}\n`);
      else throw err;
    }
    const out = path.join(tmp, "vitest.json");
    const r = run("unit + integration (vitest)", npx("vitest"), ["run", "--reporter=default", "--reporter=json", `--outputFile.json=${out}`]);
    const j = readJson<{ numPassedTests: number; numFailedTests: number }>(out);
    stages.push({ name: "vitest", ok: r.ok, passed: j?.numPassedTests ?? 0, failed: j?.numFailedTests ?? (r.ok ? 0 : 1), seconds: r.seconds });
  }
  if (want("e2e")) {
    const out = path.join(tmp, "playwright.json");
    const r = run("e2e (Playwright, Chromium)", process.execPath, ["--import", "tsx", path.join(APP_ROOT, "cli", "e2e.ts"), "--reporter=list,json"], {
      PLAYWRIGHT_JSON_OUTPUT_NAME: out,
    });
    const j = readJson<{ stats: { expected: number; unexpected: number; flaky: number } }>(out);
    stages.push({
      name: "e2e",
      ok: r.ok,
      passed: (j?.stats.expected ?? 0) + (j?.stats.flaky ?? 0),
      failed: j?.stats.unexpected ?? (r.ok ? 0 : 1),
      seconds: r.seconds,
    });
  }

  process.stdout.write("\n=== summary ===\n");
  for (const s of stages) {
    const counts = s.name === "lint" || s.name === "typecheck" ? "" : ` ${s.passed} passed, ${s.failed} failed`;
    process.stdout.write(`${s.ok ? "ok  " : "FAIL"} ${s.name.padEnd(10)} ${s.seconds.toFixed(0).padStart(4)} s${counts}\n`);
  }
  const passed = stages.reduce((a, s) => a + s.passed, 0);
  const failed = stages.reduce((a, s) => a + s.failed, 0) + stages.filter((s) => !s.ok && s.failed === 0).length;
  process.stdout.write(`${passed} passed, ${failed} failed\n`);
  fs.rmSync(tmp, { recursive: true, force: true });
  process.exit(stages.every((s) => s.ok) ? 0 : 1);
}

main();
