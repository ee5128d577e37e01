import fsSync from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { ApiError } from "@/lib/contracts/errors";
import { jsonSafeStringify } from "@/lib/api/json";
import { PtFormatError } from "@/lib/store/pt/errors";
import { RunFs } from "@/lib/store/safe-fs";
import { expectedWidth } from "./cp";
import { guardPtReads } from "./files";
import { writeMirror } from "./mirror";
import { openDumpReader, type DumpReader, type DumpReaderOptions } from "./reader";
import { NO_TRAIN_COLUMNS, TRAIN_COLUMNS } from "./summary";
import {
  ageFiles,
  fullValues,
  makeRunDir,
  tokensOf,
  writeRollout,
  writeTrainShard,
  type SampleSpec,
  type TrainSampleSpec,
} from "./test-fixtures";

let dir: string;
let cacheDir: string;
/** Readers opened by a test; closed after it (no file handle is left to the GC). */
let readers: DumpReader[] = [];
function openReader(runDir: string, opts?: DumpReaderOptions): DumpReader {
  const r = openDumpReader(runDir, opts);
  readers.push(r);
  return r;
}
beforeEach(async () => {
  dir = await makeRunDir();
  cacheDir = await makeRunDir("rlboard-cache-");
});
afterEach(async () => {
  await Promise.all(readers.map((r) => r.close()));
  readers = [];
  await fs.rm(dir, { recursive: true, force: true });
  await fs.rm(cacheDir, { recursive: true, force: true });
});

async function expectApiError(p: Promise<unknown>, code: string, msg?: RegExp): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).code).toBe(code);
  if (msg) expect((err as ApiError).message).toMatch(msg);
}

const S = (index: number, response_length: number, extra: Partial<SampleSpec> = {}): SampleSpec => ({
  index,
  response_length,
  group_index: Math.floor(index / 2),
  ...extra,
});

