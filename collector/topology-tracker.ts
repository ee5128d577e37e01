/**
 * Topology bookkeeping of docs/formats.md §4.4:
 *   - dedup: a snapshot whose engine list equals (field by field, in order)
 *     the last recorded one is dropped; `ts` is not compared;
 *   - external engines: an address that produced scraped engine_series but
 *     was never registered through a topology snapshot is appended to every
 *     recorded snapshot as `worker_type: "external"` (sorted by address,
 *     after the registered engines). Once registered, an address is never
 *     external again. `tick()` records a fresh snapshot when newly scraped
 *     addresses are missing from the last one.
 * The tracker also tells the scraper which engines to scrape in direct mode.
 */
import type { EngineInfo, TopologySnapshot } from "@/lib/store/format";

function sameEngines(a: readonly EngineInfo[], b: readonly EngineInfo[]): boolean {
  // Serialising through JSON compares every field in order (key order of
  // validated records is fixed by the schema).
  return a.length === b.length && JSON.stringify(a) === JSON.stringify(b);
}

export class TopologyTracker {
  private last: TopologySnapshot | undefined;
  /** Engines of the last snapshot a producer sent (without synthesized externals). */
  private registeredEngines: EngineInfo[] = [];
  private readonly registered = new Set<string>();
  private readonly scraped = new Set<string>();

  /** A producer's snapshot → the snapshot to record, or undefined if unchanged. */
  ingest(s: TopologySnapshot): TopologySnapshot | undefined {
    for (const e of s.engines) this.registered.add(e.addr);
    this.registeredEngines = s.engines;
    return this.record(s.ts, s.engines);
  }

  /** Remember that `addr` produced scraped samples. */
  noteScraped(addr: string): void {
    this.scraped.add(addr);
  }

  /** Periodic check: a snapshot including newly scraped external engines, if any are missing. */
  tick(nowS: number): TopologySnapshot | undefined {
    const known = new Set((this.last?.engines ?? []).map((e) => e.addr));
    for (const a of this.scraped) {
      if (!this.registered.has(a) && !known.has(a)) return this.record(nowS, this.registeredEngines);
    }
    return undefined;
  }

  /** Engine addresses for direct-mode scraping (registered + external). */
  engineAddrs(): string[] {
    return (this.last?.engines ?? []).map((e) => e.addr);
  }

  private record(ts: number, engines: readonly EngineInfo[]): TopologySnapshot | undefined {
    const externals = [...this.scraped]
      .filter((a) => !this.registered.has(a))
      .sort()
      .map((addr): EngineInfo => ({ addr, worker_type: "external", engine_rank: -1, gpus: [], gpu_uuids: [] }));
    const full = [...engines, ...externals];
    if (this.last && sameEngines(this.last.engines, full)) return undefined;
    this.last = { ts, engines: full };
    return this.last;
  }
}
