/**
 * Server side of the lane-selection grammar (docs/api.md 8.8). Parsing, matching and the
 * lane key are the shared contract (lib/contracts/lanes.ts); this module applies them to a
 * run's lane index. `null` means "no filter". Errors are 400s with the reference's messages.
 */
import { laneKey, parseLaneSelection, selectedKeys } from "@/lib/contracts/lanes";
import type { GetTimelineLanesQuery, GetTimelineLanesResponse } from "@/lib/contracts/timeline-lanes";
import type { LaneInfo, MetricStore } from "@/lib/store/telemetry";

export { laneKey, pyInt } from "@/lib/contracts/lanes";

export class LaneSet {
  constructor(private readonly keys: ReadonlySet<string>) {}
  has(node: string, gpu: number): boolean {
    return this.keys.has(laneKey(node, gpu));
  }
}

/** `"<node>:<gpu>"` — the lane label of the JSON API (the lane key itself). */
export const laneLabel = laneKey;

export function resolveLanes(grammar: string | null | undefined, lanes: readonly LaneInfo[]): LaneSet | null {
  const terms = parseLaneSelection(grammar);
  return terms === null ? null : new LaneSet(selectedKeys(terms, lanes));
}

/** GET /api/timeline/lanes: which of the run's lanes a selection keeps. */
export async function getTimelineLanes(store: MetricStore, q: GetTimelineLanesQuery): Promise<GetTimelineLanesResponse> {
  const lanes = await store.laneIndex();
  const terms = parseLaneSelection(q.lanes);
  const keys = terms === null ? null : selectedKeys(terms, lanes);
  const selected = lanes.filter((l) => keys === null || keys.has(laneKey(l.node, l.gpu)));
  const known = new Set(lanes.map((l) => laneKey(l.node, l.gpu)));
  return {
    lanes: q.lanes ?? null,
    all: keys === null,
    selected: selected.map((l) => ({ key: laneKey(l.node, l.gpu), node: l.node, gpu: l.gpu, index: l.index, roles: [...l.roles] })),
    unknown: keys === null ? [] : [...keys].filter((k) => !known.has(k)),
    total: lanes.length,
  };
}
