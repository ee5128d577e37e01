/**
 * One collector per dashboard directory: `dashboard/.collector.lock` holds the
 * owner's pid. The file is created with O_EXCL; if it exists and names a live
 * process (including this one: two in-process collectors are refused too),
 * start-up fails. A lock whose pid is dead (crash, SIGKILL) is stale and is
 * replaced. PID reuse after a crash can make a stale lock look alive; the
 * error message names the file so an operator can remove it.
 */
import { open, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";

export const LOCK_FILE = ".collector.lock";

export class LockError extends Error {}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"; // exists, owned by someone else
  }
}

export interface Lock {
  path: string;
  /** Also reports whether a stale lock was taken over. */
  recoveredStalePid: number | undefined;
  release(): Promise<void>;
}

export async function acquireLock(dashDir: string): Promise<Lock> {
  const path = join(dashDir, LOCK_FILE);
  let recovered: number | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fh = await open(path, "wx", 0o644);
      await fh.writeFile(`${process.pid}\n`);
      await fh.close();
      return {
        path,
        recoveredStalePid: recovered,
        release: async () => {
          const owner = await readFile(path, "utf8").catch(() => "");
          if (owner.trim() === String(process.pid)) await unlink(path).catch(() => undefined);
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    const text = await readFile(path, "utf8").catch(() => "");
    const pid = Number.parseInt(text.trim(), 10);
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
      throw new LockError(`another collector (pid ${pid}) is writing ${dashDir} (lock file ${path})`);
    }
    // Stale (dead pid) or unreadable/half-written: take it over.
    recovered = Number.isInteger(pid) ? pid : undefined;
    await unlink(path).catch(() => undefined);
  }
  throw new LockError(`cannot take the lock file ${path}`);
}
