/**
 * One collector per dashboard directory: `dashboard/.collector.lock` holds the
 * owner's pid (first line) and, on Linux, its start time (second line,
 * `start <clock ticks since boot>`, from /proc/<pid>/stat). The file is
 * created with O_EXCL; if it exists and names a live process (including this
 * one: two in-process collectors are refused too), start-up fails.
 *
 * A lock is stale — and taken over at once, with a warning — when its pid is
 * not alive:
 *   - no such process (`kill(pid, 0)` → ESRCH);
 *   - a zombie: after a SIGKILL the dead process stays in the process table
 *     until its parent reaps it, and `kill(pid, 0)` still succeeds on it, so
 *     a restart right after the kill was refused until then. /proc/<pid>/stat
 *     says `Z` (or `X`) for such a process;
 *   - a different process that reused the pid: its start time differs from
 *     the one recorded.
 * Where /proc cannot be read, only the first test applies; the error message
 * names the file so an operator can remove it.
 */
import { readFileSync } from "node:fs";
import { open, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";

export const LOCK_FILE = ".collector.lock";

export class LockError extends Error {}

interface ProcInfo {
  state: string;
  start: string;
}

/** State and start time of `pid` from /proc, or `undefined` where that cannot be read. */
function procInfo(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid …": comm may hold spaces and parentheses; fields restart after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const state = fields[0];
    const start = fields[19]; // field 22 of proc(5), starttime
    return state && start ? { state, start } : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `pid` names a running process (started at `start`, when known). */
export function pidAlive(pid: number, start?: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false; // EPERM: exists, owned by someone else
  }
  const info = procInfo(pid);
  if (!info) return true;
  if (info.state === "Z" || info.state === "X") return false;
  return start === undefined || info.start === start;
}

export interface Lock {
  path: string;
  /** Also reports whether a stale lock was taken over. */
  recoveredStalePid: number | undefined;
  release(): Promise<void>;
}

export async function acquireLock(dashDir: string): Promise<Lock> {
  const path = join(dashDir, LOCK_FILE);
  const self = procInfo(process.pid);
  let recovered: number | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fh = await open(path, "wx", 0o644);
      await fh.writeFile(self ? `${process.pid}\nstart ${self.start}\n` : `${process.pid}\n`);
      await fh.close();
      return {
        path,
        recoveredStalePid: recovered,
        release: async () => {
          const owner = await readFile(path, "utf8").catch(() => "");
          if (Number.parseInt(owner, 10) === process.pid) await unlink(path).catch(() => undefined);
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    const text = await readFile(path, "utf8").catch(() => "");
    const pid = Number.parseInt(text.trim(), 10);
    const start = /^start (\d+)$/m.exec(text)?.[1];
    if (Number.isInteger(pid) && pid > 0 && pidAlive(pid, start)) {
      throw new LockError(`another collector (pid ${pid}) is writing ${dashDir} (lock file ${path})`);
    }
    // Stale (dead, zombie or reused pid) or unreadable/half-written: take it over.
    recovered = Number.isInteger(pid) ? pid : undefined;
    await unlink(path).catch(() => undefined);
  }
  throw new LockError(`cannot take the lock file ${path}`);
}
