/**
 * Ground truth: the torch-2.13-written dumps under fixtures/miles-demo. Expected values come from
 * __fixtures__/make_golden.py (python stdlib zipfile + pickle + struct, no torch):
 * a sha256 over a canonical serialisation of every decoded value, plus spot values.
 */
import { createHash, type Hash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Tensor, loadPt, loadPtEager, materialize, type PtFile } from "./load";
import { MILES_DEMO_RUN } from "@/lib/testing/fixtures";

const FIXTURES = MILES_DEMO_RUN;

interface RolloutSpot {
  rollout_id: number;
  keys: string[];
  sample_keys: string[];
  spec_info_0: Record<string, number>;
  prefix_cache_info_0: Record<string, number>;
  n: number;
  samples: {
    index: number; group_index: number; status: string; response_length: number; n_tokens: number;
    tokens_head: number[]; tokens_last: number; weight_versions: string[]; reward: number;
    remove_sample: boolean; lp0: number | null; lp_sum: number;
  }[];
}
interface TrainSpot {
  rollout_id: number; rank: number; cp_rank: number; cp_size: number; qkv_format: string;
  columns: string[]; rewards: number[];
  rows: {
    sample_index: number; total_length: number; response_length: number; tokens_dtype: string; tokens_shape: number[];
    tokens_head: number[]; tokens_last: number; tokens_sum: number; loss_mask_dtype: string; loss_mask_sum: number;
    loss_mask_len: number; log_probs_dtype: string | null; log_probs_head: number[] | null; log_probs_fsum: number | null;
  }[];
}
type Golden = Record<string, { sha256: string; spot: RolloutSpot | TrainSpot }>;

const GOLDEN = JSON.parse(readFileSync(new URL("./__fixtures__/golden.json", import.meta.url), "utf8")) as Golden;

/** Mirror of make_golden.py canon(): numbers as f64 bits, dict keys sorted. */
async function canon(x: unknown, h: Hash): Promise<void> {
  const num = (v: number): void => {
    const b = Buffer.alloc(8);
    b.writeDoubleBE(v);
    h.update(`n${b.toString("hex")}`);
  };
  if (x === null) h.update("N");
  else if (x === true) h.update("T");
  else if (x === false) h.update("F");
  else if (typeof x === "number") num(x);
  else if (typeof x === "bigint") num(Number(x));
  else if (typeof x === "string") {
    const b = Buffer.from(x, "utf8");
    h.update(`s${b.length}:`);
    h.update(b);
  } else if (Array.isArray(x)) {
    h.update("[");
    for (const v of x) await canon(v, h);
    h.update("]");
  } else if (x instanceof Tensor) {
    h.update(`t${x.dtype}:${x.shape.join(",")}:`);
    for (const v of await materialize(x)) num(v);
    h.update(";");
  } else if (typeof x === "object" && Object.getPrototypeOf(x) === Object.prototype) {
    const o = x as Record<string, unknown>;
    h.update("{");
    for (const k of Object.keys(o).sort()) {
      await canon(k, h);
      await canon(o[k], h);
    }
    h.update("}");
  } else {
    throw new TypeError(`unexpected value in fixture graph: ${Object.prototype.toString.call(x)}`);
  }
}

function fsum(xs: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i] ?? 0;
  return s;
}

type Dict = Record<string, unknown>;

