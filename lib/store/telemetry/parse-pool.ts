/**
 * Parsing a large stream file in parts, on more than one core (#20: the first read of a
 * 1024-GPU hour is 320 MB of gpu_util JSON, ~0.5 s of one core).
 *
 * A file read from byte 0 that is at least SPLIT_MIN_BYTES long is cut at line ends into
 * parts of about PART_BYTES (`ingestSplit`). This thread parses from the start straight
 * into the file's block; parse workers (worker threads of this process, parse-worker.ts)
 * parse from the end, each part into a block with dicts of its own, and hand back its
 * columns (transferred, not copied). A worker reads the descriptor the store opened —
 * confined to the run directory (safe-fs.ts) — and opens nothing itself. Their parts are
 * appended in file order, lane ids mapped into the store's dicts: the block holds exactly
 * the rows, tick groups, corrupt-line tally and end offset one pass gives
 * (parse-pool.test.ts compares them). Only streams whose codec says how to take a part
 * (`SplitCodec`: gpu_util) are split.
 *
 * Streams read many files at once whose files are smaller (a 1024-GPU phase hour is
 * ~38 MB, and a fleet view reads the day's 24) hand files of at least WHOLE_MIN_BYTES to
 * the workers whole (`ingestWhole`, `WholeCodec`: phases): this thread parses them in the
 * order asked while the workers take them newest first, and an empty block adopts a
 * worker's columns with its string ids mapped.
 *
 * Workers start on the first parse they are given and stop after IDLE_MS without work. Where one
 * cannot start or fails, the parts it had are parsed here (nothing is lost, it is only
 * slower) and the pool stays off for the process. `RLBOARD_PARSE_WORKERS` (`setParseWorkers`)
 * sets the count; default: one per core beyond the first, at most 3; 0: never split.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import {
  fileReader,
  ingestChunks,
  type GpuRangeResult,
  type PartResult,
  type PhaseRangeResult,
  type RangeCodec,
  type RangeJob,
  type RangeResult,
  type ReadAt,
} from "@/lib/store/telemetry/read-range";

/** How a block takes a part a worker parsed (`GpuBlock.appendPart` with its lanes mapped). */
export interface SplitCodec<B> {
  stream: "gpu_util";
  adopt(block: B, part: GpuRangeResult): void;
}

/** How an empty block takes a whole file a worker parsed (`PhaseBlock.adoptPart` with its strings mapped). */
export interface WholeCodec<B> {
  stream: "phases";
  adopt(block: B, part: PhaseRangeResult): void;
}

/** Files shorter than this are parsed in one pass (a 64-GPU hour is ~20 MB: a worker would cost more than it saves). */
export const SPLIT_MIN_BYTES = 64 << 20;
/**
 * Whole files (phases) of at least this many bytes may go to a worker: a 1024-GPU phase
 * hour is ~38 MB, a 64-GPU one ~2.5 MB (parsed here, no worker started for it).
 */
export const WHOLE_MIN_BYTES = 8 << 20;
/** Parts are about this long (a 1024-GPU hour of gpu_util: 10 parts), so the threads can even out the work. */
const PART_BYTES = 32 << 20;
/** A worker with nothing to do for this long is stopped (its isolate is ~10 MB). */
const IDLE_MS = 30_000;
/** How far past a proposed cut a line end is looked for. */
const CUT_SCAN_BYTES = 1 << 20;

interface Task {
  job: RangeJob;
  resolve: (r: PartResult) => void;
  reject: (e: Error) => void;
}

type Reply = { ok: true; result: PartResult } | { ok: false; error: string };

/** Jobs posted to one worker at a time: the next waits in its port, so it never idles while this thread is busy. */
const DEPTH = 2;

class ParsePool {
  /** Live workers and the jobs each has in hand, oldest first (it answers them in order). */
  private readonly workers = new Map<Worker, Task[]>();
  private readonly queue: Task[] = [];
  private readonly timers = new Map<Worker, NodeJS.Timeout>();
  /** Workers being stopped on purpose (their exit is not a failure). */
  private readonly stopping = new Set<Worker>();
  /** Set when a worker could not start or died: the rest of the process parses in one thread. */
  broken: string | null = null;
  /** Parts parsed by workers (tests, logs). */
  partsDone = 0;

