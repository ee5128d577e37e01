/**
 * Torn files of a run killed mid-write (docs/export.md "Torn input"): JSONL files whose
 * last line has no trailing newline. The stores already leave such a partial record out
 * (docs/formats.md 2.4: a reader leaves a partial tail for later); the report
 * names the files so a reader knows the last record is missing.
 */
import fs from "node:fs";
import path from "node:path";

/** Folders of a run that hold JSONL streams (telemetry, its partitions, trajectory sidecars). */
const JSONL_DIRS = ["dashboard", "trajectory"];
const MAX_DEPTH = 3;

function lastByte(file: string, size: number): number | null {
  let fd: number | null = null;
  try {
    fd = fs.openSync(file, "r");
    const b = Buffer.alloc(1);
    return fs.readSync(fd, b, 0, 1, size - 1) === 1 ? b[0]! : null;
  } catch {
    return null;
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}

/** Relative paths (POSIX separators, sorted) of the run's JSONL files whose last byte is not `\n`. */
export function tornFiles(runDir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(runDir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory() && depth < MAX_DEPTH) walk(r, depth + 1);
      else if (e.isFile() && e.name.endsWith(".jsonl")) {
        let size = 0;
        try {
          size = fs.statSync(path.join(runDir, r)).size;
        } catch {
          continue;
        }
        if (size > 0 && lastByte(path.join(runDir, r), size) !== 0x0a) out.push(r);
      }
    }
  };
  for (const d of JSONL_DIRS) walk(d, 1);
  return out.sort();
}
