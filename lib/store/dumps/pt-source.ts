/**
 * Adapters from the `.pt` reader (lib/store/pt) to the dump modules: a train shard as a
 * lazy `ShardSource` (tensors are materialised on demand, one positional read each, and
 * per-row scalar columns are resolved once per column), and rollout samples.
 */
import { loadPt, materialize, NdArray, Tensor } from "@/lib/store/pt/load";
import type { ShardSource } from "./join";
import { pyGet, pyHas, pyInt } from "./pyobj";
import type { NumArray } from "./types";

/** A tensor / ndarray / list as numbers (null stays null, other values → null). */
export async function toNumArray(v: unknown): Promise<NumArray | null> {
  if (v === null || v === undefined) return null;
  if (v instanceof Tensor) return materialize(v);
  if (v instanceof NdArray) return Array.isArray(v.data) ? v.data.map(Number) : v.data;
  if (Array.isArray(v)) {
    const out = new Array<number>(v.length);
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      out[i] = typeof x === "number" ? x : typeof x === "boolean" ? (x ? 1 : 0) : typeof x === "bigint" ? Number(x) : NaN;
    }
    return out;
  }
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return v as unknown as NumArray;
  return null;
}

/** A list-like column as an array of JS scalars (a 1-D tensor/ndarray is expanded). */
async function columnToValues(v: unknown): Promise<unknown[] | null> {
  if (v === null || v === undefined) return null;
  if (v instanceof Tensor || v instanceof NdArray) {
    const arr = await toNumArray(v);
    return arr === null ? null : Array.from(arr);
  }
  if (Array.isArray(v)) {
    const out: unknown[] = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (x instanceof Tensor && x.numel === 1) out[i] = (await materialize(x))[0];
      else if (x instanceof NdArray && x.shape.length === 0) out[i] = (x.data as ArrayLike<unknown>)[0];
      else out[i] = x;
    }
    return out;
  }
  return null;
}

export interface ShardHandle extends ShardSource {
  close(): Promise<void>;
}

export class PtShardSource implements ShardHandle {
  private readonly values = new Map<string, Promise<unknown[] | null>>();

  private constructor(
    readonly fileName: string,
    private readonly columns: unknown,
    readonly rank: number | null,
    readonly cpRank: number | null,
    readonly cpSize: number | null,
    readonly qkvFormat: string | null,
    private readonly closer: () => unknown,
  ) {}

  static async open(abs: string, fileName: string): Promise<PtShardSource> {
    const pt = await loadPt(abs);
    const root = pt.root;
    const qkv = pyGet(root, "qkv_format");
    return new PtShardSource(
      fileName,
      pyGet(root, "rollout_data") ?? {},
      pyInt(pyGet(root, "rank")),
      pyHas(root, "cp_rank") ? pyInt(pyGet(root, "cp_rank")) : null,
      pyHas(root, "cp_size") ? pyInt(pyGet(root, "cp_size")) : null,
      typeof qkv === "string" ? qkv : null,
      () => pt.close(),
    );
  }

  hasColumn(col: string): boolean {
    const v = pyGet(this.columns, col);
    return v !== undefined && v !== null;
  }

  columnValues(col: string): Promise<unknown[] | null> {
    let p = this.values.get(col);
    if (!p) {
      p = columnToValues(pyGet(this.columns, col));
      this.values.set(col, p);
    }
    return p;
  }

  async scalar(col: string, row: number): Promise<unknown> {
    const vals = await this.columnValues(col);
    return vals?.[row] ?? null;
  }

  async rowArray(col: string, row: number): Promise<NumArray | null> {
    const v = pyGet(this.columns, col);
    if (Array.isArray(v)) return toNumArray(v[row]);
    return null;
  }

  async close(): Promise<void> {
    await this.closer();
  }
}

export interface RolloutDump {
  rolloutId: unknown;
  samples: unknown[];
  close(): Promise<void>;
}

export async function openRolloutDump(abs: string): Promise<RolloutDump> {
  const pt = await loadPt(abs);
  const samples = pyGet(pt.root, "samples");
  return {
    rolloutId: pyGet(pt.root, "rollout_id"),
    samples: Array.isArray(samples) ? samples : [],
    close: async () => {
      await pt.close();
    },
  };
}