  /** Where this thread's turn to parse a whole file queues (`turn`). */
  private lane: Promise<void> = Promise.resolve();

  constructor(
    public size: number,
    public splitMinBytes = SPLIT_MIN_BYTES,
    public wholeMinBytes = WHOLE_MIN_BYTES,
  ) {}

  /**
   * Queue a job (`front`: before the others, so the workers take the newest first). `steal()`
   * takes it back while it is not posted to a worker (true: the caller parses it itself,
   * and `result` never settles).
   */
  submit<R extends PartResult>(job: RangeJob, front = false): { result: Promise<R>; steal(): boolean } {
    let task!: Task;
    const result = new Promise<R>((resolve, reject) => (task = { job, resolve: resolve as (r: PartResult) => void, reject }));
    // A part can fail before its file's reader gets to it (or after that reader gave up):
    // the reader looks at each outcome in its own time, so none counts as unhandled.
    void result.catch(() => undefined);
    if (front) this.queue.unshift(task);
    else this.queue.push(task);
    this.pump();
    return {
      result,
      steal: () => {
        const i = this.queue.indexOf(task);
        if (i < 0) return false;
        this.queue.splice(i, 1);
        return true;
      },
    };
  }

  private pump(): void {
    while (this.queue.length > 0) {
      if (this.broken) {
        for (const t of this.queue.splice(0)) t.reject(new Error(this.broken));
        return;
      }
      let w: Worker | undefined;
      let least = DEPTH;
      for (const [x, jobs] of this.workers)
        if (!this.stopping.has(x) && jobs.length < least) {
          w = x;
          least = jobs.length;
        }
      if (this.workers.size < this.size && (!w || least > 0)) {
        // Another worker rather than a second job for a busy one.
        try {
          w = this.spawn();
        } catch (err) {
          this.fail(`a parse worker could not start: ${(err as Error).message}`);
          continue;
        }
      } else if (!w) return;
      const task = this.queue.shift()!;
      const jobs = this.workers.get(w)!;
      jobs.push(task);
      clearTimeout(this.timers.get(w));
      this.timers.delete(w);
      w.ref();
      w.postMessage(task.job);
    }
  }

  private spawn(): Worker {
    const w = startWorker();
    const jobs: Task[] = [];
    this.workers.set(w, jobs);
    w.on("message", (reply: Reply) => {
      const task = jobs.shift();
      if (!task) return;
      if (reply.ok) {
        this.partsDone++;
        task.resolve(reply.result);
      } else task.reject(new Error(reply.error));
      if (jobs.length === 0) {
        w.unref();
        const timer = setTimeout(() => this.retire(w), IDLE_MS);
        timer.unref();
        this.timers.set(w, timer);
      }
      this.pump();
    });
    const gone = (why: string | null) => {
      this.workers.delete(w);
      clearTimeout(this.timers.get(w));
      this.timers.delete(w);
      const lost = jobs.splice(0);
      if (why) this.fail(why);
      for (const t of lost) t.reject(new Error(why ?? "the parse workers were stopped"));
      this.pump();
    };
    w.on("error", (err) => gone(`a parse worker failed: ${err.message}`));
    w.on("exit", (code) => {
      // One stopped on purpose, or an idle one stopped by the process exiting, is no
      // failure (and then there is nothing to say, least of all on a closing stderr).
      if (!this.workers.has(w)) return; // after "error"
      if (this.stopping.delete(w) || jobs.length === 0) gone(null);
      else gone(`a parse worker exited (code ${code})`);
    });
    return w;
  }

  /** This thread's turn at whole-file parses, one at a time in the order asked; resolves the function that ends it. */
  turn(): Promise<() => void> {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const mine = this.lane.then(() => end);
    this.lane = this.lane.then(() => ended);
    return mine;
  }

  private retire(w: Worker): void {
    this.stopping.add(w);
    void w.terminate();
  }

  private fail(why: string): void {
    if (!this.broken) {
      this.broken = why;
      console.warn(`[rlboard] ${why}; large files are parsed in one thread from now on`);
    }
  }

  /** Stop every worker (tests). */
  async close(): Promise<void> {
    const all = [...this.workers.keys()];
    for (const w of all) this.stopping.add(w);
    await Promise.all(all.map((w) => w.terminate()));
  }
}

