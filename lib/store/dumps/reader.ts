/**
 * DumpReader: the read side of one run directory's rollout/train dumps (spec api.md 1–7).
 *
 * Policy:
 *  - Read-only over the run directory. Summary caches and rebuilt parquet mirrors go
 *    under `cacheDir` (the app's data dir); without one, nothing is written anywhere.
 *  - Memory is bounded: summary frames of `tensorLru` rollouts (the joined tensors
 *    themselves are reduced to statistics right away), opened train shards of 4
 *    rollouts for token point reads, 4 sidecars, 2 rebuilt mirrors.
 *  - Errors: a missing file or sample → 404; a `.pt` that fails to parse and is younger
 *    than 60 s → 503 still_writing; a bad token window → 400; join inconsistencies →
 *    plain Error (500).
 */
import fs from "node:fs/promises";
import path from "node:path";
import { notFound } from "@/lib/api/errors";
import { readSummaryCache, summaryCacheKey, summaryCachePath, writeSummaryCache } from "./cache";
import {
  guardedLoad,
  guardPtReads,
  listRolloutIds as listIds,
  listTrainShards,
  mirrorRel,
  rolloutRel,
  rolloutStem,
  sidecarRel,
  stampOrNull,
  type FileStamp,
} from "./files";
import { buildGroups, stepAggregate, GROUP_COLUMNS, type GroupRow, type StepAggregateRow } from "./groups";
import { buildTrainRow, indexLocations, joinTrainRows, type Location } from "./join";
import { Inflight, Lru } from "./lru";
import { MirrorReader, mirrorRowsFromSamples, writeMirror, type MirrorRow } from "./mirror";
import { openRolloutDump, PtShardSource, toNumArray, type ShardHandle } from "./pt-source";
import { pyGet, pyInt } from "./pyobj";
import { parseSample } from "./sample";
import { readSidecar, type SidecarIndex } from "./sidecar";
import { buildSummary, trainStats, type SummaryColumn, type SummaryFrame, type SummaryRow } from "./summary";
import { loadTokenizer, type TokenTextDecoder } from "./tokenizer";
import { buildTokenPayload, type TokenPayload, type TokenWindow } from "./tokens";
import type { SampleRecord, TrainRow } from "./types";

export interface DumpReaderOptions {
  /** Where summary caches and rebuilt mirrors go (app data dir). Omit to cache in memory only. */
  cacheDir?: string;
  /** Number of rollouts whose summaries stay in memory (CLI --tensor-lru, default 2). */
  tensorLru?: number;
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

const SHARD_LRU = 4;
const SIDECAR_LRU = 4;
const MIRROR_LRU = 2;
/** Evicted shard handles are closed after this delay, so in-flight point reads finish. */
const CLOSE_DELAY_MS = 30_000;
const MIRROR_KV = "rlboard.mirror.source";

interface ShardSet {
  shards: ShardHandle[];
  locations: Map<number, Location[]>;
}

const stampKey = (s: FileStamp) => `${s.size}:${s.mtimeNs}`;

export class DumpReader {
  readonly dir: string;
  private readonly cacheDir: string | null;
  private readonly summaries: Lru<string, { key: string; frame: SummaryFrame }>;
  private readonly shardSets = new Lru<string, Promise<ShardSet>>(SHARD_LRU, (p) => {
    const t = setTimeout(() => {
      void p.then((s) => Promise.all(s.shards.map((h) => h.close()))).catch(() => undefined);
    }, CLOSE_DELAY_MS);
    t.unref?.();
  });
  private readonly sidecars = new Lru<string, Promise<SidecarIndex>>(SIDECAR_LRU);
  private readonly rebuiltMirrors = new Lru<string, Promise<Map<number, MirrorRow>>>(MIRROR_LRU);
  private readonly mirrors = new MirrorReader();
  private readonly inflight = new Inflight<string, SummaryFrame>();
  private tokenizer: Promise<TokenTextDecoder | null> | null = null;

  constructor(dir: string, opts: DumpReaderOptions = {}) {
    this.dir = dir;
    this.cacheDir = opts.cacheDir ?? null;
    this.summaries = new Lru(Math.max(1, opts.tensorLru ?? 2));
  }

  private abs(rel: string): string {
    return path.join(this.dir, rel);
  }

  // ---- listing / capabilities

  listRolloutIds(): Promise<{ train: number[]; eval: number[] }> {
    return listIds(this.dir);
  }

  async hasTokenizer(): Promise<boolean> {
    try {
      return (await fs.stat(this.abs("tokenizer"))).isDirectory();
    } catch {
      return false;
    }
  }

