/**
 * The chart controls of the line-chart views (Metrics scalar and engine charts, the compare
 * overlay; docs/charts.md §6) ⇄ the URL, so a link reproduces the view:
 *   sm=ema:0.6 | sm=mean:20   smoothing (EMA weight 0–0.99 with debiasing, running mean window)
 *   ylog=1                    log-scale y
 *   x mode                    step | wall (wall clock) | rel (time since the run start);
 *                             the Metrics view keeps it in `xm` (its `x` is the zoom), the
 *                             overlay in `x` (`x=time` = rel, as before)
 */
import { decodeSmoothing, encodeSmoothing, type Smoothing } from "@/lib/charts/core/smooth";

export type XMode = "step" | "wall" | "rel";

export interface ChartControls {
  smoothing: Smoothing;
  logY: boolean;
  xMode: XMode;
}

export function parseXMode(v: string | null | undefined): XMode {
  return v === "wall" ? "wall" : v === "rel" || v === "time" ? "rel" : "step";
}

export function parseChartControls(sp: URLSearchParams, xKey: "xm" | "x"): ChartControls {
  return { smoothing: decodeSmoothing(sp.get("sm")), logY: sp.get("ylog") === "1", xMode: parseXMode(sp.get(xKey)) };
}

/** The URL patch of a change (keys set to null are removed). */
export function chartControlsPatch(c: Partial<ChartControls>, xKey: "xm" | "x"): Record<string, string | null> {
  const p: Record<string, string | null> = {};
  if ("smoothing" in c) p.sm = c.smoothing ? encodeSmoothing(c.smoothing) : null;
  if ("logY" in c) p.ylog = c.logY ? "1" : null;
  if ("xMode" in c) p[xKey] = c.xMode === "step" || !c.xMode ? null : xKey === "x" && c.xMode === "rel" ? "time" : c.xMode;
  return p;
}

/** Column name of x in a chart's CSV. */
export function xColumnName(mode: XMode): string {
  return mode === "wall" ? "wall_time_unix_s" : mode === "rel" ? "seconds_since_start" : "step";
}
