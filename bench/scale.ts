/**
 * Cost growth with fleet size and run length (issue #20 "Scale", docs/bench.md "Scaling"):
 * `npx tsx bench/scale.ts --data-dir DIR --nodes N --hours H [--rounds 3] [--gen-only] [--json FILE]`
 *
 * Writes a fleet run of N nodes × 8 GPUs (one engine per node, full metric whitelist,
 * 2 s scrapes, phases for every rank, a straggler and a stall at the end) through the
 * project's own writers (lib/demo/fleet.ts → RunWriter) into `DIR/bench-scale/<N×8>g-<H>h/`
 * (reused while its stamp matches), then times the fleet queries of the served table
 * (bench/http.ts) over real HTTP against the production server, exactly as the served rows:
 * first request after each of `rounds` restarts, then warm medians.
 *
 * Generation speed is printed per 10 % so a big size can be extrapolated from a small one.
 */
import fs from "node:fs";
import path from "node:path";
import { fail, parseCli } from "@/cli/common";
import { buildIfNeeded } from "@/cli/server-process";
import { buildIsStale, removeBuild } from "@/cli/build-freshness";
import { openMetricStore } from "@/lib/store/telemetry";
import { ensureScaleRun } from "./data";
import { benchHttp, httpQueries } from "./http";
import { median } from "./stats";

const log = (s: string) => process.stderr.write(`scale: ${s}\n`);

async function main(): Promise<void> {
  const { values } = parseCli(process.argv.slice(2), {
    "data-dir": { type: "string", default: "./data" },
    nodes: { type: "string", default: "8" },
    hours: { type: "string", default: "8" },
    rounds: { type: "string", default: "3" },
    "gen-only": { type: "boolean", default: false },
    json: { type: "string" },
  });
  const nodes = Number(values.nodes);
  const hours = Number(values.hours);
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > 128 || !(hours > 0 && hours <= 48)) throw new Error("--nodes 1..128, --hours (0, 48]");
  const s = await ensureScaleRun(path.resolve(values["data-dir"]), nodes, hours, log);
  if (values["gen-only"]) return;
  const store = openMetricStore(s.runDir, { follow: false });
  const range = await store.timeRange();
  if (!range) throw new Error("no time range");
  const t1 = range[1];
  const t0 = t1 - 4 * 3600;
  // 1 Hz per GPU (the generator's rate): counting them would read the whole run.
  const gpuRows = Math.round(nodes * 8 * (range[1] - range[0]));
  const queries = httpQueries({ fleetRun: path.basename(s.runDir), dumpRun: "none", t0, t1 }).filter((q) => !q.name.startsWith("rollout/"));
  if (buildIsStale()) removeBuild();
  await buildIfNeeded(log);
  const h = await benchHttp({ runsRoot: s.root, queries, rounds: Number(values.rounds), log });
  const rows = queries.map((q) => ({
    query: q.name,
    cold: median(h.cold[q.name]!),
    coldRange: [Math.min(...h.cold[q.name]!), Math.max(...h.cold[q.name]!)],
    warm: median(h.warm[q.name]!),
    warmRange: [Math.min(...h.warm[q.name]!), Math.max(...h.warm[q.name]!)],
  }));
  const out = { gpus: nodes * 8, hours, gpuRows, bytes: s.bytes, genS: s.genS, rssMb: median(h.rssMb), rows };
  for (const r of rows)
    process.stdout.write(`${r.query.padEnd(44)} cold ${r.cold.toFixed(1)} [${r.coldRange.map((x) => x.toFixed(0)).join("–")}]  warm ${r.warm.toFixed(1)} [${r.warmRange.map((x) => x.toFixed(0)).join("–")}]\n`);
  process.stdout.write(`gpus ${out.gpus}, hours ${hours}, gpu_util rows ${gpuRows}, ${(s.bytes / 1048576).toFixed(0)} MB, RSS ${out.rssMb.toFixed(0)} MB\n`);
  if (values.json) fs.writeFileSync(values.json, JSON.stringify(out, null, 2));
}

main().catch((err: unknown) => fail(err instanceof Error ? (err.stack ?? err.message) : String(err)));
