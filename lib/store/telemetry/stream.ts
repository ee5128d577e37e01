/**
 * File sets of one stream.
 *
 * PartitionedStream: the legacy flat `{stream}.jsonl` (key "legacy", spans all time) first,
 * then `{stream}/YYYYMMDD_HH.jsonl` in key order (other stems are ignored). The listing and
 * sizes are re-read at most every `statIntervalMs` (on query; no timers), so any hour file
 * may grow and is tailed the next time a window touches it. Parsed blocks are kept in an
 * LRU of `maxBlocks` files and `maxBytes` bytes (an evicted file is re-parsed, or re-loaded
 * from the binary cache, next time).
 *
 * FlatStream: one file (metrics / topology / data_buffer), parsed on first use; in follow
 * mode re-stat'ed and tailed at most every `statIntervalMs`, otherwise frozen after the
 * first read (the Python server froze them at startup).
 *
 * With a `RunFs` (the store passes the run's), listings, stats and opens are confined to
 * the run directory (lib/store/safe-fs.ts): a file or hour file resolving outside it is
 * treated as absent. Stats carry the inode, so a file replaced by rename is re-read from
 * byte 0 (tail-file.ts), and the signature changes with it.
 */
import fs from "node:fs";
import path from "node:path";
import type { RunFs } from "@/lib/store/safe-fs";
import { HOUR_FILE_RE, hourStartOfKey, HOUR_S, parseLenientJson } from "@/lib/store/format";
import { TailFile, type BlockCodec } from "@/lib/store/telemetry/tail-file";

export interface StreamOptions {
  statIntervalMs: number;
  maxBlocks: number;
  /**
   * Bytes of parsed blocks kept resident (the codec's `bytes`): past it the least recently
   * used are dropped too, down to the newest one. 24 hours of a 1024-GPU run's gpu_util
   * are ~900 MB of columns: a count alone let a pan across the day take the server to 3.5 GB.
   */
  maxBytes?: number;
  /**
   * Treat every hour file as closed (a run that is not followed does not change under
   * us); otherwise only hours older than the newest are closed.
   */
  allClosed?: boolean;
  /** Called for a closed partition before parsing it (binary cache); may adopt a block. */
  beforeRead?: (file: TailFile<unknown>) => Promise<void>;
  /** Called after a closed partition was parsed from JSON (binary cache write). */
  afterRead?: (file: TailFile<unknown>) => void;
  /** Confine every listing, stat and open to this run directory (safe-fs.ts). */
  fsys?: RunFs;
}

interface FileStat {
  size: number;
  mtimeMs: number;
  ino: number;
  dev: number;
  isFile(): boolean;
}

/** `stat` of an absolute path, confined when `fsys` is given; null when absent or outside. */
export function statFile(fsys: RunFs | undefined, abs: string): Promise<FileStat | null> {
  if (fsys) return fsys.statOrNull(fsys.relOf(abs));
  return fs.promises.stat(abs).catch(() => null);
}

/**
 * Identity of a file set for results kept across restarts (MetricStore.keptMemo): key,
 * size, inode and mtime of each file, so a file rewritten in place is a new version.
 */
export function filesStamp(files: readonly { key: string; size: number; ino: number; mtimeMs: number }[]): string {
  return files.map((f) => `${f.key}:${f.size}:${f.ino}:${f.mtimeMs}`).join(",");
}

const KEY_FILE = HOUR_FILE_RE;
const EDGE_BYTES = 65536;

export class PartitionedStream<B> {
  private readonly byKey = new Map<string, TailFile<B>>();
  private ordered: TailFile<B>[] = [];
  private lastRefresh = -Infinity;
  private refreshing: Promise<void> | null = null;
  private readonly lru: TailFile<B>[] = [];
  private edgeCache = new Map<string, { size: number; stamps: number[] }>();
  /** `(key, size)` list of the last refresh; changes whenever any file appears or grows. */
  signature = "";

  constructor(
    readonly root: string,
    readonly name: string,
    private readonly codec: BlockCodec<B>,
    private readonly opts: StreamOptions,
  ) {}

  /** Current files in read order (legacy first), after a throttled re-stat. */
  async files(force = false): Promise<readonly TailFile<B>[]> {
    if (force || performance.now() - this.lastRefresh >= this.opts.statIntervalMs) await this.refresh();
    return this.ordered;
  }

  refresh(): Promise<void> {
    if (!this.refreshing) {
      this.refreshing = this.doRefresh().finally(() => {
        this.lastRefresh = performance.now();
        this.refreshing = null;
      });
    }
    return this.refreshing;
  }

