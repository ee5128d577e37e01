/**
 * The writer's side of the phase hour index (docs/formats.md §4.16): an
 * `index/phases/{hour}.json` beside each phase hour the writer has finished with, so a
 * reader that has never seen the run learns each hour's OPEN markers without parsing it
 * (a 4 h window of a 1024-GPU day otherwise parses all 24 phase hours, ~0.9 GB).
 *
 * When: an hour is indexed once the writer has appended to a phase hour at least LAG_HOURS
 * newer (closing rows are filed by their end hour and batched by producers, so an hour
 * still gets rows for a while after it ends), and every hour written is indexed when the
 * writer closes. An hour appended to after it was indexed is indexed again at the next
 * of those points (at most once a minute while the writer runs); meanwhile its index no
 * longer matches the file and readers ignore it. Indexing runs beside the flushes (it
 * reads `[0, size)` of a file that is only appended to), one hour at a time; it never fails
 * a flush: an error is logged and the hour is left without an index (readers parse it).
 */
import { join } from "node:path";
import { hourKeyOfIndex, hourStartOfKey, HOUR_FILE_RE, PHASE_INDEX_DIR, phaseIndexRel } from "@/lib/store/format";
import { factsFromIndex, indexPhaseFile } from "@/lib/store/telemetry/phase-index";
import { fileReader, type ReadAt } from "@/lib/store/telemetry/read-range";
import { replaceFile, type WriterFs } from "./writer-fs";

/** Hours between an hour and the newest written before the hour is indexed. */
export const LAG_HOURS = 2;
/** An hour indexed this recently is not indexed again before this much time has passed (or the writer closes). */
const REINDEX_MS = 60_000;

export interface IndexerLog {
  warn(message: string): void;
}

export class PhaseIndexer {
  /** Hour numbers appended to since they were last indexed. */
  private readonly dirty = new Set<number>();
  /** When each hour was last indexed (performance.now()), so an hour that keeps getting late rows is not parsed on every flush. */
  private readonly indexedAt = new Map<number, number>();
  private newest = -Infinity;
  private running: Promise<void> = Promise.resolve();
  private busy = false;

  constructor(
    private readonly dashDir: string,
    private readonly fs: WriterFs,
    private readonly log: IndexerLog,
  ) {}

  /** Phase lines were appended to these hours (hour numbers). */
  note(hours: readonly number[]): void {
    let last = NaN;
    for (const h of hours) {
      if (h === last) continue;
      last = h;
      this.dirty.add(h);
      if (h > this.newest) this.newest = h;
    }
  }

  /** Index the hours that are due, in the background, unless a pass is running (it picks them up). */
  kick(): void {
    if (!this.busy) this.start(false);
  }

  /** Index every hour appended to and not indexed since (the writer closes). */
  async finish(): Promise<void> {
    // A pass a flush kicked may start while an earlier one is awaited: never two at once
    // (they would write the same hour's temporary file).
    while (this.busy) await this.running;
    this.start(true);
    await this.running;
  }

  /** Hours to index now: LAG_HOURS behind the newest and not indexed within REINDEX_MS (all: every dirty hour). */
  private due(all: boolean): number[] {
    const now = performance.now();
    return [...this.dirty].filter((h) => all || (h <= this.newest - LAG_HOURS && !(now - (this.indexedAt.get(h) ?? -Infinity) < REINDEX_MS))).sort((a, b) => a - b);
  }

  private start(all: boolean): void {
    this.busy = true;
    this.running = (async () => {
      for (let due = this.due(all); due.length > 0; due = this.due(all))
        for (const h of due) {
          this.dirty.delete(h);
          this.indexedAt.set(h, performance.now());
          await indexHour(this.fs, this.dashDir, hourKeyOfIndex(h), this.log);
        }
    })().finally(() => (this.busy = false));
  }
}

/**
 * Write the index of phase hour `key` from the file's current complete lines (tmp +
 * rename: a reader never sees half an index). False when nothing was written (the file
 * is gone, ends in a partial line, or an error was logged).
 */
export async function indexHour(fs: WriterFs, dashDir: string, key: string, log: IndexerLog): Promise<boolean> {
  const hourStart = hourStartOfKey(key);
  if (hourStart === null) return false;
  const target = join(dashDir, phaseIndexRel(key));
  try {
    const index = await withHourFile(fs, dashDir, key, (read, stat) => indexPhaseFile(read, stat, hourStart));
    if (index === null) return false;
    await fs.mkdir(join(dashDir, PHASE_INDEX_DIR));
    await replaceFile(fs, target, JSON.stringify(index));
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
    log.warn(`could not write the phase hour index ${target} (${e instanceof Error ? e.message : String(e)}); readers parse that hour instead`);
    return false;
  }
}

/**
 * Index every phase hour of a run whose index is missing or no longer matches its file (a
 * run written before the writer kept indexes, by miles, or by a writer that stopped before
 * it closed). Only for a run no collector is writing. `indexed`: the hours indexed now;
 * `current`: those whose index already matched; the rest could not be indexed (a partial
 * last line, or an error the log was told).
 */
export async function indexPhaseHours(fs: WriterFs, dashDir: string, log: IndexerLog): Promise<{ indexed: string[]; current: string[]; hours: number }> {
  const names = (await fs.listDir(join(dashDir, "phases"))) ?? [];
  const out = { indexed: [] as string[], current: [] as string[], hours: 0 };
  for (const name of names.sort()) {
    const key = HOUR_FILE_RE.exec(name)?.[1];
    if (key === undefined || hourStartOfKey(key) === null) continue;
    out.hours++;
    if (await upToDate(fs, dashDir, key)) out.current.push(key);
    else if (await indexHour(fs, dashDir, key, log)) out.indexed.push(key);
  }
  return out;
}

async function upToDate(fs: WriterFs, dashDir: string, key: string): Promise<boolean> {
  const text = await fs.readFileIfExists(join(dashDir, phaseIndexRel(key)));
  if (text === undefined) return false;
  try {
    return (await withHourFile(fs, dashDir, key, (read, stat) => factsFromIndex(text, read, stat))) !== null;
  } catch {
    return false;
  }
}

/** `fn` over phase hour `key`'s file, open for reading while it runs. */
async function withHourFile<T>(fs: WriterFs, dashDir: string, key: string, fn: (read: ReadAt, stat: { size: number; mtimeMs: number }) => Promise<T>): Promise<T> {
  const fh = await fs.openRead(join(dashDir, "phases", `${key}.jsonl`));
  try {
    return await fn(fileReader(fh), await fh.stat());
  } finally {
    await fh.close();
  }
}
