/** Test helper for tests on a real full filesystem (a tmpfs they mount; root only). */
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";

/** Write a filler file into `dir` until its filesystem is full; returns the filler's path. */
export function fillDisk(dir: string): string {
  const path = join(dir, "filler");
  const fd = openSync(path, "w");
  const chunk = Buffer.alloc(1 << 20, 0x66);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
  } finally {
    closeSync(fd);
  }
  // Small writes can still squeeze into the last page; take that too.
  const fd2 = openSync(path, "a");
  try {
    for (;;) writeSync(fd2, chunk, 0, 512);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
  } finally {
    closeSync(fd2);
  }
  return path;
}