function trainRow(s: SampleSpec, seed: number, extra: Partial<TrainSampleSpec> = {}): TrainSampleSpec {
  return { sample: s, values: fullValues(s, seed), reward: seed / 10, ...extra };
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

describe("join: TP duplicates, dedup and raw_reward", () => {
  const samples = [S(0, 5), S(1, 4), S(2, 6), S(3, 3)];
  const rows = samples.map((s, i) => trainRow(s, i + 1));
  // dp0 = samples 0, 2 (ranks 0, 1 = TP peers); dp1 = samples 3, 1 (ranks 2, 3), other row order.
  const rawReward = [0.25, 0.5, 0.75, 1.0];

  beforeEach(async () => {
    await writeRollout(dir, 0, samples);
    for (const rank of [0, 1]) {
      await writeTrainShard(dir, 0, { rank, rows: [rows[0]!, rows[2]!], cp: { rank: 0, size: 1 }, raw_reward: rawReward });
    }
    for (const rank of [2, 3]) {
      await writeTrainShard(dir, 0, { rank, rows: [rows[3]!, rows[1]!], cp: { rank: 0, size: 1 }, raw_reward: rawReward });
    }
  });

  test("each sample comes from its lowest-ranked copy and raw_reward is looked up by batch position", async () => {
    const r = openReader(dir, { cacheDir });
    const s = await r.summary(0, false);
    expect(s.columns).toEqual([...TRAIN_COLUMNS]);
    expect(s.rows.map((x) => x.sample_index)).toEqual([0, 1, 2, 3]);
    expect(s.rows.map((x) => x.dumped_rank)).toEqual([0, 2, 0, 2]);
    expect(s.rows.map((x) => x.raw_reward)).toEqual(rawReward);
    expect(s.rows.map((x) => x.normalized_reward)).toEqual([0.1, 0.2, 0.3, 0.4]);
    const v = fullValues(samples[2]!, 3);
    expect(s.rows[2]!.mean_entropy).toBeCloseTo(mean(v.entropy), 6);
    expect(s.rows[2]!.mean_abs_lp_diff).toBeCloseTo(mean(v.log_probs.map((x, i) => Math.abs(x - v.rollout_log_probs[i]!))), 6);
    expect(s.rows.every((x) => !x.alignment_failed)).toBe(true);
  });

  test("groups use raw_reward for train", async () => {
    const g = await openReader(dir).groups(0, false);
    expect(g.rows.map((x) => x.group_index)).toEqual([0, 1]);
    expect(g.rows[0]!.reward_mean).toBeCloseTo(0.375, 12);
  });

  test("a raw_reward that is not batch-global is a 500-class error", async () => {
    await writeTrainShard(dir, 0, { rank: 3, rows: [rows[3]!, rows[1]!], cp: { rank: 0, size: 1 }, raw_reward: [1, 2] });
    await expect(openReader(dir).summary(0, false)).rejects.toThrow(/raw_reward must be batch-global \(expected 4 entries, got 2\)/);
  });

  test("copies that disagree on lengths are rejected", async () => {
    await writeTrainShard(dir, 0, {
      rank: 1, rows: [rows[0]!, rows[2]!], cp: { rank: 0, size: 1 }, lengthsOverride: { response: 9, total: 12 },
    });
    const err = await openReader(dir).summary(0, false).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(ApiError);
    expect(String(err)).toMatch(/rank 1 disagrees with rank 0 on sample 0 lengths/);
  });

  test("a train row for a sample absent from the rollout dump is an error", async () => {
    await writeTrainShard(dir, 0, { rank: 4, rows: [trainRow(S(99, 3), 9)], cp: { rank: 0, size: 1 } });
    await expect(openReader(dir).summary(0, false)).rejects.toThrow(/sample_index 99 absent from the rollout dump/);
  });

  test("tokens point-read leaves raw_reward out and returns the train fields", async () => {
    const t = await openReader(dir).tokens(0, 1, {});
    const v = fullValues(samples[1]!, 2);
    expect(t.total_len).toBe(7);
    expect(t.prompt_len).toBe(3);
    expect(t.train_log_probs).toEqual(v.log_probs);
    expect(t.entropy).toEqual(v.entropy);
    expect(t.loss_mask).toEqual([1, 1, 1, 1]);
    expect(t.lp_diff?.[0]).toBeCloseTo(v.log_probs[0]! - v.rollout_log_probs[0]!, 6);
  });
});

describe("join: context parallelism", () => {
  const s0 = S(0, 10, { prompt_len: 6 });
  const s1 = S(1, 30, { prompt_len: 7 });
  const rows = [trainRow(s0, 1), trainRow(s1, 2)];

  async function writeCp(legacy: boolean): Promise<void> {
    await writeRollout(dir, 0, [s0, s1]);
    // TP=2 × CP=2: ranks 0,1 are cp_rank 0 (TP peers), ranks 2,3 cp_rank 1.
    for (const rank of [0, 1, 2, 3]) {
      const cpRank = rank < 2 ? 0 : 1;
      await writeTrainShard(dir, 0, legacy ? { rank, rows, cp: "legacy", cpSize: 2, cpRank } : { rank, rows, cp: { rank: cpRank, size: 2 } });
    }
  }

  for (const legacy of [false, true]) {
    test(`${legacy ? "legacy probe" : "recorded layout"}: per-token fields are reassembled exactly`, async () => {
      await writeCp(legacy);
      const r = openReader(dir);
      for (const [i, s] of [s0, s1].entries()) {
        const t = await r.tokens(0, s.index, {});
        const v = fullValues(s, i + 1);
        expect(t.train_log_probs).toEqual(v.log_probs);
        expect(t.advantages).toEqual(v.advantages);
        expect(t.returns).toEqual(v.returns);
      }
      const sum = await r.summary(0, false);
      expect(sum.rows.map((x) => x.alignment_failed)).toEqual([false, false]);
      expect(sum.rows[1]!.mean_entropy).toBeCloseTo(mean(fullValues(s1, 2).entropy), 6);
    });
  }

  test("legacy probe refuses slices whose widths do not fit the thd layout", async () => {
    await writeRollout(dir, 0, [s0]);
    // Two different full-length tensors: widths 10+10 ≠ response_length.
    const a = trainRow(s0, 1);
    const b = trainRow(s0, 5);
    await writeTrainShard(dir, 0, { rank: 0, rows: [a], cp: "legacy" });
    await writeTrainShard(dir, 0, { rank: 1, rows: [b], cp: "legacy" });
    const sum = await openReader(dir).summary(0, false);
    expect(sum.rows[0]).toMatchObject({ alignment_failed: true, mean_entropy: null, adv_mean: null, mean_abs_lp_diff: null });
    expect(expectedWidth({ totalLength: 16, responseLength: 10, cpSize: 2 }, 0)).toBe(3);
  });

  test("recorded layout with a missing cp rank marks the sample as misaligned", async () => {
    await writeRollout(dir, 0, [s0]);
    await writeTrainShard(dir, 0, { rank: 0, rows: [trainRow(s0, 1)], cp: { rank: 0, size: 2 } });
    const sum = await openReader(dir).summary(0, false);
    expect(sum.rows[0]).toMatchObject({ alignment_failed: true, mean_entropy: null, dumped_rank: 0 });
  });
});

describe("optional train columns and missing train side", () => {
  test("missing train log-probs give null lp_diff columns, not errors", async () => {
    const s = S(0, 4);
    const row = trainRow(s, 1);
    row.values = { ...row.values, log_probs: null };
    await writeRollout(dir, 0, [s]);
    await writeTrainShard(dir, 0, { rank: 0, rows: [row], cp: { rank: 0, size: 1 }, drop: ["log_probs"] });
    const r = openReader(dir);
    const sum = await r.summary(0, false);
    expect(sum.rows[0]).toMatchObject({ mean_abs_lp_diff: null, max_abs_lp_diff: null, mean_imp_ratio: null, raw_reward: null });
    expect(sum.rows[0]!.mean_entropy).not.toBeNull();
    const t = await r.tokens(0, 0, {});
    expect(t).toMatchObject({ train_log_probs: null, lp_diff: null, imp_ratio: null });
    expect(t.entropy).toHaveLength(4);
  });

  test("a dump without train files falls back per column; truncated comes from the status", async () => {
    await writeRollout(dir, 2, [S(0, 3, { status: "truncated" }), S(1, 3)]);
    const sum = await openReader(dir).summary(2, false);
    expect(sum.columns).toEqual([...NO_TRAIN_COLUMNS]);
    expect(sum.rows.map((x) => x.truncated)).toEqual([true, false]);
    expect(sum.rows[0]).toMatchObject({ raw_reward: null, normalized_reward: null, dumped_rank: null, alignment_failed: false });
  });

  test("eval dumps: no train side, groups use the sample reward", async () => {
    await writeRollout(dir, 0, [S(0, 3, { reward: 1 }), S(1, 3, { reward: 0 })], { evaluation: true });
    await writeTrainShard(dir, 0, { rank: 0, rows: [trainRow(S(0, 3), 1)] });
    const r = openReader(dir);
    const sum = await r.summary(0, true);
    expect(sum.evaluation).toBe(true);
    expect(sum.rows.every((x) => x.dumped_rank === null)).toBe(true);
    const g = await r.groups(0, true);
    expect(g.rows[0]).toMatchObject({ group_index: 0, n: 2, reward_mean: 0.5 });
    const t = await r.tokens(0, 0, { evaluation: true });
    expect(t).toMatchObject({ evaluation: true, loss_mask: null, train_log_probs: null });
  });

  test("NaN statistics serialise as null", async () => {
    const s = S(0, 1);
    await writeRollout(dir, 0, [s]);
    await writeTrainShard(dir, 0, { rank: 0, rows: [trainRow(s, 1)], cp: { rank: 0, size: 1 } });
    const sum = await openReader(dir).summary(0, false);
    expect(sum.rows[0]!.adv_std).toBeNaN();
    expect((JSON.parse(jsonSafeStringify(sum)) as { rows: { adv_std: unknown }[] }).rows[0]?.adv_std).toBeNull();
  });
});

describe("errors and visibility", () => {
  test("missing rollout → 404; unknown sample → 404; empty token range → 400", async () => {
    await writeRollout(dir, 0, [S(0, 3)]);
    const r = openReader(dir);
    await expectApiError(r.summary(5, false), "not_found");
    await expectApiError(r.tokens(5, 0, {}), "not_found");
    await expectApiError(r.tokens(0, 42, {}), "not_found", /unknown sample_index 42 in rollout 0/);
    await expectApiError(r.tokens(0, 0, { start: 5, end: 5 }), "bad_request", /empty token range \[5, 5\) for total_len=6/);
    await expectApiError(r.tokens(0, 0, { start: 100 }), "bad_request");
    const t = await r.tokens(0, 0, { start: -4, end: 2 });
    expect(t).toMatchObject({ start: 0, end: 2, response_offset: 2, rollout_log_probs: null, loss_mask: null, token_text: null });
  });

  test("a fresh unparsable .pt is still being written (503); an old one is corrupt_file naming it", async () => {
    await fs.mkdir(path.join(dir, "rollout_data"), { recursive: true });
    const file = path.join(dir, "rollout_data", "3.pt");
    await fs.writeFile(file, "PK\u0003\u0004 half a zip");
    const r = openReader(dir);
    await expectApiError(r.summary(3, false), "still_writing", /dump still being written: rollout_data\/3\.pt/);
    await ageFiles(dir);
    await expectApiError(openReader(dir).summary(3, false), "corrupt_file", /^rollout_data\/3\.pt: only 15 bytes, too small for a zip archive/);
  });

  test("a malformed storage met during a lazy read gets the same fresh/old policy", async () => {
    await writeRollout(dir, 0, [S(0, 3)]);
    const file = path.join(dir, "rollout_data", "0.pt");
    const boom = () => Promise.reject(new PtFormatError(file, "storage 3 truncated"));
    const runFs = new RunFs(dir);
    await expectApiError(guardPtReads(runFs, boom), "still_writing", /rollout_data\/0\.pt/);
    await ageFiles(dir);
    await expectApiError(guardPtReads(runFs, boom), "corrupt_file", /^rollout_data\/0\.pt: storage 3 truncated$/);
    await expect(guardPtReads(runFs, () => Promise.reject(new Error("join bug")))).rejects.toThrow("join bug");
  });

  test("a rollout_id that disagrees with the file name is an error, not a 503", async () => {
    await writeRollout(dir, 4, [S(0, 3)], { storedRolloutId: 5 });
    const err = await openReader(dir).summary(4, false).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(ApiError);
    expect(String(err)).toMatch(/rollout_id 5 != 4/);
  });

  test("listing hides fresh rollouts without a train companion and skips odd stems", async () => {
    await writeRollout(dir, 0, [S(0, 3)]);
    await writeRollout(dir, 1, [S(0, 3)]);
    await writeRollout(dir, 2, [S(0, 3)], { evaluation: true });
    await writeRollout(dir, 3, [S(0, 3)], { evaluation: true });
    await fs.writeFile(path.join(dir, "rollout_data", "notes.pt"), "x");
    await fs.writeFile(path.join(dir, "rollout_data", "eval_x.pt"), "x");
    await fs.writeFile(path.join(dir, "rollout_data", "7.tmp"), "x");
    const old = new Date("2026-01-01T00:00:00Z");
    await fs.utimes(path.join(dir, "rollout_data", "0.pt"), old, old);
    await fs.utimes(path.join(dir, "rollout_data", "eval_2.pt"), old, old);
    await writeTrainShard(dir, 1, { rank: 0, rows: [trainRow(S(0, 3), 1)] });
    expect(await openReader(dir).listRolloutIds()).toEqual({ train: [0, 1], eval: [2] });
    expect(await openReader(path.join(dir, "nope")).listRolloutIds()).toEqual({ train: [], eval: [] });
  });
});

describe("summary cache", () => {
  test("written under cacheDir only, reused, and invalidated by a changed source", async () => {
    const s = S(0, 3);
    await writeRollout(dir, 0, [s]);
    await writeTrainShard(dir, 0, { rank: 0, rows: [trainRow(s, 1)], cp: { rank: 0, size: 1 }, raw_reward: [0.5] });
    await ageFiles(dir); // whole-second mtimes, so utimes can restore them exactly below
    const before = (await fs.readdir(dir, { recursive: true })).sort();
    const first = await openReader(dir, { cacheDir }).summary(0, false);
    expect((await fs.readdir(dir, { recursive: true })).sort()).toEqual(before);
    expect(await fs.readdir(cacheDir)).toEqual(["rollout_0.summary.parquet"]);

    // A fresh reader answers from the cache even when the dump became unreadable...
    const shard = path.join(dir, "train_data", "0_0.pt");
    const st = await fs.stat(shard);
    const bytes = await fs.readFile(shard);
    await fs.writeFile(shard, bytes.subarray(0, 20));
    await fs.truncate(shard, st.size);
    await fs.utimes(shard, st.atime, st.mtime);
    const cached = await openReader(dir, { cacheDir }).summary(0, false);
    expect(cached).toEqual(first);
    expect(cached.columns).toEqual(first.columns);

    // ...and recomputes when a source changes (here: the train shard is rewritten).
    await writeTrainShard(dir, 0, { rank: 0, rows: [trainRow(s, 1)], cp: { rank: 0, size: 1 }, raw_reward: [0.75] });
    const again = await openReader(dir, { cacheDir }).summary(0, false);
    expect(again.rows[0]!.raw_reward).toBe(0.75);
  });

  test("one reader hands out the same frozen summary and groups while the files are unchanged, new ones after a change", async () => {
    const s = S(0, 3);
    await writeRollout(dir, 0, [s]);
    await writeTrainShard(dir, 0, { rank: 0, rows: [trainRow(s, 1)], cp: { rank: 0, size: 1 }, raw_reward: [0.5] });
    await ageFiles(dir);
    const r = openReader(dir, { cacheDir, recheckMs: 0 });
    const a = await r.summary(0, false);
    const g = await r.groups(0, false);
    // the same objects (the API layer keeps a frozen answer's bytes: lib/api/json.ts)
    expect(await r.summary(0, false)).toBe(a);
    expect(await r.groups(0, false)).toBe(g);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(g)).toBe(true);
    expect(() => {
      (a as { rollout_id: number }).rollout_id = 9;
    }).toThrow(TypeError);

    await writeTrainShard(dir, 0, { rank: 0, rows: [trainRow(s, 1)], cp: { rank: 0, size: 1 }, raw_reward: [0.75] });
    const b = await r.summary(0, false);
    expect(b).not.toBe(a);
    expect(b.rows[0]!.raw_reward).toBe(0.75);
    expect(a.rows[0]!.raw_reward).toBe(0.5);
    expect(await r.groups(0, false)).not.toBe(g);
  });

  test("NaN survives the cache (step aggregates need it)", async () => {
    const s = S(0, 1);
    await writeRollout(dir, 0, [s]);
    await writeTrainShard(dir, 0, { rank: 0, rows: [trainRow(s, 1)], cp: { rank: 0, size: 1 } });
    await ageFiles(dir);
    await openReader(dir, { cacheDir }).summary(0, false);
    const cached = await openReader(dir, { cacheDir }).summary(0, false);
    expect(cached.rows[0]!.adv_std).toBeNaN();
    const agg = await openReader(dir, { cacheDir }).stepAggregates();
    expect(agg).toHaveLength(1);
    expect(agg[0]).toMatchObject({ rollout_id: 0, n_samples: 1 });
  });
});

