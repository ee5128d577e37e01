/**
 * The one vocabulary of chart geometry (docs/charts.md): a data range, a zoom (per axis,
 * null = fit to the data) and the plot box in CSS pixels.
 */

export type Range = readonly [number, number];

export interface Zoom {
  x: Range | null;
  y: Range | null;
}

export const NO_ZOOM: Zoom = { x: null, y: null };

export interface PlotBox {
  left: number;
  top: number;
  width: number;
  height: number;
}

export function clampToPlot(px: number, py: number, box: PlotBox): [number, number] {
  return [Math.min(box.left + box.width, Math.max(box.left, px)), Math.min(box.top + box.height, Math.max(box.top, py))];
}

export function isZoomed(z: Zoom): boolean {
  return z.x !== null || z.y !== null;
}