describe("real torch dumps (miles-demo fixtures)", () => {
  const files = Object.keys(GOLDEN);

  it("covers every .pt fixture", () => {
    expect(files.length).toBe(16);
    for (const f of files) expect(existsSync(join(FIXTURES, f)), f).toBe(true);
  });

  for (const rel of files) {
    it(`${rel}: whole graph matches python's decoding (sha256 of canonical form)`, async () => {
      const f = await loadPt(join(FIXTURES, rel));
      try {
        expect(f.byteorder).toBe("little");
        expect(f.version).toBe("3");
        expect(f.prefix).toBe(rel.split("/")[1]?.replace(/\.pt$/, ""));
        const h = createHash("sha256");
        await canon(f.root, h);
        expect(h.digest("hex")).toBe(GOLDEN[rel]?.sha256);
      } finally {
        await f.close();
      }
    });
  }

  for (const rel of files.filter((f) => f.startsWith("rollout_data/"))) {
    it(`${rel}: rollout dump spot values`, async () => {
      const spot = GOLDEN[rel]?.spot as RolloutSpot;
      const root = (await loadPtEager(join(FIXTURES, rel))) as Dict;
      expect(Object.keys(root)).toEqual(["rollout_id", "metadata", "samples"]);
      const rolloutId = Number(/(\d+)\.pt$/.exec(rel)?.[1]);
      expect(root.rollout_id).toBe(rolloutId);
      expect(root.rollout_id).toBe(spot.rollout_id);
      expect(root.metadata).toEqual({});
      const samples = root.samples as Dict[];
      expect(samples.length).toBe(spot.n);
      expect(Object.keys(samples[0] ?? {})).toEqual(spot.sample_keys);
      expect(samples[0]?.spec_info).toEqual(spot.spec_info_0);
      expect(samples[0]?.prefix_cache_info).toEqual(spot.prefix_cache_info_0);
      samples.forEach((s, i) => {
        const w = spot.samples[i];
        if (w === undefined) throw new Error("golden sample missing");
        const tokens = s.tokens as number[];
        expect(s.index).toBe(w.index);
        expect(s.group_index).toBe(w.group_index);
        expect(s.status).toBe(w.status);
        expect(typeof s.status).toBe("string");
        expect(s.response_length).toBe(w.response_length);
        expect(tokens.length).toBe(w.n_tokens);
        expect(tokens.length).toBeGreaterThanOrEqual(w.response_length);
        expect(tokens.slice(0, 3)).toEqual(w.tokens_head);
        expect(tokens[tokens.length - 1]).toBe(w.tokens_last);
        expect(s.weight_versions).toEqual(w.weight_versions);
        expect(s.reward).toBe(w.reward);
        expect(s.remove_sample).toBe(w.remove_sample);
        const lps = s.rollout_log_probs as number[] | null;
        expect(lps?.[0] ?? null).toBe(w.lp0);
        if (lps) expect(lps.length).toBe(w.response_length);
        expect(fsum(lps ?? [])).toBeCloseTo(w.lp_sum, 10);
        expect(Object.keys(s.spec_info as Dict).sort()).toEqual(["completion_token_num", "spec_accept_token_num", "spec_draft_token_num", "spec_verify_ct"]);
      });
    });
  }

  for (const rel of files.filter((f) => f.startsWith("train_data/"))) {
    it(`${rel}: train dump columns, lazy tensors, and the join with its rollout dump`, async () => {
      const spot = GOLDEN[rel]?.spot as TrainSpot;
      const f: PtFile = await loadPt(join(FIXTURES, rel));
      try {
        const root = f.root as Dict;
        expect(root.rollout_id).toBe(spot.rollout_id);
        expect(root.rank).toBe(spot.rank);
        expect(root.cp_rank).toBe(spot.cp_rank);
        expect(root.cp_size).toBe(spot.cp_size);
        expect(root.qkv_format).toBe(spot.qkv_format);
        const rd = root.rollout_data as Dict;
        expect(Object.keys(rd)).toEqual(spot.columns);
        expect(rd.rewards).toEqual(spot.rewards);
        expect((rd.raw_reward as number[]).length).toBe(32); // batch-global column
        const tokens = rd.tokens as Tensor[];
        const masks = rd.loss_masks as Tensor[];
        const lps = rd.log_probs as Tensor[];
        expect(rd.sample_indices).toEqual(spot.rows.map((r) => r.sample_index));
        for (let i = 0; i < spot.rows.length; i++) {
          const w = spot.rows[i];
          const t = tokens[i];
          const m = masks[i];
          const lp = lps[i];
          if (w === undefined || t === undefined || m === undefined || lp === undefined) throw new Error("row missing");
          expect(t).toBeInstanceOf(Tensor);
          expect(t.dtype).toBe(w.tokens_dtype);
          expect(t.shape).toEqual(w.tokens_shape);
          expect((rd.total_lengths as number[])[i]).toBe(w.total_length);
          expect((rd.response_lengths as number[])[i]).toBe(w.response_length);
          const tv = await materialize(t);
          expect(tv).toBeInstanceOf(Float64Array);
          expect(tv.length).toBe(w.total_length); // len(tokens) == total_length
          expect([...tv.slice(0, 3)]).toEqual(w.tokens_head);
          expect(tv[tv.length - 1]).toBe(w.tokens_last);
          expect(fsum(tv)).toBe(w.tokens_sum);
          expect(m.dtype).toBe("i32");
          const mv = await materialize(m);
          expect(mv).toBeInstanceOf(Int32Array);
          expect(mv.length).toBe(w.loss_mask_len);
          expect(mv.length).toBe(w.response_length);
          expect(fsum(mv)).toBe(w.loss_mask_sum);
          expect(lp.dtype).toBe("f32");
          const lv = await materialize(lp);
          expect(lv).toBeInstanceOf(Float32Array);
          expect([...lv.slice(0, 2)]).toEqual(w.log_probs_head);
          expect(fsum(lv)).toBeCloseTo(w.log_probs_fsum ?? Number.NaN, 5);
        }
      } finally {
        await f.close();
      }
    });
  }

  it("train rows join the rollout dump: tokens, lengths and f32-rounded rollout log-probs agree", async () => {
    for (const rel of files.filter((f) => f.startsWith("train_data/"))) {
      const train = (await loadPtEager(join(FIXTURES, rel))) as Dict;
      const rollout = (await loadPtEager(join(FIXTURES, "rollout_data", `${String(train.rollout_id)}.pt`))) as Dict;
      const byIndex = new Map((rollout.samples as Dict[]).map((s) => [s.index, s]));
      const rd = train.rollout_data as Dict;
      (rd.sample_indices as number[]).forEach((idx, i) => {
        const s = byIndex.get(idx);
        expect(s, `${rel} sample ${idx}`).toBeDefined();
        expect([...((rd.tokens as Float64Array[])[i] ?? [])]).toEqual(s?.tokens);
        expect((rd.response_lengths as number[])[i]).toBe(s?.response_length);
        const want = (s?.rollout_log_probs as number[]).map((v) => Math.fround(v));
        expect([...((rd.rollout_log_probs as Float32Array[])[i] ?? [])]).toEqual(want);
      });
    }
  });

  it("a point read of one sample's tensor reads only that storage", async () => {
    const f = await loadPt(join(FIXTURES, "train_data", "1_2.pt"));
    try {
      const afterOpen = f.bytesRead;
      const t = ((f.root as Dict).rollout_data as Dict).log_probs as Tensor[];
      await materialize(t[5] as Tensor);
      // one 30-byte local header + the storage bytes (numel × 4)
      expect(f.bytesRead - afterOpen).toBe(30 + (t[5]?.numel ?? 0) * 4);
    } finally {
      await f.close();
    }
  });
});
