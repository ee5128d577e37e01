/**
 * Which log files a run's health reads (docs/api.md 9.5.1):
 *  - every `*.log`, `*.out`, `*.err` below `{run}/logs/` (any depth), listed and opened
 *    through the run's confined file access (lib/store/safe-fs.ts): a link that leaves the
 *    run directory is never followed;
 *  - the files an operator names with `serve --run-logs RUN_ID=GLOB` (outside the run
 *    directory, e.g. Slurm's `slurm-%j.out`): shown relative to the glob's fixed prefix,
 *    never by absolute path, opened without following a final symlink.
 */
import type { LogSource } from "@/lib/store/logs/scanner";
import type { RunFs } from "@/lib/store/safe-fs";

export { globSources } from "@/lib/store/logs/glob";

export const LOG_DIR = "logs";
export const LOG_FILE = /\.(?:log|out|err)$/;
/** Bounds of one listing (a runaway directory must not stall the request). */
export const MAX_LOG_FILES = 2000;
export const MAX_LOG_DEPTH = 8;

/** Log files below `{run}/logs/`, names relative to the run directory (`logs/a/b.log`). */
export async function runLogSources(runFs: RunFs): Promise<LogSource[]> {
  const out: LogSource[] = [];
  const walk = async (rel: string, depth: number): Promise<void> => {
    const names = (await runFs.readdir(rel)).sort();
    for (const n of names) {
      if (out.length >= MAX_LOG_FILES) return;
      const child = `${rel}/${n}`;
      const st = await runFs.statOrNull(child);
      if (!st) continue;
      if (st.isDirectory()) {
        if (depth < MAX_LOG_DEPTH) await walk(child, depth + 1);
      } else if (st.isFile() && LOG_FILE.test(n)) {
        out.push({ name: child, open: () => runFs.open(child) });
      }
    }
  };
  await walk(LOG_DIR, 1);
  return out;
}
