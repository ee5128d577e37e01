/**
 * Test fixture builder: writes a real run directory (`{runDir}/dashboard/…`) the way the
 * collector does — one JSON object per line, hourly partitions keyed by `ts` (phases: by
 * `t1`, OPEN markers by `t0`), bare NaN/Infinity tokens for non-finite numbers.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { partitionKey, type PartitionedStreamName } from "@/lib/store/format";
import type {
  DataBufferSample,
  GpuProcessSample,
  MetricsRecord,
  PhaseEvent,
  TopologySnapshot,
  TrajectoryEvent,
} from "@/lib/store/telemetry/types";

export interface GpuRow {
  ts: number;
  node: string;
  gpu: number;
  util: number;
  mem_mb: number;
  power_w: number;
}
export interface EngineRow {
  ts: number;
  addr: string;
  metric: string;
  labels?: Record<string, string>;
  value: number;
}

const MARK = "\u0000nonfinite:";

/** JSON with Python's bare non-finite tokens. */
export function pyJsonLine(v: unknown): string {
  const s = JSON.stringify(v, (_k, x: unknown) =>
    typeof x === "number" && !Number.isFinite(x) ? `${MARK}${Number.isNaN(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity"}` : x,
  );
  return s.replace(/"\\u0000nonfinite:(NaN|Infinity|-Infinity)"/g, "$1");
}

export function makeTmpDir(prefix = "rlboard-telemetry-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export class RunBuilder {
  readonly dash: string;
  constructor(readonly runDir: string = makeTmpDir()) {
    this.dash = path.join(runDir, "dashboard");
    fs.mkdirSync(this.dash, { recursive: true });
  }

  /** Append raw text to a file under dashboard/ (no newline added). */
  raw(rel: string, text: string): this {
    const p = path.join(this.dash, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.appendFileSync(p, text);
    return this;
  }

  private lines(rel: string, recs: readonly unknown[]): this {
    return recs.length ? this.raw(rel, recs.map((r) => `${pyJsonLine(r)}\n`).join("")) : this;
  }

  private partitioned<R>(stream: string, recs: readonly R[], keyTs: (r: R) => number): this {
    const byKey = new Map<string, R[]>();
    for (const r of recs) {
      const k = partitionKey(keyTs(r));
      const list = byKey.get(k);
      if (list) list.push(r);
      else byKey.set(k, [r]);
    }
    for (const [k, rs] of [...byKey].sort(([a], [b]) => (a < b ? -1 : 1))) this.lines(`${stream}/${k}.jsonl`, rs);
    return this;
  }

  meta(m: { run_name?: string; start_ts?: number; args?: Record<string, unknown>; schema_version?: number }): this {
    const full = { run_name: "test-run", start_ts: 0, args: {}, schema_version: 1, ...m };
    fs.writeFileSync(path.join(this.dash, "meta.json"), JSON.stringify(full, null, 1));
    return this;
  }

  laneCatalog(lanes: Record<string, { ranks?: number[]; engine_addrs?: string[]; roles?: string[] }>): this {
    const full = Object.fromEntries(
      Object.entries(lanes).map(([k, v]) => [k, { ranks: v.ranks ?? [], engine_addrs: v.engine_addrs ?? [], roles: v.roles ?? [] }]),
    );
    fs.writeFileSync(path.join(this.dash, "lane_catalog.json"), JSON.stringify({ version: 1, lanes: full }));
    return this;
  }

  metrics(...recs: MetricsRecord[]): this {
    return this.lines("metrics.jsonl", recs);
  }
  topology(...recs: TopologySnapshot[]): this {
    return this.lines("topology.jsonl", recs);
  }
  dataBuffer(...recs: DataBufferSample[]): this {
    return this.lines("data_buffer.jsonl", recs);
  }
  phases(...recs: PhaseEvent[]): this {
    return this.partitioned("phases", recs, (r) => (r.t1 === -1 ? r.t0 : r.t1));
  }
  gpu(...recs: GpuRow[]): this {
    return this.partitioned("gpu_util", recs, (r) => r.ts);
  }
  engine(...recs: EngineRow[]): this {
    return this.partitioned(
      "engine_series",
      recs.map((r) => ({ ts: r.ts, addr: r.addr, metric: r.metric, labels: r.labels ?? {}, value: r.value })),
      (r) => r.ts,
    );
  }
  trajectories(...recs: TrajectoryEvent[]): this {
    return this.partitioned("trajectories", recs, (r) => r.ts);
  }
  processes(...recs: GpuProcessSample[]): this {
    return this.partitioned("gpu_processes", recs, (r) => r.ts);
  }
  /** Legacy v1 flat file of a partitioned stream. */
  legacy(stream: PartitionedStreamName, recs: readonly unknown[]): this {
    return this.lines(`${stream}.jsonl`, recs);
  }
}

/** Shorthand phase event. */
export function phase(
  name: string,
  t0: number,
  t1: number,
  o: { node?: string; gpus?: number[]; rank?: number; role?: string } = {},
): PhaseEvent {
  return { name, t0, t1, node: o.node ?? "n1", gpus: o.gpus ?? [0], rank: o.rank ?? 0, role: o.role ?? "train" };
}

/** Copy a directory tree and set every file's mtime to 2026-01-01 (fresh dumps are hidden). */
export function copyRunWithOldMtimes(src: string, dst: string = makeTmpDir("rlboard-golden-")): string {
  fs.cpSync(src, dst, { recursive: true });
  const old = new Date("2026-01-01T00:00:00Z");
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      fs.utimesSync(p, old, old);
    }
  };
  walk(dst);
  fs.utimesSync(dst, old, old);
  return dst;
}
