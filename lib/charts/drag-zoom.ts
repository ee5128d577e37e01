/**
 * The drag-box zoom rules shared by every line chart (spec §1.9):
 * a press that moves < 4 px both ways is a click; otherwise each axis is zoomed only when
 * its extent reaches 10 px; a horizontal sweep (dx ≥ 10, dy < 10) re-fits y to auto.
 */

export const CLICK_PX = 4;
export const AXIS_PX = 10;

export type Range = [number, number];

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

/** While dragging: a full-height x band until the vertical extent reaches 10 px, then a box. */
export function dragOverlay(start: [number, number], cur: [number, number], box: PlotBox): { x: number; y: number; w: number; h: number } {
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
  start: [number, number],
  end: [number, number],
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

/**
 * Query string from params, with `:` `,` `/` `~` left readable (all legal in a query):
 * `lanes=g:0-31,rank:2`, `x=10~40`, `y:perf/step_time=…`. A literal "%" is encoded as
 * %25 first, so a user's text can never turn into one of these by accident.
 */
export function readableQuery(sp: URLSearchParams): string {
  return sp.toString().replace(/%3A/gi, ":").replace(/%2C/gi, ",").replace(/%2F/gi, "/").replace(/%7E/gi, "~");
}

/** Compact, URL-safe number: 12 significant digits keep unix seconds to 0.01 s. */
export function urlNum(v: number): string {
  return String(Number(v.toPrecision(12)));
}

export function encodeRange(r: Range | null): string | null {
  return r ? `${urlNum(r[0])}~${urlNum(r[1])}` : null;
}

export function decodeRange(s: string | null | undefined): Range | null {
  if (!s) return null;
  const m = /^(-?[\d.eE+-]+)~(-?[\d.eE+-]+)$/.exec(s.trim());
  if (!m) return null;
  const a = Number(m[1]);
  const b = Number(m[2]);
  if (!Number.isFinite(a) || !Number.isFinite(b) || a === b) return null;
  return a < b ? [a, b] : [b, a];
}
