/**
 * Adapters from the `.pt` reader (lib/store/pt) to the dump modules: a train shard as a
 * lazy `ShardSource` (tensors are materialised on demand — after a batched `prefetch`
 * from memory, without I/O, as read-only views of the fetched bytes — and per-row
 * scalar columns are resolved once per column), and rollout samples.
 */
import { loadPt, materialize, materializeResident, NdArray, Tensor, type PtFile } from "@/lib/store/pt/load";
import type { RowRequest, ShardSource } from "./join";
import { pyGet, pyHas, pyInt } from "./pyobj";
import type { NumArray } from "./types";

const SHARE = { share: true } as const;

/**
 * A tensor / ndarray / list as numbers (null stays null, other values → null).
 * `share`: a tensor may come back as a read-only view of cached storage bytes.
 */
export async function toNumArray(v: unknown, share = false): Promise<NumArray | null> {
  if (v instanceof Tensor) return materialize(v, share ? SHARE : undefined);
  return plainNumArray(v);
}

/** `toNumArray` for everything but tensors (synchronous). */
function plainNumArray(v: unknown): NumArray | null {
  if (v === null || v === undefined) return null;
  if (v instanceof NdArray) return Array.isArray(v.data) ? v.data.map(Number) : v.data;
  if (Array.isArray(v)) {
    // A list of plain numbers is used as is (no copy); others are converted.
    let plain = true;
    for (let i = 0; i < v.length; i++) {
      if (typeof v[i] !== "number") {
        plain = false;
        break;
      }
    }
    if (plain) return v as number[];
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
    private readonly pt: PtFile,
  ) {}

  /** `openFlags`: see `LoadPtOptions` (the reader opens confined, O_NOFOLLOW). */
  static async open(abs: string, fileName: string, openFlags?: string | number): Promise<PtShardSource> {
    const pt = await loadPt(abs, openFlags === undefined ? {} : { openFlags });
    const root = pt.root;
    const qkv = pyGet(root, "qkv_format");
    return new PtShardSource(
      fileName,
      pyGet(root, "rollout_data") ?? {},
      pyInt(pyGet(root, "rank")),
      pyHas(root, "cp_rank") ? pyInt(pyGet(root, "cp_rank")) : null,
      pyHas(root, "cp_size") ? pyInt(pyGet(root, "cp_size")) : null,
      typeof qkv === "string" ? qkv : null,
      pt,
    );
  }

  /** Positional reads / bytes read so far on this file (instrumentation). */
  get io(): { reads: number; bytes: number } {
    return { reads: this.pt.readCount, bytes: this.pt.bytesRead };
  }

  /** Batch-read the storages behind the given row entries (few large reads, see PtFile.prefetch). */
  async prefetch(requests: readonly RowRequest[]): Promise<void> {
    const tensors: Tensor[] = [];
    for (const { col, row } of requests) {
      const v = this.column(col);
      const t: unknown = Array.isArray(v) ? v[row] : undefined;
      if (t instanceof Tensor) tensors.push(t);
    }
    // Scalar per-row columns stored as tensors are resolved column-wide by columnValues.
    await this.pt.prefetch(tensors);
  }

  release(): void {
    this.pt.release();
  }

  private readonly has = new Map<string, boolean>();

  hasColumn(col: string): boolean {
    let h = this.has.get(col);
    if (h === undefined) {
      const v = pyGet(this.columns, col);
      h = v !== undefined && v !== null;
      this.has.set(col, h);
    }
    return h;
  }

  /** Resolved `columnValues` (synchronous access for `peekScalar`). */
  private readonly resolved = new Map<string, unknown[] | null>();
  private readonly lists = new Map<string, unknown>();

  private column(col: string): unknown {
    let v = this.lists.get(col);
    if (v === undefined && !this.lists.has(col)) {
      v = pyGet(this.columns, col);
      this.lists.set(col, v);
    }
    return v;
  }

  columnValues(col: string): Promise<unknown[] | null> {
    let p = this.values.get(col);
    if (!p) {
      const q = columnToValues(this.column(col));
      p = q;
      void q.then(
        (vals) => {
          if (this.values.get(col) === q) this.resolved.set(col, vals);
        },
        () => undefined,
      );
      this.values.set(col, p);
    }
    return p;
  }

  peekScalar(col: string, row: number): unknown {
    if (!this.resolved.has(col)) return undefined;
    return this.resolved.get(col)?.[row] ?? null;
  }

  peekRowArray(col: string, row: number): NumArray | null | undefined {
    const v = this.column(col);
    if (!Array.isArray(v)) return null;
    const x: unknown = v[row];
    if (x instanceof Tensor) return materializeResident(x, SHARE) ?? undefined;
    return plainNumArray(x);
  }

  async scalar(col: string, row: number): Promise<unknown> {
    const vals = await this.columnValues(col);
    return vals?.[row] ?? null;
  }

  /** Read-only (may be a view of cached storage bytes; the join never writes rows). */
  async rowArray(col: string, row: number): Promise<NumArray | null> {
    const v = this.column(col);
    if (Array.isArray(v)) return toNumArray(v[row], true);
    return null;
  }

  async close(): Promise<void> {
    await this.pt.close();
  }
}

export interface RolloutDump {
  rolloutId: unknown;
  samples: unknown[];
  close(): Promise<void>;
}

/**
 * Open a rollout dump. `skipListItems`: sample keys whose lists are only counted, not
 * materialised (`SkippedList`, see lib/store/pt/pickle.ts) — the summary needs only
 * `len(tokens)`, which saves most of the unpickling and GC work of a big step.
 */
export async function openRolloutDump(
  abs: string,
  opts: { skipListItems?: ReadonlySet<string>; openFlags?: string | number } = {},
): Promise<RolloutDump> {
  const pt = await loadPt(abs, {
    ...(opts.skipListItems ? { skipListItems: opts.skipListItems } : {}),
    ...(opts.openFlags !== undefined ? { openFlags: opts.openFlags } : {}),
  });
  const samples = pyGet(pt.root, "samples");
  return {
    rolloutId: pyGet(pt.root, "rollout_id"),
    samples: Array.isArray(samples) ? samples : [],
    close: async () => {
      await pt.close();
    },
  };
}
