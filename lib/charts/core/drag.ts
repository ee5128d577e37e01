/**
 * The drag-box zoom rules of every chart (docs/views.md 1.9): a press that moves < 4 px
 * both ways is a click; otherwise each axis is zoomed only when its extent reaches 10 px;
 * a horizontal sweep (dx ≥ 10, dy < 10) re-fits y to auto.
 */
import type { PlotBox, Range, Zoom } from "@/lib/charts/core/range";

export const CLICK_PX = 4;
export const AXIS_PX = 10;

/** While dragging: a full-height x band until the vertical extent reaches 10 px, then a box. */
export function dragOverlay(start: readonly [number, number], cur: readonly [number, number], box: PlotBox): { x: number; y: number; w: number; h: number } {
  const x = Math.min(start[0], cur[0]);
  const w = Math.abs(cur[0] - start[0]);
  const dy = Math.abs(cur[1] - start[1]);
  if (dy < AXIS_PX) return { x, y: box.top, w, h: box.height };
  return { x, y: Math.min(start[1], cur[1]), w, h: dy };
}

export type Release = { kind: "click"; px: number; py: number } | { kind: "zoom"; zoom: Zoom } | { kind: "none" };

/**
 * Resolve a release. `invX`/`invY` map pixels to data values; the y pixel axis points
 * down, so the y range is re-ordered low→high.
 */
export function resolveRelease(
  start: readonly [number, number],
  end: readonly [number, number],
  prev: Zoom,
  invX: (px: number) => number,
  invY: (py: number) => number,
): Release {
  const dx = Math.abs(end[0] - start[0]);
  const dy = Math.abs(end[1] - start[1]);
  if (dx < CLICK_PX && dy < CLICK_PX) return { kind: "click", px: end[0], py: end[1] };
  const xOk = dx >= AXIS_PX;
  const yOk = dy >= AXIS_PX;
  if (!xOk && !yOk) return { kind: "none" };
  const order = (a: number, b: number): Range => (a <= b ? [a, b] : [b, a]);
  const x = xOk ? order(invX(start[0]), invX(end[0])) : prev.x;
  const y = yOk ? order(invY(start[1]), invY(end[1])) : xOk ? null : prev.y;
  return { kind: "zoom", zoom: { x, y } };
}
