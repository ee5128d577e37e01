/**
 * Topology windows (docs/api.md 8.3): snapshot N is valid on [ts_N, ts_{N+1}); the last one is
 * open-ended (t1 = null).
 */
import type { EngineInfo, LaneInfo, MetricStore } from "@/lib/store/telemetry";

export interface TopologyWindow {
  t0: number;
  t1: number | null;
  engines: EngineInfo[];
}

export async function topologyWindows(store: MetricStore): Promise<TopologyWindow[]> {
  const snaps = [...(await store.topology())].sort((a, b) => a.ts - b.ts);
  return snaps.map((s, i) => ({ t0: s.ts, t1: snaps[i + 1]?.ts ?? null, engines: s.engines }));
}

export async function getTopology(store: MetricStore): Promise<{
  lanes: { node: string; gpu: number; index: number }[];
  windows: TopologyWindow[];
}> {
  const [lanes, windows] = await Promise.all([store.laneIndex(), topologyWindows(store)]);
  return { lanes: lanes.map((l: LaneInfo) => ({ node: l.node, gpu: l.gpu, index: l.index })), windows };
}

/** Host part of an engine URL: scheme, path and `:port` removed (IPv6 brackets too). */
export function engineHost(addr: string): string {
  let s = addr.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\//, "");
  const slash = s.indexOf("/");
  if (slash >= 0) s = s.slice(0, slash);
  if (s.startsWith("[")) {
    const end = s.indexOf("]");
    return end > 0 ? s.slice(1, end) : s;
  }
  const colon = s.lastIndexOf(":");
  if (colon >= 0 && s.indexOf(":") === colon) s = s.slice(0, colon);
  return s;
}
