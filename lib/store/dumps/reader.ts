/**
 * DumpReader: the read side of one run directory's rollout/train dumps (docs/api.md 1–7).
 *
 * Policy:
 *  - Read-only over the run directory. Summary caches and rebuilt parquet mirrors go
 *    under `cacheDir` (the app's data dir); without one, nothing is written anywhere.
 *  - Memory is bounded: summary frames of `tensorLru` rollouts (the joined tensors
 *    themselves are reduced to statistics right away), opened train shards of 4
 *    rollouts for token point reads, 4 sidecars, 2 rebuilt mirrors.
 *  - Every file is opened through the run's `RunFs` (lib/store/safe-fs.ts): nothing that
 *    resolves outside the run directory is listed or opened (403 naming the file).
 *  - Errors: a missing file or sample → 404; a `.pt` that fails to parse and is younger
 *    than 60 s → 503 still_writing, older → 500 `corrupt_file` naming the file and the
 *    problem; a bad token window → 400; join inconsistencies → plain Error (500).
 *  - One bad step never breaks the others: `stepAggregates()` skips a step whose files
 *    do not load and `skippedDumps()` reports it (docs/api.md, /api/meta); a parquet
 *    mirror that does not decode falls back to the rollout `.pt`; a torn sidecar line
 *    fails only the sample it belongs to (sidecar.ts).
 *  - I/O: the summary reads the rollout dump (per-token lists only counted) and all
 *    train shards concurrently, then fetches the per-token storages it needs shard by
 *    shard in a few large positional reads (batches of ≤ 128 MiB); a token point read
 *    fetches one sample's storages (one read each). Listing never computes anything;
 *    `prewarm()` computes summaries in the background, `close()` releases handles.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { ApiError, corruptFile, corruptInfo, notFound, stillWriting } from "@/lib/contracts/errors";
import { isOutside, READ_NOFOLLOW, RunFs } from "@/lib/store/safe-fs";
import { readSummaryCache, summaryCacheKey, summaryCachePath, writeSummaryCache } from "./cache";
import {
  FRESH_SECONDS,
  guardedLoad,
  guardPtReads,
  isErrno,
  listRolloutIds as listIds,
  listTrainShards,
  mirrorRel,
  rolloutRel,
  rolloutStem,
  sidecarRel,
  stampAbsOrNull,
  stampOrNull,
  type FileStamp,
} from "./files";
import { buildGroups, stepAggregate, GROUP_COLUMNS, type GroupRow, type StepAggregateRow } from "./groups";
import { buildTrainRow, indexLocations, joinTrainRows, planTrainRow, type Location, type RowRequest } from "./join";
import { Inflight, Lru, Recent } from "./lru";
import { MirrorReader, mirrorRowsFromSamples, writeMirror, type MirrorRow } from "./mirror";
import { openRolloutDump, PtShardSource, toNumArray, type ShardHandle } from "./pt-source";
import { SkippedList } from "@/lib/store/pt/load";
import { pyGet, pyInt } from "./pyobj";
import { parseSample } from "./sample";
import { parseSidecar, type SidecarIndex } from "./sidecar";
import { buildSummary, trainStats, type SummaryColumn, type SummaryFrame, type SummaryRow } from "./summary";
import { loadTokenizer, type TokenTextDecoder } from "./tokenizer";
import { buildTokenPayload, type TokenPayload, type TokenWindow } from "./tokens";
import { stepTraces, traceDigest, type StepTraces } from "./traces";
import type { PerTokenField, SampleRecord, TrainRow } from "./types";

export interface DumpReaderOptions {
  /** Where summary caches and rebuilt mirrors go (app data dir). Omit to cache in memory only. */
  cacheDir?: string;
  /** Number of rollouts whose summaries stay in memory (CLI --tensor-lru, default 2). */
  tensorLru?: number;
  /**
   * How long (ms) the file checks behind a step's summary and token reads (shard listing,
   * stats, the mirror's real path, the tokenizer folder) are reused, default
   * RECHECK_MS: a dump file rewritten in place is seen within that time. 0 checks on
   * every call.
   */
  recheckMs?: number;
}

export interface RolloutTable<C extends string, R> {
  rollout_id: number;
  evaluation: boolean;
  columns: C[];
  rows: R[];
}

export type SummaryTable = RolloutTable<SummaryColumn, SummaryRow>;
export type GroupsTable = RolloutTable<(typeof GROUP_COLUMNS)[number], GroupRow>;

export interface TokensOptions extends TokenWindow {
  evaluation?: boolean;
}

/** A dump file left out of the step aggregates, and why (relative name; /api/meta). */
export interface SkippedDump {
  file: string;
  reason: string;
}

