/**
 * Confined file access below one run directory (docs/api.md 1.1, issue #11 3c).
 *
 * Policy:
 *  - Every file the stores open inside a run directory goes through a `RunFs`: the
 *    target is `realpath`ed and refused unless it resolves inside the run directory's
 *    own real path (taken once, when first needed). A symlink that stays inside the run
 *    directory may be followed; one that leaves it (`trajectory/0.jsonl → /etc/passwd`,
 *    `tokenizer/ → /elsewhere`) is never opened.
 *  - Files are opened by their resolved path with `O_NOFOLLOW`, so a last component
 *    swapped for a symlink between the check and the open fails instead of being followed.
 *  - Refusal is an `ApiError("forbidden")` whose message names the file relative to the
 *    run directory and says it points outside — never the absolute target, never bytes.
 *  - `readdir` leaves out entries that resolve outside (and dangling links); callers
 *    that treat a missing file as "absent" may do the same with `isOutside`.
 *  - A missing file keeps its OS error (ENOENT/ENOTDIR), so "absent" stays distinguishable.
 */
import fs from "node:fs";
import path from "node:path";
import { ApiError } from "@/lib/contracts/errors";

const { O_RDONLY, O_NOFOLLOW } = fs.constants;
/** Read-only open that refuses a symlink as the last component (0 where unsupported). */
export const READ_NOFOLLOW = O_RDONLY | (O_NOFOLLOW ?? 0);

const REFUSALS = new WeakSet<object>();

/** The refusal for `rel` (relative to the run directory, `/`-separated). */
export function outsideError(rel: string): ApiError {
  const err = new ApiError("forbidden", `${rel} points outside the run directory`);
  REFUSALS.add(err);
  return err;
}

/** True for the refusal thrown by a `RunFs` (a file resolving outside the run directory). */
export function isOutside(err: unknown): boolean {
  return typeof err === "object" && err !== null && REFUSALS.has(err);
}