  private async doRefresh(): Promise<void> {
    const dir = path.join(this.root, this.name);
    const fsys = this.opts.fsys;
    // Confined: the hour files' stats come with the listing (RunFs.statEntries).
    let listed: Map<string, FileStat> | null = null;
    let names: string[] = [];
    try {
      if (fsys) names = [...(listed = await fsys.statEntries(fsys.relOf(dir))).keys()];
      else names = await fs.promises.readdir(dir);
    } catch {
      names = [];
    }
    const keys: string[] = [];
    for (const n of names) {
      const m = KEY_FILE.exec(n);
      if (m && hourStartOfKey(m[1]!) !== null) keys.push(m[1]!);
    }
    keys.sort();
    const candidates: [string, string, number | null][] = [
      ["legacy", path.join(this.root, `${this.name}.jsonl`), null],
      ...keys.map((k): [string, string, number | null] => [k, path.join(dir, `${k}.jsonl`), hourStartOfKey(k)]),
    ];
    const stats = await Promise.all(
      candidates.map(([key, p]) => (listed && key !== "legacy" ? Promise.resolve(listed.get(`${key}.jsonl`) ?? null) : statFile(fsys, p).catch(() => null))),
    );
    const ordered: TailFile<B>[] = [];
    candidates.forEach(([key, p, hs], i) => {
      const st = stats[i];
      if (!st || !st.isFile()) return;
      let f = this.byKey.get(key);
      if (!f) this.byKey.set(key, (f = new TailFile<B>(p, key, hs, this.codec, this.opts.fsys ?? null)));
      f.size = st.size;
      f.mtimeMs = st.mtimeMs;
      f.ino = st.ino;
      f.dev = st.dev;
      ordered.push(f);
    });
    this.ordered = ordered;
    this.signature = ordered.map((f) => `${f.key}:${f.size}:${f.ino}`).join(",");
  }

  /** Newest hour key (partitions older than it are "closed"). */
  private newestKey(): string | null {
    const last = this.ordered[this.ordered.length - 1];
    return last && last.key !== "legacy" ? last.key : null;
  }

  /** A partition that no longer grows: older than the newest hour, or any hour when all are closed. */
  private isClosed(f: TailFile<B>, newest: string | null): boolean {
    return f.key !== "legacy" && newest !== null && (this.opts.allClosed === true || f.key < newest);
  }

  /**
   * The blocks of the closed partitions overlapping `[t0, t1]` that are resident or in the
   * data dir's binary cache, adopted from it — nothing is parsed: a partition without a
   * valid cache entry, the open newest one and the legacy file are left out (and left to
   * the first query that reads them). For the server's warm-up (lib/timeline/warm.ts).
   */
  async cachedWindow(t0: number | null, t1: number | null): Promise<B[]> {
    const load = this.opts.beforeRead;
    if (!load) return [];
    const files = await this.windowFiles(t0, t1); // refreshes the file list the newest key comes from
    const newest = this.newestKey();
    const closed = files.filter((f) => this.isClosed(f, newest));
    await Promise.all(closed.filter((f) => !f.block).map((f) => load(f)));
    return this.read(closed.filter((f) => f.block !== null));
  }

  /** Parsed blocks of `files`, caught up to their current size, in the given order. */
  async read(files: readonly TailFile<B>[]): Promise<B[]> {
    const newest = this.newestKey();
    return Promise.all(
      files.map(async (f) => {
        const closed = this.isClosed(f, newest);
        if (closed && !f.block && this.opts.beforeRead) await this.opts.beforeRead(f);
        const wasEmpty = f.offset === 0;
        const block = await f.read();
        this.touch(f);
        if (closed) {
          f.seal();
          if (wasEmpty && this.opts.afterRead) this.opts.afterRead(f);
        }
        return block;
      }),
    );
  }

  /**
   * Files overlapping `[t0, t1]` by partition hour (null bounds skip nothing); the legacy
   * file always takes part (docs/api.md 8.1).
   */
  async windowFiles(t0: number | null, t1: number | null): Promise<readonly TailFile<B>[]> {
    const all = await this.files();
    return all.filter((f) => {
      if (f.hourStart === null) return true;
      if (t0 !== null && f.hourStart + HOUR_S <= t0) return false;
      if (t1 !== null && f.hourStart > t1) return false;
      return true;
    });
  }

  async window(t0: number | null, t1: number | null): Promise<B[]> {
    return this.read(await this.windowFiles(t0, t1));
  }

  async hasData(): Promise<boolean> {
    return (await this.files()).some((f) => f.size > 0);
  }

