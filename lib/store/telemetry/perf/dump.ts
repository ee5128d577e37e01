/**
 * Writes every query's full result (mid window and newest 4 h) as JSON, for byte-identity
 * checks across changes: `npx tsx lib/store/telemetry/perf/dump.ts RUN OUT.json [cacheDir]`.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const [run, out, cacheDir] = process.argv.slice(2) as [string, string, string | undefined];
const meta = JSON.parse(fs.readFileSync(path.join(run, "dashboard", "meta.json"), "utf8")) as { start_ts: number };
const t0 = meta.start_ts + 2 * 3600;
const task = { kind: "dump", run, cacheDir: cacheDir ?? null, t0, t1: t0 + 4 * 3600, out: path.resolve(out) };
execFileSync(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "probe.ts"), JSON.stringify(task)], { stdio: "inherit" });