describe("parquet mirror and sidecar", () => {
  test("without a mirror the token view rebuilds one into the cache dir, never into the run", async () => {
    await writeRollout(dir, 0, [S(4, 3, { rollout_log_probs: [-0.1, -0.2, -0.3] })]);
    const t = await openReader(dir, { cacheDir }).tokens(0, 4, { start: 1 });
    expect(t.rollout_log_probs).toEqual([-0.1, -0.2, -0.3].map(Math.fround));
    await expect(fs.stat(path.join(dir, "dashboard_columns"))).rejects.toThrow();
    expect(await fs.readdir(path.join(cacheDir, "dashboard_columns"))).toEqual(["rollout_0.parquet"]);
    // A fresh reader reads the rebuilt mirror even if the .pt is unreadable now (same stamp).
    const t2 = await openReader(dir, { cacheDir }).tokens(0, 4, { start: 1 });
    expect(t2).toEqual(t);
  });

  test("a mirror with a different column set is ignored and rebuilt", async () => {
    await writeRollout(dir, 0, [S(4, 3)]);
    await fs.mkdir(path.join(dir, "dashboard_columns"));
    const { parquetWriteBuffer } = await import("hyparquet-writer");
    const bad = parquetWriteBuffer({ columnData: [{ name: "sample_index", data: [4] }, { name: "tokens", data: [[1, 2]] }] });
    await fs.writeFile(path.join(dir, "dashboard_columns", "rollout_0.parquet"), new Uint8Array(bad));
    const t = await openReader(dir).tokens(0, 4, {});
    expect(t.total_len).toBe(6);
  });

  test("messages come from the sidecar, NaN rewards included; absent file or sample → 404", async () => {
    await fs.mkdir(path.join(dir, "trajectory"));
    await fs.writeFile(
      path.join(dir, "trajectory", "1.jsonl"),
      '{"sample_index":3,"reward":NaN,"prompt":"p","messages":[]}\n\n{"sample_index":5,"reward":1.0,"prompt":"a","messages":[{"role":"user","content":"NaN"}]}\n{"sample_index":5,"reward":2.0,"prompt":"b","messages":[]}\n',
    );
    const r = openReader(dir);
    expect((await r.messages(1, 3, false)).reward).toBeNaN();
    expect(await r.messages(1, 5, false)).toMatchObject({ reward: 2, prompt: "b" });
    await expectApiError(r.messages(1, 4, false), "not_found", /sample 4 has no recorded conversation in rollout 1/);
    await expectApiError(r.messages(1, 3, true), "not_found");
    await expectApiError(r.messages(2, 3, false), "not_found");
  });

  test("token text is decoded per id when the run has a tokenizer", async () => {
    await writeRollout(dir, 0, [S(0, 2, { prompt_len: 1 })]);
    await fs.mkdir(path.join(dir, "tokenizer"));
    const vocab = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`w${i}`, i]));
    await fs.writeFile(path.join(dir, "tokenizer", "tokenizer.json"), JSON.stringify({ model: { type: "WordLevel", vocab }, decoder: null }));
    const r = openReader(dir);
    expect(await r.hasTokenizer()).toBe(true);
    const t = await r.tokens(0, 0, {});
    expect(t.token_text).toEqual(t.token_ids.map((i) => `w${i}`));
  });
});

