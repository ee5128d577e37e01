/**
 * Canvas helpers: size a canvas (bitmap for the device pixel ratio, capped at 3, and its
 * CSS box) and return a context whose units are CSS pixels. Resizing the bitmap only when the size really changed avoids a
 * realloc per frame during pan.
 */
export function prepareCanvas(canvas: HTMLCanvasElement, cssW: number, cssH: number): CanvasRenderingContext2D | null {
  const dpr = typeof window === "undefined" ? 1 : Math.min(window.devicePixelRatio || 1, 3);
  const w = Math.max(1, Math.round(cssW * dpr));
  const h = Math.max(1, Math.round(cssH * dpr));
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
  // CSS size too (only when it changed: a style write per pan frame would cost a restyle)
  const sw = `${cssW}px`;
  const sh = `${cssH}px`;
  if (canvas.style.width !== sw) canvas.style.width = sw;
  if (canvas.style.height !== sh) canvas.style.height = sh;
  let ctx: CanvasRenderingContext2D | null = null;
  try {
    ctx = canvas.getContext("2d");
  } catch {
    ctx = null; // jsdom without a canvas backend
  }
  if (!ctx) return null;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, cssW, cssH);
  return ctx;
}

/**
 * Stamp a canvas with what it now shows (`data-painted`). A canvas has no DOM node per
 * mark to wait for, so the e2e suite and the bench's browser probe read this stamp to
 * know the bitmap holds the current data, not just that the element exists.
 */
export function markPainted(canvas: HTMLCanvasElement, stamp: string | number): void {
  const v = String(stamp);
  if (canvas.dataset.painted !== v) canvas.dataset.painted = v;
}

/** Stroke a polyline in one path, lifting the pen at NaN (gaps). */
export function strokeSeries(
  ctx: CanvasRenderingContext2D,
  xs: ArrayLike<number>,
  ys: ArrayLike<number>,
  n: number,
  sx: (v: number) => number,
  sy: (v: number) => number,
): void {
  ctx.beginPath();
  let pen = false;
  for (let i = 0; i < n; i++) {
    const y = ys[i]!;
    if (Number.isNaN(y)) {
      pen = false;
      continue;
    }
    const px = sx(xs[i]!);
    const py = sy(y);
    if (pen) ctx.lineTo(px, py);
    else ctx.moveTo(px, py);
    pen = true;
  }
  ctx.stroke();
}