const SHARD_LRU = 4;
/** docs/api.md 6: a warm token window re-checked ~20 files (~2 ms) on every request (#20). */
const RECHECK_MS = 1000;
const RECHECK_KEYS = 64;
const SIDECAR_LRU = 4;
const MIRROR_LRU = 2;
/** Evicted shard handles are closed after this delay, so in-flight point reads finish. */
const CLOSE_DELAY_MS = 30_000;
const MIRROR_KV = "rlboard.mirror.source";
/** Per-token sample lists the summary never reads (it needs only `len(tokens)`). */
const SUMMARY_SKIPPED_LISTS: ReadonlySet<string> = new Set(["tokens", "loss_mask", "rollout_log_probs"]);
const EMPTY: readonly number[] = [];

interface ShardSet {
  shards: ShardHandle[];
  locations: Map<number, Location[]>;
  /**
   * Samples point-read last from this version of the shards: the token view asks one
   * sample window by window (#20: a warm 512-token window), and each asked the sample's
   * storages from disk and unpickled them again.
   */
  rows: Lru<number, Promise<TrainRow>>;
}

/** Train rows kept per shard set (a 32k-token row's per-token fields are ~1 MB). */
const TRAIN_ROW_LRU = 8;

const stampKey = (s: FileStamp) => `${s.size}:${s.mtimeNs}`;

async function closeSet(p: Promise<ShardSet>): Promise<void> {
  try {
    const s = await p;
    await Promise.all(s.shards.map((h) => h.close()));
  } catch {
    // a set that failed to open has nothing to close
  }
}

/** Yield to the macrotask queue (I/O callbacks, other requests) before continuing. */
const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** How many of the newest visible train steps `prewarm()` computes (at least). */
const PREWARM_STEPS = 2;
/** Rows between event-loop yields in a background (prewarm) join. */
const PREWARM_YIELD_ROWS = 32;
/** Poll interval while prewarm waits for foreground calls to finish. */
const PREWARM_IDLE_POLL_MS = 25;

/**
 * One sample's TrainRow from open shards: its storages are fetched in one batch (few
 * positional reads: header and data together, see ZipArchive.readSpans), the row is
 * built, then the shards drop the fetched bytes again (the row keeps what it uses).
 */
async function pointRead(shards: readonly ShardHandle[], sampleIndex: number, locs: readonly Location[]): Promise<TrainRow> {
  const perShard = new Map<number, RowRequest[]>();
  for (const { shard, req } of planTrainRow(shards, locs)) {
    let list = perShard.get(shard);
    if (!list) perShard.set(shard, (list = []));
    list.push(req);
  }
  try {
    await Promise.all([...perShard].map(([s, reqs]) => (shards[s] as ShardHandle).prefetch?.(reqs) ?? Promise.resolve()));
    return await buildTrainRow(sampleIndex, shards, locs);
  } finally {
    for (const s of perShard.keys()) (shards[s] as ShardHandle).release?.();
  }
}

export class DumpReader {
  readonly dir: string;
  /** Confined access to the run directory (safe-fs.ts). */
  readonly fs: RunFs;
  private readonly cacheDir: string | null;
  private readonly summaries: Lru<string, { key: string; frame: SummaryFrame }>;
  /** The answers made from a frame (`summary`, `groups`), gone with the frame. */
  private readonly frameAnswers = new WeakMap<SummaryFrame, { summary?: SummaryTable; groups?: GroupsTable }>();
  private readonly shardSets = new Lru<string, Promise<ShardSet>>(SHARD_LRU, (p) => this.retire(p));
  /** Evicted shard sets waiting for their delayed close (closed at once by `close()`). */
  private readonly retiring = new Map<Promise<ShardSet>, ReturnType<typeof setTimeout>>();
  /** Foreground calls in progress (prewarm waits for 0). */
  private foreground = 0;
  private closed = false;
  private prewarmQueue: number[] = [];
  private prewarmNewest = false;
  private prewarmRun: Promise<void> | null = null;
  private readonly sidecars = new Lru<string, Promise<SidecarIndex>>(SIDECAR_LRU);
  private readonly rebuiltMirrors = new Lru<string, Promise<Map<number, MirrorRow>>>(MIRROR_LRU);
  private readonly mirrors = new MirrorReader();
  private readonly inflight = new Inflight<string, SummaryFrame>();
  private tokenizer: Promise<TokenTextDecoder | null> | null = null;
  /** Recent file checks (`recheckMs`), by what was checked. */
  private readonly checks: Recent<string, unknown>;
  /** Steps whose summary failed to load, by stem (see `skippedDumps`). */
  private readonly failedSteps = new Map<string, SkippedDump>();
  /** In-run mirrors (`rel` + stamp) that did not decode: the `.pt` is used instead. */
  private readonly badMirrors = new Lru<string, true>(64);
  /** Derived per-step results (`derived`), by stem and name, with their source key. */
  private readonly derivedMem = new Lru<string, { key: string; value: unknown }>(64);
  private readonly derivedInflight = new Inflight<string, unknown>();

  constructor(dir: string, opts: DumpReaderOptions = {}) {
    this.dir = dir;
    this.fs = new RunFs(dir);
    this.cacheDir = opts.cacheDir ?? null;
    this.summaries = new Lru(Math.max(1, opts.tensorLru ?? 2));
    this.checks = new Recent(opts.recheckMs ?? RECHECK_MS, RECHECK_KEYS);
  }