describe("close() and prewarm()", () => {
  /** Open descriptors of this process that point into `root` (Linux; null elsewhere). */
  function fdsUnder(root: string): string[] | null {
    if (!fsSync.existsSync("/proc/self/fd")) return null;
    const out: string[] = [];
    for (const fd of fsSync.readdirSync("/proc/self/fd")) {
      try {
        const target = fsSync.readlinkSync(`/proc/self/fd/${fd}`);
        if (target.startsWith(root)) out.push(target);
      } catch {
        // raced with a close
      }
    }
    return out;
  }

  async function writeSteps(rids: readonly number[]): Promise<void> {
    for (const rolloutId of rids) {
      const s = S(0, 3);
      await writeRollout(dir, rolloutId, [s]);
      await writeTrainShard(dir, rolloutId, { rank: 0, rows: [trainRow(s, rolloutId + 1)], cp: { rank: 0, size: 1 } });
    }
    await ageFiles(dir);
  }

  test("close() closes the shard handles kept for token point reads", async () => {
    await writeSteps([0]);
    const r = openReader(dir);
    await r.tokens(0, 0, {});
    const open = fdsUnder(dir);
    if (open === null) return; // no /proc: nothing to observe
    expect(open.some((f) => f.endsWith(path.join("train_data", "0_0.pt")))).toBe(true);
    await r.close();
    expect(fdsUnder(dir)).toEqual([]);
    await r.close(); // idempotent
    expect((await r.tokens(0, 0, {})).total_len).toBe(6); // still usable: reopens on demand
  });

  test("listing computes nothing; prewarm() caches the newest steps, prewarm(rolloutId) a given one", async () => {
    await writeSteps([0, 1, 2]);
    const r = openReader(dir, { cacheDir });
    expect((await r.listRolloutIds()).train).toEqual([0, 1, 2]);
    expect(await fs.readdir(cacheDir)).toEqual([]);

    const p = r.prewarm();
    expect(r.prewarm()).toBe(p); // at most one in flight
    await p;
    expect((await fs.readdir(cacheDir)).sort()).toEqual(["rollout_1.summary.parquet", "rollout_2.summary.parquet"]);

    await r.prewarm(0);
    expect((await fs.readdir(cacheDir)).sort()).toEqual([
      "rollout_0.summary.parquet",
      "rollout_1.summary.parquet",
      "rollout_2.summary.parquet",
    ]);
    const warm = await r.summary(2, false); // answered from memory
    expect(warm.rows[0]!.normalized_reward).toBe(0.3);
    await r.prewarm(7); // a missing step is skipped quietly
    await r.close();
    await fs.rm(cacheDir, { recursive: true, force: true });
    await r.prewarm(); // no-op after close
    await expect(fs.readdir(cacheDir)).rejects.toThrow();
  });

  test("warmFromCache() loads the newest steps' summaries only where the cache has them, and builds nothing", async () => {
    await writeSteps([0, 1, 2]);
    expect(await openReader(dir, { cacheDir }).warmFromCache()).toEqual([]);
    expect(await fs.readdir(cacheDir)).toEqual([]);
    expect(await openReader(dir).warmFromCache()).toEqual([]); // no cache dir at all
    const builder = openReader(dir, { cacheDir });
    await builder.summary(2, false);
    const r = openReader(dir, { cacheDir });
    expect(await r.warmFromCache()).toEqual([2]); // step 2 cached, step 1 not
    await builder.summary(1, false);
    expect(await openReader(dir, { cacheDir }).warmFromCache()).toEqual([2, 1]);
    expect(await r.summary(2, false)).toEqual(await openReader(dir).summary(2, false));
    expect((await fs.readdir(cacheDir)).sort()).toEqual(["rollout_1.summary.parquet", "rollout_2.summary.parquet"]);
    await r.close();
    expect(await r.warmFromCache()).toEqual([]);
    // with room for one summary, the newest is the one left in memory: answered without the
    // cache (emptied here), so nothing is built and written back
    const one = openReader(dir, { cacheDir, tensorLru: 1 });
    expect(await one.warmFromCache()).toEqual([2, 1]);
    for (const f of await fs.readdir(cacheDir)) await fs.rm(path.join(cacheDir, f));
    expect(await one.summary(2, false)).toEqual(await openReader(dir).summary(2, false));
    expect(await fs.readdir(cacheDir)).toEqual([]);
  });

  test("prewarm waits for foreground calls and answers them the same", async () => {
    await writeSteps([0, 1]);
    const r = openReader(dir, { cacheDir });
    const bg = r.prewarm();
    const [fg] = await Promise.all([r.summary(1, false), bg]);
    const fresh = await openReader(dir).summary(1, false);
    expect(fg).toEqual(fresh);
  });
});

