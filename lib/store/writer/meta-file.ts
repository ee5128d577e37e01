/**
 * Writing and re-reading `meta.json` in a dashboard dir (format: lib/store/format/meta.ts).
 * Unlike the Python collector we replace it atomically (`meta.json.tmp` + rename) so a
 * reader never sees half a file.
 */
import { join } from "node:path";
import { META_FILE, parseMetaPy, serializeMeta, type RunMeta } from "@/lib/store/format";
import { replaceFile, type WriterFs } from "./writer-fs";

export async function writeMeta(fs: WriterFs, dashDir: string, meta: RunMeta): Promise<void> {
  await replaceFile(fs, join(dashDir, META_FILE), serializeMeta(meta));
}

/** The previous run header, if a readable one exists (used to keep args across restarts). */
export async function readMeta(fs: WriterFs, dashDir: string): Promise<RunMeta | undefined> {
  const text = await fs.readFileIfExists(join(dashDir, META_FILE));
  return text === undefined ? undefined : parseMetaPy(text);
}