  /** `check()`, or its result from the last `recheckMs` (see DumpReaderOptions). */
  private recent<T>(key: string, check: () => Promise<T>): Promise<T> {
    return this.checks.get(key, check) as Promise<T>;
  }

  /** Stamp of `rel` (null: absent), checked at most every `recheckMs`. */
  private recentStamp(rel: string): Promise<FileStamp | null> {
    return this.recent(`stamp\u0000${rel}`, () => stampOrNull(this.fs, rel));
  }

  /** A train step's shard files with their stamps (null: vanished), checked at most every `recheckMs`. */
  private recentShards(rolloutId: number): Promise<{ name: string; stamp: FileStamp | null }[]> {
    return this.recent(`shards\u0000${rolloutId}`, async () => {
      const files = await listTrainShards(this.fs, rolloutId);
      const stamps = await Promise.all(files.map((f) => stampOrNull(this.fs, path.posix.join("train_data", f.name))));
      return files.map((f, i) => ({ name: f.name, stamp: stamps[i] ?? null }));
    });
  }

  private retire(p: Promise<ShardSet>): void {
    const t = setTimeout(() => {
      this.retiring.delete(p);
      void closeSet(p);
    }, CLOSE_DELAY_MS);
    t.unref?.();
    this.retiring.set(p, t);
  }

  /** Count a user-facing call as foreground activity while it runs (see `prewarm`). */
  private async fg<T>(work: () => Promise<T>): Promise<T> {
    this.foreground++;
    try {
      return await work();
    } finally {
      this.foreground--;
    }
  }

  /**
   * Close every open file handle (train shards kept for token point reads, including
   * evicted ones waiting for their delayed close) and stop prewarming. Idempotent. The
   * reader stays usable: later calls reopen what they need (but `prewarm` is a no-op).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.prewarmQueue = [];
    const sets: Promise<ShardSet>[] = [];
    for (const [p, t] of this.retiring) {
      clearTimeout(t);
      sets.push(p);
    }
    this.retiring.clear();
    const live = this.shardSets.drain();
    sets.push(...live);
    await Promise.all([...sets.map(closeSet), this.prewarmRun ?? Promise.resolve()]);
  }

  // ---- listing / capabilities

  listRolloutIds(): Promise<{ train: number[]; eval: number[] }> {
    return listIds(this.fs);
  }

  /** A `tokenizer/` directory inside the run (one resolving outside counts as absent). */
  hasTokenizer(): Promise<boolean> {
    return this.recent("tokenizer", async () => {
      try {
        return (await this.fs.statOrNull("tokenizer"))?.isDirectory() ?? false;
      } catch {
        return false;
      }
    });
  }

  /**
   * Dump files whose step failed to load when last tried (a summary, the step
   * aggregates, a prewarm), sorted by file: the steps `stepAggregates()` leaves out.
   * A step that loads again is removed. Additive `/api/meta` key `skipped_dumps`.
   */
  skippedDumps(): SkippedDump[] {
    return [...this.failedSteps.values()].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  }

  // ---- rollout loading

  /**
   * The rollout dump's samples. `lengthsOnly` (the summary): the three per-token lists
   * are only counted, not materialised (`tokens` stays empty, `totalLength` is set).
   */
  private async loadSamples(rolloutId: number, evaluation: boolean, lengthsOnly = false): Promise<SampleRecord[]> {
    const rel = rolloutRel(rolloutId, evaluation);
    const { rolloutId: storedId, samples } = await guardedLoad(this.fs, rel, async () => {
      const real = await this.fs.resolve(rel);
      const dump = await openRolloutDump(real, {
        openFlags: READ_NOFOLLOW,
        ...(lengthsOnly ? { skipListItems: SUMMARY_SKIPPED_LISTS } : {}),
      });
      try {
        const out: SampleRecord[] = [];
        for (const raw of dump.samples) {
          const tokens = pyGet(raw, "tokens");
          if (tokens instanceof SkippedList) {
            const rec = parseSample(raw, rel, { tokens: EMPTY, lossMask: null, rolloutLogProbs: null });
            rec.totalLength = tokens.length;
            out.push(rec);
            continue;
          }
          const lists = {
            tokens: await toNumArray(tokens),
            lossMask: await toNumArray(pyGet(raw, "loss_mask")),
            rolloutLogProbs: await toNumArray(pyGet(raw, "rollout_log_probs")),
          };
          out.push(parseSample(raw, rel, lists));
        }
        return { rolloutId: dump.rolloutId, samples: out };
      } finally {
        await dump.close();
      }
    });
    if (pyInt(storedId) !== rolloutId) throw new Error(`${rel}: rollout_id ${String(storedId)} != ${rolloutId}`);
    return samples;
  }