describe("token point read: I/O budget (perf regression guard, not timed)", () => {
  // 2 DP shards × 2 TP copies, 16 samples each, 8 000-token responses: every per-token
  // storage is 32 000 bytes and each train file ~5 MB. A point read must stay a point
  // read: a few positional reads per file to open it, then one read per storage of the
  // requested sample (loss mask + 7 fields) — never whole files.
  const R = 8000;
  const STORAGE = R * 4;
  const samples = Array.from({ length: 32 }, (_, i) => S(i, R));

  interface ReadLog {
    path: string;
    bytes: number;
  }

  /** Record every FileHandle.read (path, bytes) while `work` runs (Linux /proc needed). */
  async function recordReads(work: () => Promise<unknown>): Promise<ReadLog[]> {
    const probe = await fs.open(path.join(dir, "rollout_data", "0.pt"), "r");
    const proto = Object.getPrototypeOf(probe) as { read: (...args: unknown[]) => Promise<{ bytesRead: number }> };
    await probe.close();
    const original = proto.read;
    const log: ReadLog[] = [];
    const spy = vi.spyOn(proto, "read").mockImplementation(async function (this: { fd: number }, ...args: unknown[]) {
      const target = fsSync.readlinkSync(`/proc/self/fd/${this.fd}`);
      const res = await original.apply(this, args);
      log.push({ path: target, bytes: res.bytesRead });
      return res;
    });
    try {
      await work();
    } finally {
      spy.mockRestore();
    }
    return log;
  }

  const sum = (xs: readonly ReadLog[]) => xs.reduce((a, x) => a + x.bytes, 0);

  test.skipIf(!fsSync.existsSync("/proc/self/fd"))("positional reads and bytes of a point read in a 4-file step", async () => {
    await writeRollout(dir, 0, samples);
    await writeMirror(
      path.join(dir, "dashboard_columns", "rollout_0.parquet"),
      samples.map((s) => ({ sample_index: s.index, response_length: R, total_length: tokensOf(s).length, tokens: tokensOf(s), loss_mask: null, rollout_log_probs: null })),
      ["created_by", "test"],
    );
    const dp = [samples.filter((s) => s.index % 2 === 0), samples.filter((s) => s.index % 2 === 1)];
    for (const rank of [0, 1, 2, 3]) {
      const rows = (dp[rank >> 1] as SampleSpec[]).map((s) => trainRow(s, s.index + 1));
      await writeTrainShard(dir, 0, { rank, rows, cp: { rank: 0, size: 1 } });
    }
    await ageFiles(dir);
    const trainBytes = (await Promise.all([0, 1, 2, 3].map((k) => fs.stat(path.join(dir, "train_data", `0_${k}.pt`))))).reduce((a, st) => a + st.size, 0);
    expect(trainBytes).toBeGreaterThan(16 * 1024 * 1024);

    const r = openReader(dir);
    const isTrain = (x: ReadLog) => x.path.includes(`${path.sep}train_data${path.sep}`);
    // First point read: opens the four files (zip directory + pickle) and reads sample 5.
    const first = await recordReads(() => r.tokens(0, 5, {}));
    const firstTrain = first.filter(isTrain);
    expect(first.some((x) => x.path.includes(`${path.sep}rollout_data${path.sep}`))).toBe(false); // never the rollout .pt
    expect(firstTrain.length).toBeLessThanOrEqual(4 * 4 + 8); // per file: EOCD tail, central directory, pickle, version; 8 storages
    expect(sum(firstTrain)).toBeLessThan(1024 * 1024);
    expect(sum(firstTrain)).toBeLessThan(trainBytes / 16);
    // The TP peer of the primary and the other DP shard are only opened, never read into.
    for (const k of [0, 1, 3]) {
      expect(sum(firstTrain.filter((x) => x.path.endsWith(`0_${k}.pt`)))).toBeLessThan(64 * 1024);
    }

    // Second point read on the open shards: exactly the sample's storages, one read each.
    const second = await recordReads(() => r.tokens(0, 7, {}));
    const secondTrain = second.filter(isTrain);
    expect(secondTrain.length).toBeGreaterThanOrEqual(1);
    expect(secondTrain.length).toBeLessThanOrEqual(8);
    expect(new Set(secondTrain.map((x) => path.basename(x.path)))).toEqual(new Set(["0_2.pt"]));
    expect(sum(secondTrain)).toBeGreaterThanOrEqual(8 * STORAGE);
    expect(sum(secondTrain)).toBeLessThanOrEqual(8 * STORAGE + 8 * 1024);

    // Another window of a sample read before: no read at all (neither the train storages
    // nor the mirror's row group), and the same values a fresh reader finds.
    const third = await recordReads(() => r.tokens(0, 7, { start: 100, end: 612 }));
    expect(third).toEqual([]);
    expect(await r.tokens(0, 7, { start: 100, end: 612 })).toEqual(await openReader(dir).tokens(0, 7, { start: 100, end: 612 }));
  });
});