/**
 * A parse worker. In the server Next built (NEXT_RUNTIME is set there), the worker entry
 * is bundled from the `new URL(…)` below. Run from source (the CLI, bench and tests under
 * tsx or vitest), it is TypeScript, loaded through tsx's loader, found at run time: the
 * `turbopackIgnore` comment keeps the bundler from resolving tsx (it did, and warned
 * "Can't resolve <dynamic>" on every build, while the name was put together at run time).
 */
function startWorker(): Worker {
  if (process.env.NEXT_RUNTIME) return new Worker(new URL("./parse-worker.ts", import.meta.url));
  const entry = pathToFileURL(path.join(path.dirname(fileURLToPath(import.meta.url)), "parse-worker.ts")).href;
  const pkgFile = createRequire(import.meta.url).resolve(/* turbopackIgnore: true */ "tsx/package.json");
  const pkg = JSON.parse(fs.readFileSync(pkgFile, "utf8")) as { exports: Record<string, { import: { default: string } }> };
  const api = pathToFileURL(path.join(path.dirname(pkgFile), pkg.exports["./esm/api"]!.import.default)).href;
  return new Worker(`import(${JSON.stringify(api)}).then((m) => m.tsImport(${JSON.stringify(entry)}, ${JSON.stringify(entry)}))`, { eval: true });
}

const g = globalThis as unknown as { __rlboardParsePool?: ParsePool };

/** The process's pool (one per process: Next loads lib/ twice, for the routes and the instrumentation hook). */
function pool(): ParsePool {
  return (g.__rlboardParsePool ??= new ParsePool(defaultWorkers()));
}

function defaultWorkers(): number {
  return Math.max(0, Math.min(3, os.availableParallelism() - 1));
}

/**
 * Parse workers per process (`RLBOARD_PARSE_WORKERS`; null: the default). 0: never split a
 * file. `splitMinBytes`: the size from which a file is split (tests split small files).
 */
export function setParseWorkers(n: number | null, splitMinBytes = SPLIT_MIN_BYTES, wholeMinBytes = WHOLE_MIN_BYTES): void {
  const p = pool();
  p.size = n === null ? defaultWorkers() : Math.max(0, Math.min(16, Math.floor(n)));
  p.splitMinBytes = splitMinBytes;
  p.wholeMinBytes = wholeMinBytes;
}

/** What the pool did (tests): parts parsed by workers, and why it is off, if it is. */
export function parsePoolState(): { workers: number; partsDone: number; broken: string | null } {
  const p = pool();
  return { workers: p.size, partsDone: p.partsDone, broken: p.broken };
}

/** Stop the workers and forget the pool (tests). */
export async function resetParsePool(): Promise<void> {
  const p = g.__rlboardParsePool;
  g.__rlboardParsePool = undefined;
  await p?.close();
}

/**
 * Offsets just past a `\n` near `to × k / parts` (k = 1 … parts − 1), increasing, each
 * below `to`; fewer when no line end is found near a proposed cut.
 */
async function cutPoints(read: ReadAt, to: number, parts: number): Promise<number[]> {
  const cuts: number[] = [];
  const buf = Buffer.allocUnsafe(64 << 10);
  for (let k = 1; k < parts; k++) {
    let at = Math.max(Math.floor((to * k) / parts), cuts.length ? cuts[cuts.length - 1]! : 1);
    const limit = Math.min(to, at + CUT_SCAN_BYTES);
    let cut = -1;
    while (at < limit && cut < 0) {
      const n = await read(buf, Math.min(buf.length, limit - at), at);
      if (n <= 0) break;
      const nl = buf.indexOf(10);
      if (nl >= 0 && nl < n) cut = at + nl + 1;
      at += n;
    }
    if (cut > 0 && cut < to && (cuts.length === 0 || cut > cuts[cuts.length - 1]!)) cuts.push(cut);
  }
  return cuts;
}

/**
 * `[0, to)` of the open file into the empty `block`, in parts (see the header); null when
 * the file is too small or no worker is to be had (the caller parses it in one pass).
 *
 * The parts after the first are queued last first, so the workers parse the file from its
 * end while this thread parses it from the start straight into the block, taking each next
 * part back as long as it is not posted to a worker: the two meet wherever this thread's
 * other work lets it get to, and only the workers' parts are copied in. (Every part to the
 * workers and this thread only appending was slower on 2 cores: ~2.4 against ~2.2 s for a
 * 1024-GPU 4 h heatmap, its parts then all copied, and the workers' garbage collected here.)
 */