  private async openShards(rolloutId: number): Promise<ShardHandle[]> {
    const files = await listTrainShards(this.fs, rolloutId);
    // All shards at once: their zip directories and pickles are read concurrently.
    const opened = await Promise.allSettled(
      files.map((f) => {
        const rel = path.posix.join("train_data", f.name);
        return guardedLoad(this.fs, rel, async () => PtShardSource.open(await this.fs.resolve(rel), f.name, READ_NOFOLLOW));
      }),
    );
    const failed = opened.find((r): r is PromiseRejectedResult => r.status === "rejected");
    const out = opened.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    if (failed) {
      await Promise.all(out.map((h) => h.close()));
      throw failed.reason;
    }
    return out;
  }

  // ---- L1 summary (cached)

  private async summarySources(rolloutId: number, evaluation: boolean): Promise<Record<string, FileStamp>> {
    const rel = rolloutRel(rolloutId, evaluation);
    const [st, shards] = await Promise.all([this.recentStamp(rel), evaluation ? [] : this.recentShards(rolloutId)]);
    if (st === null) throw notFound(`no such file: ${rel}`);
    const sources: Record<string, FileStamp> = { [path.posix.basename(rel)]: st };
    for (const f of shards) if (f.stamp) sources[f.name] = f.stamp;
    return sources;
  }

  summaryFrame(rolloutId: number, evaluation: boolean): Promise<SummaryFrame> {
    return this.fg(() => this.frame(rolloutId, evaluation, false));
  }

  /** `frameImpl`, remembering whether the step loads (`skippedDumps`). */
  private async frame(rolloutId: number, evaluation: boolean, background: boolean): Promise<SummaryFrame> {
    const stem = rolloutStem(rolloutId, evaluation);
    try {
      const f = await this.frameImpl(rolloutId, evaluation, background);
      this.failedSteps.delete(stem);
      return f;
    } catch (err) {
      const skipped = this.skipReason(rolloutId, evaluation, err);
      if (skipped) this.failedSteps.set(stem, skipped);
      else this.failedSteps.delete(stem);
      throw err;
    }
  }

  /**
   * Why a step is left out of the aggregates, or null when the failure is not the
   * step's fault (still being written, vanished: the caller reports those as before).
   */
  private skipReason(rolloutId: number, evaluation: boolean, err: unknown): SkippedDump | null {
    const info = corruptInfo(err);
    if (info) return info;
    if (ApiError.is(err)) {
      if (err.code === "still_writing" || isOutside(err)) return null;
      if (err.code === "not_found" && err.message.startsWith("no such file")) return null;
      return { file: rolloutRel(rolloutId, evaluation), reason: err.message };
    }
    return { file: rolloutRel(rolloutId, evaluation), reason: "could not be read (see the server log)" };
  }

  private async frameImpl(rolloutId: number, evaluation: boolean, background: boolean): Promise<SummaryFrame> {
    const stem = rolloutStem(rolloutId, evaluation);
    const key = summaryCacheKey(await this.summarySources(rolloutId, evaluation));
    const mem = this.summaries.get(stem);
    if (mem && mem.key === key) return mem.frame;
    return this.inflight.run(`${stem}\u0000${key}`, async () => {
      const known = await this.knownFrame(stem, key);
      if (known) return known;
      const frame = await this.computeSummary(rolloutId, evaluation, background);
      if (this.cacheDir) {
        const cachePath = summaryCachePath(this.cacheDir, stem);
        await writeSummaryCache(cachePath, key, frame).catch((err: unknown) => {
          console.warn(`[rlboard] could not write summary cache ${cachePath}:`, err);
        });
      }
      this.summaries.set(stem, { key, frame });
      return frame;
    });
  }

  /** A step's frame for `key` from memory, else from the data dir's cache (then kept in memory); null if neither has it. */
  private async knownFrame(stem: string, key: string): Promise<SummaryFrame | null> {
    const mem = this.summaries.get(stem);
    if (mem && mem.key === key) return mem.frame;
    const frame = this.cacheDir ? await readSummaryCache(summaryCachePath(this.cacheDir, stem), key) : null;
    if (frame) this.summaries.set(stem, { key, frame });
    return frame;
  }

  /** `background` (prewarm): yield to the event loop every few rows of the join. */
  private async computeSummary(rolloutId: number, evaluation: boolean, background = false): Promise<SummaryFrame> {
    if (evaluation) return buildSummary(await this.loadSamples(rolloutId, evaluation, true), new Map(), rolloutId, true);
    // The rollout dump and the train shards are read concurrently.
    const shardsP = this.openShards(rolloutId);
    let samples: SampleRecord[];
    try {
      samples = await this.loadSamples(rolloutId, evaluation, true);
    } catch (err) {
      await shardsP.then((hs) => Promise.all(hs.map((h) => h.close())), () => undefined);
      throw err;
    }
    const shards = await shardsP;
    try {
      const pace = background ? { every: PREWARM_YIELD_ROWS, pause: yieldToEventLoop } : undefined;
      const rows = await guardPtReads(this.fs, () => joinTrainRows(samples, shards, trainStats, pace));
      return buildSummary(samples, rows, rolloutId, false);
    } finally {
      await Promise.all(shards.map((h) => h.close()));
    }
  }

