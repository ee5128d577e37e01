/**
 * `meta.json` (docs/formats.md §2.5/§4.1): the run header, `json.dumps(indent=1)`
 * layout, no trailing newline, exactly the keys `run_name`, `start_ts`,
 * `args`, `schema_version` in that order.
 *
 * Rewritten at every writer start. Unlike the Python collector we replace it
 * atomically (`meta.json.tmp` + rename) so a reader never sees half a file.
 */
import { join } from "node:path";
import { PyFloat, dumpPyIndent1, parsePyJson, pyFloat } from "./python-json";
import type { PyValue } from "./python-json";
import type { WriterFs } from "./writer-fs";

export const META_FILE = "meta.json";

export interface RunMeta {
  run_name: string;
  /** Epoch seconds (always written as a float). */
  start_ts: number;
  /** Curated CLI args; free-form values (see python-json.ts for float tagging). */
  args: ReadonlyMap<string, PyValue> | { readonly [key: string]: PyValue };
}

export function serializeMeta(meta: RunMeta): string {
  return dumpPyIndent1(
    new Map<string, PyValue>([
      ["run_name", meta.run_name],
      ["start_ts", pyFloat(meta.start_ts)],
      ["args", meta.args],
      ["schema_version", 1],
    ]),
  );
}

export async function writeMeta(fs: WriterFs, dashDir: string, meta: RunMeta): Promise<void> {
  const path = join(dashDir, META_FILE);
  await fs.writeFile(`${path}.tmp`, serializeMeta(meta));
  await fs.rename(`${path}.tmp`, path);
}

/** The previous run header, if a readable one exists (used to keep args across restarts). */
export async function readMeta(fs: WriterFs, dashDir: string): Promise<RunMeta | undefined> {
  const text = await fs.readFileIfExists(join(dashDir, META_FILE));
  if (text === undefined) return undefined;
  try {
    const v = parsePyJson(text);
    if (v === null || typeof v !== "object" || v instanceof Map || Array.isArray(v)) return undefined;
    const o = v as { readonly [key: string]: PyValue };
    const args = o.args;
    const startTs = o.start_ts;
    if (typeof o.run_name !== "string") return undefined;
    if (args === null || typeof args !== "object" || Array.isArray(args) || args instanceof PyFloat) return undefined;
    const start = startTs instanceof PyFloat ? startTs.value : typeof startTs === "number" ? startTs : NaN;
    return { run_name: o.run_name, start_ts: start, args: args as RunMeta["args"] };
  } catch {
    return undefined;
  }
}