function isMissing(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

function inside(root: string, real: string): boolean {
  if (real === root) return true;
  const base = root.endsWith(path.sep) ? root : root + path.sep;
  return real.startsWith(base);
}

/** `/`-separated relative name (what messages show). */
export function relName(rel: string): string {
  return rel.split(path.sep).join("/");
}

export class RunFs {
  /** The run directory as given (paths handed out by `abs` live below it). */
  readonly dir: string;
  private realRoot: string | null = null;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** The run directory's real path (realpath once; until it exists, the resolved path). */
  root(): string {
    if (this.realRoot !== null) return this.realRoot;
    try {
      this.realRoot = fs.realpathSync(this.dir);
      return this.realRoot;
    } catch {
      return path.resolve(this.dir);
    }
  }

  /** `dir/rel` without any check (for messages and cache keys only). */
  abs(rel: string): string {
    return path.join(this.dir, rel);
  }

  /** Relative name of an absolute path below the run directory (given or real form). */
  relOf(abs: string): string {
    const a = path.resolve(abs);
    for (const base of [path.resolve(this.dir), this.root()]) {
      if (inside(base, a)) return relName(path.relative(base, a));
    }
    return path.basename(a);
  }

  /**
   * Real path of `rel` (relative to the run directory), or the `outsideError` when it
   * resolves outside. A missing target rejects with its OS error (ENOENT, ENOTDIR).
   */
  async resolve(rel: string): Promise<string> {
    const real = await fs.promises.realpath(this.abs(rel));
    return this.check(rel, real);
  }

  resolveSync(rel: string): string {
    return this.check(rel, fs.realpathSync(this.abs(rel)));
  }

  private check(rel: string, real: string): string {
    if (!inside(this.root(), real)) throw outsideError(relName(rel));
    return real;
  }

  /** Log `rel` (relative name) and `what` once per process for this run directory. */
  warnOnce(rel: string, what: string): void {
    warnOnce(this.dir, relName(rel), what);
  }

  /**
   * Open `rel` read-only after the check (O_NOFOLLOW on the resolved path), then check
   * what was really opened: a parent directory swapped for a symlink between the check
   * and the open would otherwise be followed (Linux: the fd's /proc link names the file).
   */
  async open(rel: string): Promise<fs.promises.FileHandle> {
    const fh = await fs.promises.open(await this.resolve(rel), READ_NOFOLLOW);
    try {
      this.checkOpened(rel, fh.fd);
    } catch (err) {
      await fh.close();
      throw err;
    }
    return fh;
  }

  private checkOpened(rel: string, fd: number): void {
    let actual: string;
    try {
      actual = fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return; // no /proc (not Linux): the realpath check above is what we have
    }
    this.check(rel, actual);
  }

  async readFile(rel: string): Promise<Buffer> {
    const fh = await this.open(rel);
    try {
      return await fh.readFile();
    } finally {
      await fh.close();
    }
  }

  readFileSync(rel: string): Buffer {
    const fd = fs.openSync(this.resolveSync(rel), READ_NOFOLLOW);
    try {
      this.checkOpened(rel, fd);
      return fs.readFileSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  /** `stat` of the resolved target (follows links that stay inside). */
  async stat(rel: string, opts: { bigint: true }): Promise<fs.BigIntStats>;
  async stat(rel: string, opts?: { bigint?: false }): Promise<fs.Stats>;
  async stat(rel: string, opts: { bigint?: boolean } = {}): Promise<fs.Stats | fs.BigIntStats> {
    const real = await this.resolve(rel);
    return opts.bigint ? fs.promises.stat(real, { bigint: true }) : fs.promises.stat(real);
  }

  /**
   * `stat`, or null when missing OR resolving outside (callers that treat both as
   * absent; the latter is logged once).
   */
  async statOrNull(rel: string): Promise<fs.Stats | null> {
    try {
      return await this.stat(rel);
    } catch (err) {
      return this.absent(rel, err);
    }
  }

  statOrNullSync(rel: string): fs.Stats | null {
    try {
      return fs.statSync(this.resolveSync(rel));
    } catch (err) {
      return this.absent(rel, err);
    }
  }

  private absent(rel: string, err: unknown): null {
    if (isOutside(err)) {
      this.warnOnce(rel, "points outside the run directory; ignored");
      return null;
    }
    if (isMissing(err)) return null;
    throw err;
  }

  /**
   * Names in directory `rel` whose entries resolve inside the run directory (plain
   * entries are kept without a realpath; symlinks are resolved and dropped when they
   * leave the run directory or dangle). A missing directory, or one that itself
   * resolves outside, lists as empty.
   */
  async readdir(rel: string): Promise<string[]> {
    const dir = await this.dirEntries(rel);
    if (!dir) return [];
    const { real, entries } = dir;
    const root = this.root();
    const out: string[] = [];
    for (const e of entries) {
      if (!e.isSymbolicLink()) {
        out.push(e.name);
        continue;
      }
      const target = await fs.promises.realpath(path.join(real, e.name)).catch(() => null);
      if (target !== null && inside(root, target)) out.push(e.name);
      else if (target !== null) this.warnOnce(relName(path.join(rel, e.name)), "points outside the run directory; ignored");
    }
    return out;
  }

  /**
   * `readdir` with the `stat` of what each listed entry resolves to: the same names, each
   * with the stat `statOrNull` gives it (an entry that vanished since the listing is left
   * out). The directory is resolved once and each entry `lstat`ed: one that is not a
   * symlink is inside the run directory as its real directory is, so that is its stat —
   * no `realpath` each; a symlink is resolved and checked as `stat` does. (#20: a stream's re-stat of a
   * 1024-GPU day's 24 hour files spent ~0.4 ms of the event loop a file in realpath and
   * stat, every 2 s a stream was read.)
   */
  async statEntries(rel: string): Promise<Map<string, fs.Stats>> {
    const out = new Map<string, fs.Stats>();
    const dir = await this.dirEntries(rel);
    if (!dir) return out;
    const { real } = dir;
    const names = dir.entries.map((e) => e.name);
    const stats = await Promise.all(
      names.map(async (name): Promise<fs.Stats | null> => {
        let st: fs.Stats;
        try {
          st = await fs.promises.lstat(path.join(real, name));
        } catch (err) {
          if (isMissing(err)) return null; // gone since the listing
          throw err;
        }
        return st.isSymbolicLink() ? this.statOrNull(path.join(rel, name)) : st;
      }),
    );
    names.forEach((name, i) => {
      const st = stats[i];
      if (st) out.set(name, st);
    });
    return out;
  }

  /**
   * Directory `rel` resolved and listed, or null when it is missing or resolves outside
   * the run directory (logged once): what `readdir` and `statEntries` list.
   */
  private async dirEntries(rel: string): Promise<{ real: string; entries: fs.Dirent[] } | null> {
    let real: string;
    try {
      real = await this.resolve(rel);
    } catch (err) {
      if (isMissing(err)) return null;
      if (isOutside(err)) {
        this.warnOnce(`${relName(rel)}/`, "points outside the run directory; ignored");
        return null;
      }
      throw err;
    }
    try {
      return { real, entries: await fs.promises.readdir(real, { withFileTypes: true }) };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }
}

const warned = new Set<string>();
/** One server-log line per run, file and problem (names relative to the run directory). */
function warnOnce(dir: string, rel: string, what: string): void {
  const key = `${dir}\u0000${rel}\u0000${what}`;
  if (warned.has(key)) return;
  if (warned.size > 4096) warned.clear();
  warned.add(key);
  console.warn(`[rlboard] ${dir}: ${rel} ${what}`);
}