  /**
   * The step's summary table. While the step's files are unchanged its frame is the same
   * object, and so is this answer: kept with it and frozen, which lets the API layer write
   * its JSON text once (lib/api/json.ts); a changed file gives a new frame, a new answer.
   */
  async summary(rolloutId: number, evaluation: boolean): Promise<SummaryTable> {
    const frame = await this.summaryFrame(rolloutId, evaluation);
    const answers = this.answersOf(frame);
    return (answers.summary ??= Object.freeze({ rollout_id: rolloutId, evaluation, columns: frame.columns, rows: frame.rows }));
  }

  /** The step's GRPO groups, kept with its frame like `summary`. */
  async groups(rolloutId: number, evaluation: boolean): Promise<GroupsTable> {
    return this.groupsOf(await this.summaryFrame(rolloutId, evaluation), rolloutId, evaluation);
  }

  private groupsOf(frame: SummaryFrame, rolloutId: number, evaluation: boolean): GroupsTable {
    const answers = this.answersOf(frame);
    return (answers.groups ??= Object.freeze({ rollout_id: rolloutId, evaluation, columns: [...GROUP_COLUMNS], rows: buildGroups(frame.rows, evaluation) }));
  }

  private answersOf(frame: SummaryFrame): { summary?: SummaryTable; groups?: GroupsTable } {
    let a = this.frameAnswers.get(frame);
    if (!a) this.frameAnswers.set(frame, (a = {}));
    return a;
  }

  /**
   * `dump/*` step aggregates over the visible train rollouts, ascending (4.2). A step
   * whose files do not load (corrupt `.pt`, join inconsistency) is left out and listed
   * by `skippedDumps()`; one still being written still answers 503 (docs/api.md 1.9), and one
   * that vanished since the listing is left out silently.
   */
  async stepAggregates(): Promise<StepAggregateRow[]> {
    const { train } = await this.listRolloutIds();
    const out: StepAggregateRow[] = [];
    for (const rolloutId of train) {
      let frame: SummaryFrame;
      try {
        frame = await this.summaryFrame(rolloutId, false);
      } catch (err) {
        if (ApiError.is(err) && err.code === "still_writing") throw err;
        if (!ApiError.is(err)) console.warn(`[rlboard] step ${rolloutId} left out of the dump/* aggregates:`, err);
        continue;
      }
      out.push(stepAggregate(rolloutId, frame.rows, this.groupsOf(frame, rolloutId, false).rows));
    }
    return out;
  }

  /** Sample indices of a train rollout's summary, in dump order (for /trajectories). */
  async trajectoryIndices(rolloutId: number): Promise<number[]> {
    const frame = await this.summaryFrame(rolloutId, false);
    return frame.rows.map((r) => r.sample_index).filter((v): v is number => v !== null);
  }

  // ---- background prewarm

  /**
   * The newest PREWARM_STEPS train steps' summaries into memory, from the data dir's cache
   * only: a step whose summary was never built is left to its first request (or `prewarm`),
   * so this costs a cache read per step, never a join of `.pt` files. For the server's
   * warm-up at start (lib/server/warmup.ts). Returns the steps it loaded, newest first;
   * they are loaded oldest first, so the newest, which the warm-up reads on from, is the
   * last to leave the summary LRU (`--tensor-lru 1` keeps only it).
   */
  async warmFromCache(): Promise<number[]> {
    if (this.closed || !this.cacheDir) return [];
    let train: number[];
    try {
      ({ train } = await listIds(this.fs));
    } catch {
      return [];
    }
    const loaded: number[] = [];
    for (const rolloutId of train.slice(-PREWARM_STEPS)) {
      try {
        const key = summaryCacheKey(await this.summarySources(rolloutId, false));
        if (await this.knownFrame(rolloutStem(rolloutId, false), key)) loaded.unshift(rolloutId);
      } catch {
        /* being written, vanished, unreadable: its first request reports it */
      }
    }
    return loaded;
  }

  /**
   * Background warm-up of step summaries (memory LRU + disk cache), so that opening a
   * step view finds its summary ready:
   *  - `prewarm()`: the newest `PREWARM_STEPS` visible train steps, newest first;
   *  - `prewarm(rolloutId)`: train step `rolloutId`, ahead of anything already queued.
   * Fire-and-forget: returns at once with a promise that settles when the queue is
   * empty (errors are logged, never thrown). Idempotent and cheap to call often: cached
   * steps are cache hits, queued steps are not queued twice, and at most one prewarm
   * runs per reader. Low priority: each step starts from a `setImmediate`, only while no
   * foreground call (summary, groups, tokens, …) is running, and its join yields to the
   * event loop every few rows. A no-op after `close()`.
   */
  prewarm(rolloutId?: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (rolloutId === undefined) this.prewarmNewest = true;
    else {
      this.prewarmQueue = [rolloutId, ...this.prewarmQueue.filter((r) => r !== rolloutId)];
    }
    if (this.prewarmRun === null) {
      const run = this.runPrewarm().finally(() => {
        if (this.prewarmRun === run) this.prewarmRun = null;
      });
      this.prewarmRun = run;
    }
    return this.prewarmRun;
  }

