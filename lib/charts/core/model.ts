/**
 * The one chart model (docs/charts.md): what a view's preparer emits and
 * components/charts/CanvasChart draws. Columns are Float64Array, NaN = gap (never zero);
 * in line mode x is ascending (the binary searches rely on it).
 */
import type { Range } from "@/lib/charts/core/range";

export interface ChartSeries {
  id: string;
  label: string;
  /** null = the theme's accent (resolved at draw time, so a theme flip needs no new model) */
  color: string | null;
  x: Float64Array;
  y: Float64Array;
  /** per point: 1 = drawn in the theme's "bad" colour (truncated samples) */
  flag?: Uint8Array | null;
}

/** A shaded x span behind the marks; strong bands (the prompt) are darker. */
export interface Band {
  x0: number;
  x1: number;
  strong: boolean;
  label?: string;
}

export interface ChartModel {
  mode: "line" | "scatter";
  series: ChartSeries[];
  /** [min x, max x] over every series and band (hidden series included, so zoom origins stay put) */
  xExtent: Range | null;
  /** how a single point is widened: ±30 s on a time axis, ±0.5 otherwise */
  xKind: "step" | "time" | "value";
  /** finite points over all series */
  points: number;
  bands: Band[];
  /** axis titles drawn beside the axes (`x →`, `↑ y`), or none */
  axisTitles: { x: string; y: string } | null;
  /**
   * Tooltip text of point i of the first series (may span lines). Without it the tooltip
   * lists every series' value at the hovered x.
   */
  tooltip: ((i: number) => string) | null;
}

export interface ModelOptions {
  xKind?: ChartModel["xKind"];
  bands?: Band[];
  axisTitles?: ChartModel["axisTitles"];
  tooltip?: ChartModel["tooltip"];
  /** series that count for the x extent only (hidden engines) */
  extentOnly?: readonly ChartSeries[];
}

function extentOf(series: readonly ChartSeries[], bands: readonly Band[], sorted: boolean): Range | null {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const s of series) {
    const n = s.x.length;
    if (n === 0) continue;
    if (sorted) {
      lo = Math.min(lo, s.x[0]!);
      hi = Math.max(hi, s.x[n - 1]!);
    } else {
      for (let i = 0; i < n; i++) {
        const v = s.x[i]!;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
  }
  for (const b of bands) {
    lo = Math.min(lo, b.x0);
    hi = Math.max(hi, b.x1);
  }
  return lo <= hi ? [lo, hi] : null;
}

/** Assemble a model: extent and point count are computed here, once. */
export function chartModel(mode: ChartModel["mode"], series: ChartSeries[], opts: ModelOptions = {}): ChartModel {
  const bands = opts.bands ?? [];
  let points = 0;
  for (const s of series) for (let i = 0; i < s.y.length; i++) if (Number.isFinite(s.y[i]!)) points++;
  return {
    mode,
    series,
    xExtent: extentOf([...series, ...(opts.extentOnly ?? [])], bands, mode === "line"),
    xKind: opts.xKind ?? "value",
    points,
    bands,
    axisTitles: opts.axisTitles ?? null,
    tooltip: opts.tooltip ?? null,
  };
}
