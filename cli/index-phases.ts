/**
 * `npm run index-phases -- RUN_DIR...`: write the phase hour index (docs/formats.md §4.16)
 * of runs that have none — a run miles wrote without rlboard's collector, or one written
 * before the collector kept the index — so a server that has never seen the run answers a
 * window without parsing every phase hour. Takes the run's collector lock while it writes
 * (a run a collector is writing is refused: that collector keeps the index itself).
 */
import fs from "node:fs";
import path from "node:path";
import { acquireLock, LockError } from "@/collector/lock";
import { indexPhaseHours } from "@/lib/store/writer/phase-indexer";
import { nodeWriterFs } from "@/lib/store/writer/writer-fs";
import { fail, parseCli } from "./common";

const HELP = `usage: npm run index-phases -- RUN_DIR [RUN_DIR...]
  Write dashboard/index/phases/{hour}.json beside each phase hour of each run whose index is
  missing or no longer matches the hour file, so a fresh server does not parse every phase
  hour of the run to answer a window. Safe to run again; refuses a run a collector is writing.`;

async function main(): Promise<void> {
  const { values, positionals } = parseCli(process.argv.slice(2), { help: { type: "boolean", short: "h" } }, true);
  if (values.help) {
    process.stdout.write(HELP + "\n");
    return;
  }
  if (positionals.length === 0) fail(`a run directory is required\n${HELP}`, 2);
  let failed = 0;
  for (const runDir of positionals) {
    const dash = path.join(runDir, "dashboard");
    if (!fs.existsSync(path.join(dash, "phases"))) {
      process.stderr.write(`rlboard: ${runDir}: no dashboard/phases/ here (not a run directory, or a run without phases)\n`);
      failed++;
      continue;
    }
    let lock;
    try {
      lock = await acquireLock(dash);
    } catch (e) {
      if (!(e instanceof LockError)) throw e;
      process.stderr.write(`rlboard: ${runDir}: ${e.message}; it keeps the index itself\n`);
      failed++;
      continue;
    }
    try {
      const t = performance.now();
      const r = await indexPhaseHours(nodeWriterFs, dash, { warn: (m) => process.stderr.write(`rlboard: ${m}\n`) });
      const left = r.hours - r.indexed.length - r.current.length;
      process.stdout.write(
        `${runDir}: indexed ${r.indexed.length} of ${r.hours} phase hours, ${r.current.length} already current` +
          (left > 0 ? `, ${left} not indexed (a line still being written, or an error above)` : "") +
          ` (${((performance.now() - t) / 1000).toFixed(1)} s)\n`,
      );
      if (left > 0) failed++;
    } finally {
      await lock.release();
    }
  }
  if (failed > 0) process.exit(1);
}

main().catch((e: unknown) => fail(e instanceof Error ? e.message : String(e)));