  corruptLines(): number {
    let n = 0;
    for (const f of this.byKey.values()) n += f.corrupt;
    return n;
  }

  private touch(f: TailFile<B>): void {
    const i = this.lru.indexOf(f);
    if (i >= 0) this.lru.splice(i, 1);
    this.lru.push(f);
    while (this.lru.length > this.opts.maxBlocks) this.lru.shift()!.evict();
    const { maxBytes } = this.opts;
    const codec = this.codec;
    if (maxBytes === undefined || !codec.bytes) return;
    const bytes = (b: B) => codec.bytes!(b);
    let total = 0;
    for (const x of this.lru) if (x.block) total += bytes(x.block);
    // The blocks of a query in flight stay usable: eviction only drops the stream's reference.
    while (total > maxBytes && this.lru.length > 1) {
      const old = this.lru.shift()!;
      if (old.block) total -= bytes(old.block);
      old.evict();
    }
  }

  /**
   * Edge timestamps without a scan (docs/api.md 8.1): the first line of the first non-empty
   * file and the last complete line within the final 64 KiB of the last non-empty file.
   * Unparseable edge lines contribute nothing.
   */
  async edgeStamps(pick: (rec: Record<string, unknown>) => number[]): Promise<number[]> {
    const nonEmpty = (await this.files()).filter((f) => f.size > 0);
    const first = nonEmpty[0];
    const last = nonEmpty[nonEmpty.length - 1];
    if (!first || !last) return [];
    const [a, b] = await Promise.all([
      this.edge(first, "first", pick),
      this.edge(last, "last", pick),
    ]);
    return [...a, ...b];
  }

  private async edge(
    f: TailFile<B>,
    which: "first" | "last",
    pick: (rec: Record<string, unknown>) => number[],
  ): Promise<number[]> {
    const ck = `${which}:${f.key}`;
    const hit = this.edgeCache.get(ck);
    if (hit && hit.size === f.size) return hit.stamps;
    let line: string | null = null;
    try {
      const fh = await f.open();
      try {
        const n = Math.min(EDGE_BYTES, f.size);
        const start = which === "first" ? 0 : f.size - n;
        const buf = Buffer.allocUnsafe(n);
        const { bytesRead } = await fh.read(buf, 0, n, start);
        const text = buf.toString("utf8", 0, bytesRead);
        if (which === "first") {
          const nl = text.indexOf("\n");
          line = nl >= 0 ? text.slice(0, nl) : text;
        } else {
          const end = text.lastIndexOf("\n");
          if (end >= 0) {
            const prev = text.lastIndexOf("\n", end - 1);
            // Without a preceding newline inside the window the line may be cut; only
            // accept it when the window starts at byte 0.
            if (prev >= 0 || start === 0) line = text.slice(prev + 1, end);
          }
        }
      } finally {
        await fh.close();
      }
    } catch {
      line = null;
    }
    let stamps: number[] = [];
    if (line !== null) {
      try {
        const rec = parseLenientJson(line);
        if (rec && typeof rec === "object" && !Array.isArray(rec)) stamps = pick(rec as Record<string, unknown>);
      } catch {
        stamps = [];
      }
    }
    this.edgeCache.set(ck, { size: f.size, stamps });
    return stamps;
  }
}

export class FlatStream<B> {
  readonly file: TailFile<B>;
  private lastRefresh = -Infinity;
  private loaded = false;
  private refreshing: Promise<B> | null = null;

  constructor(
    filePath: string,
    private readonly follow: boolean,
    private readonly statIntervalMs: number,
    codec: BlockCodec<B>,
    private readonly fsys?: RunFs,
  ) {
    this.file = new TailFile<B>(filePath, "flat", null, codec, fsys ?? null);
  }

  /** The parsed block (first use parses the file; follow mode tails it). */
  block(): Promise<B> {
    const due = !this.loaded || (this.follow && performance.now() - this.lastRefresh >= this.statIntervalMs);
    if (!due && this.file.block) return Promise.resolve(this.file.block);
    if (!this.refreshing) {
      this.refreshing = (async () => {
        const st = await statFile(this.fsys, this.file.path).catch(() => null);
        this.file.size = st && st.isFile() ? st.size : 0;
        this.file.ino = st ? st.ino : 0;
        this.file.dev = st ? st.dev : 0;
        const b = await this.file.read();
        this.loaded = true;
        this.lastRefresh = performance.now();
        return b;
      })().finally(() => {
        this.refreshing = null;
      });
    }
    return this.refreshing;
  }

  get size(): number {
    return this.file.size;
  }
}