  // ---- rollout loading

  private async loadSamples(rid: number, evaluation: boolean): Promise<SampleRecord[]> {
    const rel = rolloutRel(rid, evaluation);
    const abs = this.abs(rel);
    const { rolloutId, samples } = await guardedLoad(abs, rel, async () => {
      const dump = await openRolloutDump(abs);
      try {
        const out: SampleRecord[] = [];
        for (const raw of dump.samples) {
          const lists = {
            tokens: await toNumArray(pyGet(raw, "tokens")),
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
    if (pyInt(rolloutId) !== rid) throw new Error(`${rel}: rollout_id ${String(rolloutId)} != ${rid}`);
    return samples;
  }

  private async openShards(rid: number): Promise<ShardHandle[]> {
    const files = await listTrainShards(this.dir, rid);
    const out: ShardHandle[] = [];
    try {
      for (const f of files) {
        const rel = path.posix.join("train_data", f.name);
        const abs = this.abs(rel);
        out.push(await guardedLoad(abs, rel, () => PtShardSource.open(abs, f.name)));
      }
    } catch (err) {
      await Promise.all(out.map((h) => h.close()));
      throw err;
    }
    return out;
  }

  // ---- L1 summary (cached)

  private async summarySources(rid: number, evaluation: boolean): Promise<Record<string, FileStamp>> {
    const rel = rolloutRel(rid, evaluation);
    const st = await stampOrNull(this.abs(rel));
    if (st === null) throw notFound(`no such file: ${rel}`);
    const sources: Record<string, FileStamp> = { [path.posix.basename(rel)]: st };
    if (!evaluation) {
      for (const f of await listTrainShards(this.dir, rid)) {
        const s = await stampOrNull(this.abs(path.posix.join("train_data", f.name)));
        if (s !== null) sources[f.name] = s;
      }
    }
    return sources;
  }

  async summaryFrame(rid: number, evaluation: boolean): Promise<SummaryFrame> {
    const stem = rolloutStem(rid, evaluation);
    const key = summaryCacheKey(await this.summarySources(rid, evaluation));
    const mem = this.summaries.get(stem);
    if (mem && mem.key === key) return mem.frame;
    return this.inflight.run(`${stem}\u0000${key}`, async () => {
      const cachePath = this.cacheDir ? summaryCachePath(this.cacheDir, stem) : null;
      let frame = cachePath ? await readSummaryCache(cachePath, key) : null;
      if (frame === null) {
        frame = await this.computeSummary(rid, evaluation);
        if (cachePath) {
          await writeSummaryCache(cachePath, key, frame).catch((err: unknown) => {
            console.warn(`[rlboard] could not write summary cache ${cachePath}:`, err);
          });
        }
      }
      this.summaries.set(stem, { key, frame });
      return frame;
    });
  }

  private async computeSummary(rid: number, evaluation: boolean): Promise<SummaryFrame> {
    const samples = await this.loadSamples(rid, evaluation);
    if (evaluation) return buildSummary(samples, new Map(), rid, true);
    const shards = await this.openShards(rid);
    try {
      const rows = await guardPtReads(this.dir, () => joinTrainRows(samples, shards, trainStats));
      return buildSummary(samples, rows, rid, false);
    } finally {
      await Promise.all(shards.map((h) => h.close()));
    }
  }

  async summary(rid: number, evaluation: boolean): Promise<SummaryTable> {
    const frame = await this.summaryFrame(rid, evaluation);
    return { rollout_id: rid, evaluation, columns: frame.columns, rows: frame.rows };
  }

  async groups(rid: number, evaluation: boolean): Promise<GroupsTable> {
    const frame = await this.summaryFrame(rid, evaluation);
    return { rollout_id: rid, evaluation, columns: [...GROUP_COLUMNS], rows: buildGroups(frame.rows, evaluation) };
  }

  /** `dump/*` step aggregates over the visible train rollouts, ascending (4.2). */
  async stepAggregates(): Promise<StepAggregateRow[]> {
    const { train } = await this.listRolloutIds();
    const out: StepAggregateRow[] = [];
    for (const rid of train) {
      const frame = await this.summaryFrame(rid, false);
      out.push(stepAggregate(rid, frame.rows, buildGroups(frame.rows, false)));
    }
    return out;
  }

  /** Sample indices of a train rollout's summary, in dump order (for /trajectories). */
  async trajectoryIndices(rid: number): Promise<number[]> {
    const frame = await this.summaryFrame(rid, false);
    return frame.rows.map((r) => r.sample_index).filter((v): v is number => v !== null);
  }

  // ---- L2 tokens (point read)

  private async mirrorRow(rid: number, si: number, evaluation: boolean): Promise<MirrorRow> {
    const missing = () => notFound(`unknown sample_index ${si} in rollout ${rid}`);
    const rel = mirrorRel(rid, evaluation);
    const st = await stampOrNull(this.abs(rel));
    if (st !== null) {
      const res = await this.mirrors.read(this.abs(rel), stampKey(st), si);
      if (res.valid) {
        if (res.row === null) throw missing();
        return res.row;
      }
    }
    // No usable mirror in the run: rebuild from the rollout .pt (cache dir only).
    const ptRel = rolloutRel(rid, evaluation);
    const ptStamp = await stampOrNull(this.abs(ptRel));
    if (ptStamp === null) throw notFound(`no such file: ${ptRel}`);
    const kv = [MIRROR_KV, stampKey(ptStamp)] as const;
    const cached = this.cacheDir ? path.join(this.cacheDir, "dashboard_columns", path.posix.basename(rel)) : null;
    if (cached) {
      const cst = await stampOrNull(cached);
      if (cst !== null) {
        const res = await this.mirrors.read(cached, stampKey(cst), si, kv).catch(() => ({ valid: false }) as const);
        if (res.valid) {
          if (res.row === null) throw missing();
          return res.row;
        }
      }
    }
    const memKey = `${rolloutStem(rid, evaluation)}\u0000${kv[1]}`;
    let rowsP = this.rebuiltMirrors.get(memKey);
    if (!rowsP) {
      rowsP = this.loadSamples(rid, evaluation).then(async (samples) => {
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

  private async shardSet(rid: number): Promise<ShardSet | null> {
    const files = await listTrainShards(this.dir, rid);
    if (files.length === 0) return null;
    const stamps = await Promise.all(files.map((f) => stampOrNull(this.abs(path.posix.join("train_data", f.name)))));
    const key = `${rid}\u0000${files.map((f, i) => `${f.name}@${stamps[i] ? stampKey(stamps[i]) : "-"}`).join(",")}`;
    let p = this.shardSets.get(key);
    if (!p) {
      p = (async () => {
        const shards = await this.openShards(rid);
        try {
          return { shards, locations: await guardPtReads(this.dir, () => indexLocations(shards)) };
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

  async tokens(rid: number, sampleIndex: number, opts: TokensOptions = {}): Promise<TokenPayload> {
    const evaluation = opts.evaluation ?? false;
    const mirror = await this.mirrorRow(rid, sampleIndex, evaluation);
    let row: TrainRow | null = null;
    if (!evaluation) {
      const set = await this.shardSet(rid);
      const locs = set?.locations.get(sampleIndex);
      if (set && locs) row = await guardPtReads(this.dir, () => buildTrainRow(sampleIndex, set.shards, locs));
    }
    const decoder = (await this.hasTokenizer()) ? await this.loadTokenizer() : null;
    return buildTokenPayload(rid, sampleIndex, evaluation, mirror, row, opts, decoder ? (id) => decoder.decodeOne(id) : null);
  }

  private loadTokenizer(): Promise<TokenTextDecoder | null> {
    if (this.tokenizer === null) {
      const p = loadTokenizer(this.abs("tokenizer"));
      this.tokenizer = p;
      // A live run may write tokenizer.json after creating the folder: retry next time.
      void p.then((t) => {
        if (t === null && this.tokenizer === p) this.tokenizer = null;
      });
    }
    return this.tokenizer;
  }

  // ---- trajectory sidecar (messages)

  async messages(rid: number, sampleIndex: number, evaluation: boolean): Promise<Record<string, unknown>> {
    const rel = sidecarRel(rid, evaluation);
    const abs = this.abs(rel);
    const st = await stampOrNull(abs);
    if (st === null) throw notFound(`no conversation recorded for rollout ${rolloutStem(rid, evaluation)} (${rel} missing)`);
    const key = `${rel}\u0000${stampKey(st)}`;
    let p = this.sidecars.get(key);
    if (!p) {
      p = readSidecar(abs, rel);
      p.catch(() => this.sidecars.delete(key));
      this.sidecars.set(key, p);
    }
    const row = (await p).get(sampleIndex);
    if (!row) throw notFound(`sample ${sampleIndex} has no recorded conversation in rollout ${rid}`);
    return row;
  }
}

export function openDumpReader(runDir: string, opts: DumpReaderOptions = {}): DumpReader {
  return new DumpReader(runDir, opts);
}
