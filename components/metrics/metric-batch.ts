/**
 * The Metrics cards' series loader: each card asks for its own key (its own react-query
 * entry), and the keys asked for in the same tick go out as one `GET /api/metrics`
 * (lib/charts/key-batcher.ts; ≤ LIMITS.metric_keys keys per request), one batcher per
 * run and step axis. The first FIRST_SCREEN_KEYS cards (one request per step axis among them) are asked for at
 * mount (`primeMetrics`), before the viewport observer has reported which cards are near;
 * the cards' own asks join that request. (A `<link rel=preload as=fetch>` of that URL
 * was tried: Chromium fetched it twice, so the page does not preload it.)
 */
import type { MetricPoints, MetricsResponse } from "@/lib/charts/api-shapes";
import { createKeyBatcher, type KeyBatcher } from "@/lib/charts/key-batcher";
import { LIMITS } from "@/lib/contracts/limits";
import { apiJson, mayBeOneKeysFault } from "@/lib/client/fetcher";
import { telemetryUrl } from "@/lib/client/telemetry-queries";

/** Cards asked for before the page knows what is on screen: about the first screen of a wide window. */
export const FIRST_SCREEN_KEYS = 12;

const batchers = new Map<string, KeyBatcher<MetricPoints>>();

/** The `/api/metrics` URL of these keys. */
export function metricsUrl(runId: string, axis: string, keys: readonly string[]): string {
  return telemetryUrl(runId, "metrics", { keys: keys.join(","), x: axis });
}

function batcher(runId: string, axis: string): KeyBatcher<MetricPoints> {
  const id = `${runId}\u0000${axis}`;
  let b = batchers.get(id);
  if (!b) {
    b = createKeyBatcher<MetricPoints>({
      maxKeys: LIMITS.metric_keys,
      splitOn: mayBeOneKeysFault,
      fetchMany: (keys) => apiJson<MetricsResponse>(metricsUrl(runId, axis, keys)),
    });
    batchers.set(id, b);
  }
  return b;
}

/** One key's series, answered in the shape of a one-key `/api/metrics` answer. */
export async function loadMetric(runId: string, axis: string, key: string): Promise<MetricsResponse> {
  const points = await batcher(runId, axis).load(key);
  return points ? { [key]: points } : {};
}

/** Ask for the first cards' keys now, as one request. */
export function primeMetrics(runId: string, axis: string, keys: readonly string[]): void {
  if (keys.length > 0) batcher(runId, axis).prime(keys);
}
