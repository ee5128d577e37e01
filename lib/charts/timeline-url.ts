/**
 * Compute Utilization view state ⇄ URL search params (all shareable):
 *   lanes=<grammar>  v=<t0>~<t1> (a fixed window)  span=<s> (trail the newest data with
 *   this span; neither = the latest 4 h)  ov=<overlay>|off
 *   mem=1  abs=1 (wall clock)  utc=1  carpet=util|phase|mem_mb|power_w|lifecycle
 *   step=<n> (the step picked in the bubble strip)
 */
import { decodeRange, encodeRange, readableQuery } from "@/lib/charts/core/url";
import { isCarpetMetric, type CarpetMetric } from "@/lib/charts/prepare-carpet";
import type { Viewport } from "@/lib/charts/timeline-viewport";
import { TIMELINE_OVERLAYS } from "@/lib/contracts/timeline-view";

export const OVERLAYS = TIMELINE_OVERLAYS;
export type OverlayId = (typeof OVERLAYS)[number]["id"];

export function overlayMetric(id: OverlayId | null): string | null {
  return OVERLAYS.find((o) => o.id === id)?.metric ?? null;
}

export interface TimelineUrlState {
  /** null = the URL had no lanes (the default selection may apply) */
  lanes: string | null;
  viewport: Viewport | null;
  /** span of a viewport that trails the newest data */
  span: number | null;
  /** undefined = default (first overlay when engine series exist), null = off */
  overlay: OverlayId | null | undefined;
  mem: boolean;
  absTime: boolean;
  utc: boolean;
  carpet: CarpetMetric;
  step: number | null;
}

export function parseTimelineState(sp: URLSearchParams): TimelineUrlState {
  const ov = sp.get("ov");
  const r = decodeRange(sp.get("v"));
  const stepRaw = sp.get("step");
  const carpet = sp.get("carpet");
  const spanRaw = Number(sp.get("span"));
  return {
    lanes: sp.has("lanes") ? (sp.get("lanes") ?? "") : null,
    viewport: r ? { v0: r[0], v1: r[1] } : null,
    span: !r && Number.isFinite(spanRaw) && spanRaw > 0 ? spanRaw : null,
    overlay: ov === null ? undefined : ov === "off" ? null : (OVERLAYS.find((o) => o.id === ov)?.id ?? undefined),
    mem: sp.get("mem") === "1",
    absTime: sp.get("abs") === "1",
    utc: sp.get("utc") === "1",
    carpet: isCarpetMetric(carpet) ? carpet : "util",
    step: stepRaw !== null && /^-?\d+$/.test(stepRaw) ? Number(stepRaw) : null,
  };
}

export function writeTimelineState(base: URLSearchParams, patch: Partial<TimelineUrlState>): string {
  const sp = new URLSearchParams(base);
  const set = (k: string, v: string | null) => {
    if (v === null) sp.delete(k);
    else sp.set(k, v);
  };
  if ("lanes" in patch) set("lanes", patch.lanes === null || patch.lanes === undefined ? null : patch.lanes);
  if ("viewport" in patch) set("v", patch.viewport ? encodeRange([patch.viewport.v0, patch.viewport.v1]) : null);
  if ("span" in patch) set("span", patch.span ? String(Math.round(patch.span * 1000) / 1000) : null);
  if ("overlay" in patch) set("ov", patch.overlay === undefined ? null : patch.overlay === null ? "off" : patch.overlay);
  if ("mem" in patch) set("mem", patch.mem ? "1" : null);
  if ("absTime" in patch) set("abs", patch.absTime ? "1" : null);
  if ("utc" in patch) set("utc", patch.utc ? "1" : null);
  if ("carpet" in patch) set("carpet", patch.carpet && patch.carpet !== "util" ? patch.carpet : null);
  if ("step" in patch) set("step", patch.step === null || patch.step === undefined ? null : String(patch.step));
  const s = readableQuery(sp);
  return s ? `?${s}` : "";
}