  private async runPrewarm(): Promise<void> {
    await yieldToEventLoop();
    while (!this.closed) {
      const rolloutId = this.prewarmQueue.shift();
      if (rolloutId !== undefined) {
        await this.prewarmOne(rolloutId);
        continue;
      }
      if (!this.prewarmNewest) break;
      this.prewarmNewest = false;
      try {
        const { train } = await listIds(this.fs);
        for (const r of train.slice(-PREWARM_STEPS).reverse()) if (!this.prewarmQueue.includes(r)) this.prewarmQueue.push(r);
      } catch (err) {
        console.warn(`[rlboard] prewarm: cannot list ${this.dir}:`, err);
      }
    }
  }

  private async prewarmOne(rolloutId: number): Promise<void> {
    while (this.foreground > 0 && !this.closed) {
      await new Promise<void>((resolve) => {
        setTimeout(resolve, PREWARM_IDLE_POLL_MS).unref?.();
      });
    }
    if (this.closed) return;
    await yieldToEventLoop();
    try {
      await this.frame(rolloutId, false, true);
    } catch (err) {
      // Still being written, vanished, …: a foreground request reports it properly.
      if (!ApiError.is(err)) console.warn(`[rlboard] prewarm of rollout ${rolloutId} failed:`, err);
    }
  }

  // ---- L2 tokens (point read)

  private async mirrorRow(rolloutId: number, si: number, evaluation: boolean): Promise<MirrorRow> {
    const missing = () => notFound(`unknown sample_index ${si} in rollout ${rolloutId}`);
    const rel = mirrorRel(rolloutId, evaluation);
    const res = await this.runMirror(rel, si);
    if (res !== null) {
      if (res.row === null) throw missing();
      return res.row;
    }
    // No usable mirror in the run: rebuild from the rollout .pt (cache dir only).
    const ptRel = rolloutRel(rolloutId, evaluation);
    const ptStamp = await stampOrNull(this.fs, ptRel);
    if (ptStamp === null) throw notFound(`no such file: ${ptRel}`);
    const kv = [MIRROR_KV, stampKey(ptStamp)] as const;
    const cached = this.cacheDir ? path.join(this.cacheDir, "dashboard_columns", path.posix.basename(rel)) : null;
    if (cached) {
      const cst = await stampAbsOrNull(cached);
      if (cst !== null) {
        const res = await this.mirrors.read(cached, stampKey(cst), si, kv).catch(() => ({ valid: false }) as const);
        if (res.valid) {
          if (res.row === null) throw missing();
          return res.row;
        }
      }
    }
    const memKey = `${rolloutStem(rolloutId, evaluation)}\u0000${kv[1]}`;
    let rowsP = this.rebuiltMirrors.get(memKey);
    if (!rowsP) {
      rowsP = this.loadSamples(rolloutId, evaluation).then(async (samples) => {
        const rows = mirrorRowsFromSamples(samples);
        if (cached) {
          await writeMirror(cached, rows, kv).catch((err: unknown) => {
            console.warn(`[rlboard] could not write rebuilt mirror ${cached}:`, err);
          });
        }
        const bySample = new Map<number, MirrorRow>();
        for (const r of rows) if (!bySample.has(r.sample_index)) bySample.set(r.sample_index, r);
        return bySample;
      });
      rowsP.catch(() => this.rebuiltMirrors.delete(memKey));
      this.rebuiltMirrors.set(memKey, rowsP);
    }
    const row = (await rowsP).get(si);
    if (!row) throw missing();
    return row;
  }

  /**
   * The run's own mirror row: null when the mirror is absent, has other columns, points
   * outside the run directory, or does not decode (then the `.pt` answers; logged once).
   */
  private async runMirror(rel: string, si: number): Promise<{ row: MirrorRow | null } | null> {
    let st: FileStamp | null;
    try {
      st = await this.recentStamp(rel);
    } catch (err) {
      if (!isOutside(err)) throw err;
      this.fs.warnOnce(rel, "points outside the run directory; reading the rollout .pt instead");
      return null;
    }
    if (st === null) return null;
    const version = `${rel}\u0000${stampKey(st)}`;
    if (this.badMirrors.get(version)) return null;
    try {
      const real = await this.recent(`real\u0000${version}`, () => this.fs.resolve(rel));
      const res = await this.mirrors.read(real, stampKey(st), si, undefined, READ_NOFOLLOW);
      return res.valid ? { row: res.row } : null;
    } catch (err) {
      if (isErrno(err, "ENOENT")) return null;
      if (isOutside(err)) {
        this.fs.warnOnce(rel, "points outside the run directory; reading the rollout .pt instead");
        return null;
      }
      this.badMirrors.set(version, true);
      this.fs.warnOnce(rel, "is not a readable parquet mirror; reading the rollout .pt instead");
      return null;
    }
  }