describe("token point read: kept rows follow the files", () => {
  const s = S(0, 3);
  const mirrorRow = (tokens: number[]) => ({ sample_index: 0, response_length: 3, total_length: tokens.length, tokens, loss_mask: null, rollout_log_probs: null });
  const mirrorPath = () => path.join(dir, "dashboard_columns", "rollout_0.parquet");
  /** Step 0's mirror row (`tokens`) and its one train shard (`seed`, `reward`) for the sample `s`. */
  async function writeStep(tokens: number[], seed: number, reward: number): Promise<void> {
    await writeMirror(mirrorPath(), [mirrorRow(tokens)], ["created_by", "test"]);
    await writeTrainShard(dir, 0, { rank: 0, rows: [trainRow(s, seed)], cp: { rank: 0, size: 1 }, raw_reward: [reward] });
  }

  test("one reader answers a sample again from what it kept, and from the new files once they change", async () => {
    const mirror = mirrorPath();
    await writeRollout(dir, 0, [s]);
    await writeStep(tokensOf(s), 1, 0.5);
    await ageFiles(dir);
    const r = openReader(dir, { recheckMs: 0 });
    const a = await r.tokens(0, 0, {});
    expect(await r.tokens(0, 0, {})).toEqual(a);

    // The train shard is rewritten with other values: the same reader reads them.
    await writeTrainShard(dir, 0, { rank: 0, rows: [trainRow(s, 7)], cp: { rank: 0, size: 1 } });
    const b = await r.tokens(0, 0, {});
    expect(b.train_log_probs).toEqual(await openReader(dir).tokens(0, 0, {}).then((t) => t.train_log_probs));
    expect(b.train_log_probs).not.toEqual(a.train_log_probs);

    // The mirror is rewritten with other token ids: the same reader reads them.
    const other = tokensOf(s).map((t) => t + 1000);
    await writeMirror(mirror, [mirrorRow(other)], ["created_by", "test"]);
    expect((await r.tokens(0, 0, {})).token_ids).toEqual(other);
  });

  test("within recheckMs a reader reuses its file checks: a rewrite is not seen by it, but by a new reader", async () => {
    await writeRollout(dir, 0, [s]);
    await writeStep(tokensOf(s), 1, 0.5);
    await ageFiles(dir);
    const r = openReader(dir, { recheckMs: 3_600_000 });
    const a = await r.tokens(0, 0, {});
    const sum = await r.summary(0, false);

    const other = tokensOf(s).map((t) => t + 1000);
    await writeStep(other, 7, 0.75);
    const b = await r.tokens(0, 0, {});
    expect(b.token_ids).toEqual(a.token_ids);
    expect(b.train_log_probs).toEqual(a.train_log_probs);
    expect(await r.summary(0, false)).toBe(sum);

    const fresh = openReader(dir, { recheckMs: 3_600_000 });
    const c = await fresh.tokens(0, 0, {});
    expect(c.token_ids).toEqual(other);
    expect(c.train_log_probs).not.toEqual(a.train_log_probs);
    expect((await fresh.summary(0, false)).rows[0]!.raw_reward).toBe(0.75);
  });
});