export async function ingestSplit<B>(fh: fs.promises.FileHandle, codec: RangeCodec<B>, split: SplitCodec<B>, block: B, to: number): Promise<RangeResult | null> {
  const p = pool();
  if (p.size === 0 || p.broken || to < p.splitMinBytes) return null;
  const read = fileReader(fh);
  const cuts = await cutPoints(read, to, Math.max(p.size + 1, Math.ceil(to / PART_BYTES)));
  if (cuts.length === 0) return null;
  const bounds = [0, ...cuts, to];
  const n = bounds.length - 1; // part k: [bounds[k], bounds[k + 1]); part 0 is this thread's
  const queued = new Array<{ result: Promise<GpuRangeResult>; steal(): boolean }>(n);
  for (let k = n - 1; k >= 1; k--) queued[k] = p.submit<GpuRangeResult>({ stream: split.stream, fd: fh.fd, from: bounds[k]!, to: bounds[k + 1]! });
  /** Parts this thread parsed (or took back unparsed): nothing of a worker's to wait for. */
  const mine = new Array<boolean>(n).fill(false);
  mine[0] = true;
  let pos = 0;
  let corrupt = 0;
  let firstCorruptAt = -1;
  const take = (r: RangeResult) => {
    corrupt += r.corrupt;
    if (firstCorruptAt < 0) firstCorruptAt = r.firstCorruptAt;
    pos = r.pos;
  };
  let failed = false;
  try {
    take(await ingestChunks(read, codec, block, 0, bounds[1]!, to));
    let k = 1;
    for (; k < n && pos === bounds[k] && (mine[k] = queued[k]!.steal()); k++) take(await ingestChunks(read, codec, block, bounds[k]!, bounds[k + 1]!, null));
    for (; k < n && pos === bounds[k]; k++) {
      const r = await queued[k]!.result.catch(() => null);
      if (!r) {
        failed = true;
        break;
      }
      split.adopt(block, r);
      take(r);
    }
  } finally {
    // Nothing may read the descriptor once this returns (the caller closes it): the parts
    // not posted to a worker are taken back, the others waited for.
    const left: Promise<unknown>[] = [];
    for (let j = 1; j < n; j++) if (!mine[j] && !(mine[j] = queued[j]!.steal())) left.push(queued[j]!.result);
    await Promise.allSettled(left);
  }
  if (failed) take(await ingestChunks(read, codec, block, pos, to, null)); // that part and the rest, here
  // A part that ended early (the file changed under the read): the next read goes on from `pos`.
  return { pos, corrupt, firstCorruptAt };
}

/**
 * `[0, to)` of the open file into the empty `block`, by this thread or a worker, whichever
 * is free first; null when the file is too small or no worker is to be had (the caller
 * parses it in one pass). For streams read many files at a time (a fleet view reads a
 * day of phase hours): each file is queued for the workers, newest first, while this
 * thread takes the files in the order asked, one at a time, each one no worker has taken
 * yet. A part a worker parsed is adopted whole; one that failed is parsed here.
 */
export async function ingestWhole<B>(fh: fs.promises.FileHandle, codec: RangeCodec<B>, whole: WholeCodec<B>, block: B, to: number): Promise<RangeResult | null> {
  const p = pool();
  if (p.size === 0 || p.broken || to < p.wholeMinBytes) return null;
  const read = fileReader(fh);
  const job = p.submit<PhaseRangeResult>({ stream: whole.stream, fd: fh.fd, from: 0, to }, true);
  const done = await p.turn();
  try {
    if (job.steal()) return await ingestChunks(read, codec, block, 0, to, to);
  } finally {
    done();
  }
  // Posted to a worker: nothing may read the descriptor after this returns, so it is waited for.
  const r = await job.result.catch(() => null);
  if (!r) return await ingestChunks(read, codec, block, 0, to, to);
  whole.adopt(block, r);
  return { pos: r.pos, corrupt: r.corrupt, firstCorruptAt: r.firstCorruptAt };
}