  private async shardSet(rolloutId: number): Promise<ShardSet | null> {
    const files = await this.recentShards(rolloutId);
    if (files.length === 0) return null;
    const key = `${rolloutId}\u0000${files.map((f) => `${f.name}@${f.stamp ? stampKey(f.stamp) : "-"}`).join(",")}`;
    let p = this.shardSets.get(key);
    if (!p) {
      p = (async () => {
        const shards = await this.openShards(rolloutId);
        try {
          const locations = await guardPtReads(this.fs, () => indexLocations(shards));
          return { shards, locations, rows: new Lru<number, Promise<TrainRow>>(TRAIN_ROW_LRU) };
        } catch (err) {
          await Promise.all(shards.map((h) => h.close()));
          throw err;
        }
      })();
      p.catch(() => this.shardSets.delete(key));
      this.shardSets.set(key, p);
    }
    return p;
  }

  tokens(rolloutId: number, sampleIndex: number, opts: TokensOptions = {}): Promise<TokenPayload> {
    return this.fg(() => this.tokensImpl(rolloutId, sampleIndex, opts));
  }

  private async tokensImpl(rolloutId: number, sampleIndex: number, opts: TokensOptions): Promise<TokenPayload> {
    const evaluation = opts.evaluation ?? false;
    // The mirror row, the train shards and the tokenizer are independent: start all
    // three; errors are still reported in that order (mirror first).
    const mirrorP = this.mirrorRow(rolloutId, sampleIndex, evaluation);
    const setP = evaluation ? Promise.resolve(null) : this.shardSet(rolloutId);
    const decoderP = this.hasTokenizer().then((has) => (has ? this.loadTokenizer() : null));
    setP.catch(() => undefined);
    decoderP.catch(() => undefined);
    const mirror = await mirrorP;
    let row: TrainRow | null = null;
    const set = await setP;
    const locs = set?.locations.get(sampleIndex);
    if (set && locs) row = await this.trainRow(set, sampleIndex, locs);
    const decoder = await decoderP;
    return buildTokenPayload(rolloutId, sampleIndex, evaluation, mirror, row, opts, decoder ? (id) => decoder.decodeOne(id) : null);
  }

  /** One sample's train row from a shard set, read once per set version (a failed read is retried next time). */
  private trainRow(set: ShardSet, sampleIndex: number, locs: readonly Location[]): Promise<TrainRow> {
    let p = set.rows.get(sampleIndex);
    if (!p) {
      p = guardPtReads(this.fs, () => pointRead(set.shards, sampleIndex, locs));
      p.catch(() => set.rows.delete(sampleIndex));
      set.rows.set(sampleIndex, p);
    }
    return p;
  }

  private loadTokenizer(): Promise<TokenTextDecoder | null> {
    if (this.tokenizer === null) {
      const p = loadTokenizer(this.fs);
      this.tokenizer = p;
      // A live run may write tokenizer.json after creating the folder: retry next time.
      void p.then((t) => {
        if (t === null && this.tokenizer === p) this.tokenizer = null;
      });
    }
    return this.tokenizer;
  }

  // ---- per-step derived data (drift, staleness, search: lib/rollout, docs/api.md 9.2)

  /** The source key of a step (the summary cache's, docs/api.md 6): changes with any source file. */
  async stepKey(rolloutId: number, evaluation = false): Promise<string> {
    return summaryCacheKey(await this.summarySources(rolloutId, evaluation));
  }

  /**
   * A derived per-step result, cached under the step's source key in memory and, with a
   * cache dir, as `rollout_{stem}.{name}.json` next to the summary cache (`name` is
   * reduced to `[A-Za-z0-9_.-]`). `compute` runs once per key (concurrent calls share it).
   */
  async derived<T>(rolloutId: number, evaluation: boolean, name: string, compute: () => Promise<T>): Promise<T> {
    const stem = rolloutStem(rolloutId, evaluation);
    const safe = name.replace(/[^A-Za-z0-9_.-]/g, "_");
    const key = await this.stepKey(rolloutId, evaluation);
    const memKey = `${stem}\u0000${safe}`;
    const mem = this.derivedMem.get(memKey);
    if (mem && mem.key === key) return mem.value as T;
    const value = await this.derivedInflight.run(`${memKey}\u0000${key}`, async () => {
      const file = this.cacheDir ? path.join(this.cacheDir, `rollout_${stem}.${safe}.json`) : null;
      if (file) {
        try {
          const hit = JSON.parse(await readFile(file, "utf8")) as { key?: unknown; value?: unknown };
          if (hit.key === key) return hit.value;
        } catch {
          // absent or unreadable: recompute
        }
      }
      const v = await compute();
      if (file) {
        const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
        await mkdir(path.dirname(file), { recursive: true })
          .then(() => writeFile(tmp, JSON.stringify({ key, value: v })))
          .then(() => rename(tmp, file))
          .catch((err: unknown) => console.warn(`[rlboard] could not write derived cache ${file}:`, err));
      }
      return v;
    });
    this.derivedMem.set(memKey, { key, value });
    return value as T;
  }

  /**
   * Full join of a train step reading only `fields` (the `.pt` rows are reduced as they
   * are built, so the step's tensors are never held at once). `withTokens`: the rollout
   * samples keep their token ids (else only their lengths, like the summary).
   */
  reduceTrainRows<T>(
    rolloutId: number,
    fields: readonly PerTokenField[],
    reduce: (row: TrainRow, sample: SampleRecord | undefined) => T,
    opts: { withTokens?: boolean } = {},
  ): Promise<{ samples: SampleRecord[]; rows: Map<number, T> }> {
    return this.fg(async () => {
      const shardsP = this.openShards(rolloutId);
      let samples: SampleRecord[];
      try {
        samples = await this.loadSamples(rolloutId, false, !opts.withTokens);
      } catch (err) {
        await shardsP.then((hs) => Promise.all(hs.map((h) => h.close())), () => undefined);
        throw err;
      }
      const byIndex = new Map<number, SampleRecord>();
      for (const s of samples) if (s.index !== null && !byIndex.has(s.index)) byIndex.set(s.index, s);
      const shards = await shardsP;
      try {
        const rows = await guardPtReads(this.fs, () =>
          joinTrainRows(samples, shards, (row) => reduce(row, byIndex.get(row.sampleIndex)), undefined, fields),
        );
        return { samples, rows };
      } finally {
        await Promise.all(shards.map((h) => h.close()));
      }
    });
  }

  /** Whether train step `rolloutId` has train shards (`train_data/{rolloutId}_*.pt`). */
  async hasTrainShards(rolloutId: number): Promise<boolean> {
    return (await listTrainShards(this.fs, rolloutId)).length > 0;
  }

  /** A rollout dump's samples without their per-token lists (search). */
  sampleRecords(rolloutId: number, evaluation: boolean): Promise<SampleRecord[]> {
    return this.fg(() => this.loadSamples(rolloutId, evaluation, true));
  }

  /** A step's conversation sidecar, parsed once per version (path + stamp). */
  private sidecarIndex(rel: string, st: FileStamp): Promise<SidecarIndex> {
    const key = `${rel}\u0000${stampKey(st)}`;
    let p = this.sidecars.get(key);
    if (!p) {
      p = this.fs.readFile(rel).then((buf) => parseSidecar(buf.toString("utf8")));
      p.catch(() => this.sidecars.delete(key));
      this.sidecars.set(key, p);
    }
    return p;
  }

  /** Every parsed row of a step's conversation sidecar, by sample index; null when there is none. */
  async sidecarRows(rolloutId: number, evaluation: boolean): Promise<ReadonlyMap<number | null, Record<string, unknown>> | null> {
    const rel = sidecarRel(rolloutId, evaluation);
    const st = await this.recentStamp(rel);
    if (st === null) return null;
    return (await this.sidecarIndex(rel, st)).rows;
  }

  /** The run's token decoder (`tokenizer/`), null without one. */
  async tokenDecoder(): Promise<TokenTextDecoder | null> {
    return (await this.hasTokenizer()) ? this.loadTokenizer() : null;
  }

  // ---- per-sample request traces (slime's Sample.trace; traces.ts)

  sampleTraces(rolloutId: number, evaluation: boolean): Promise<StepTraces> {
    return this.fg(() => stepTraces(this, rolloutId, evaluation));
  }

  traceDigest<T>(rolloutId: number, name: string, derive: (t: StepTraces) => T): Promise<T> {
    return traceDigest(this, rolloutId, name, derive);
  }

  // ---- trajectory sidecar (messages)

  /**
   * A sample's record from the trajectory sidecar. A sample whose only lines do not parse
   * answers `corrupt_file` naming the line (503 while the file is fresh); every other
   * sample of the file still answers (sidecar.ts).
   */
  async messages(rolloutId: number, sampleIndex: number, evaluation: boolean): Promise<Record<string, unknown>> {
    const rel = sidecarRel(rolloutId, evaluation);
    const st = await this.recentStamp(rel);
    if (st === null) throw notFound(`no conversation recorded for rollout ${rolloutStem(rolloutId, evaluation)} (${rel} missing)`);
    const index = await this.sidecarIndex(rel, st);
    const row = index.rows.get(sampleIndex);
    if (row) return row;
    const line = index.broken.get(sampleIndex);
    if (line !== undefined) {
      if ((Date.now() - st.mtimeMs) / 1000 < FRESH_SECONDS) throw stillWriting(rel);
      throw corruptFile(rel, `line ${line} (sample ${sampleIndex}) is not valid JSON`);
    }
    throw notFound(`sample ${sampleIndex} has no recorded conversation in rollout ${rolloutId}`);
  }
}

export function openDumpReader(runDir: string, opts: DumpReaderOptions = {}): DumpReader {
  return new DumpReader(runDir, opts);
}
