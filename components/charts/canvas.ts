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

/**
 * A drawn chart shown as an `<img>` of its bitmap (docs/charts.md §7).
 *
 * A 2D canvas is a compositor layer of its own, and while it is rendered the browser hands
 * its bitmap to the compositor again on every commit, changed or not. On a page of cards
 * that is every near canvas on every scroll frame: Chromium's ProduceCanvasResource ran
 * 18–20 times and took up to 13 ms a frame on the 200-metric page (issue #15). An image is
 * painted into the page's tiles once. So after each paint the bitmap is encoded to a blob
 * (`toBlob`, off the frame) and loaded into the `<img>` under the canvas, which is then shown
 * and the canvas is not rendered (an explicit `decode()` first decoded every image twice).
 * The canvas keeps its bitmap (the PNG export and tests read it).
 *
 * The first paint of a chart is never composited as a canvas: it is stamped
 * (`data-painted`) when its image is on screen, so the stamp still says what a person
 * sees. A repaint (zoom, smoothing, theme, new data) shows the canvas at once, so an
 * interaction never waits on an encode, and its image replaces it once loaded. Where
 * `toBlob` is missing, the canvas is shown and stamped at once. The image carries the same
 * `data-painted` stamp while it is the one shown.
 */
export class CanvasImage {
  private gen = 0;
  private url: string | null = null;
  private shown = false;

  constructor(
    private readonly canvas: HTMLCanvasElement,
    private readonly img: HTMLImageElement,
  ) {}

  /** Call right after the canvas was painted; `stamp` is what it now shows (markPainted). */
  painted(stamp: string): void {
    const gen = ++this.gen;
    const { canvas, img } = this;
    const encode = typeof canvas.toBlob === "function" && typeof URL.createObjectURL === "function";
    if (this.shown || !encode) this.show(false, stamp);
    if (!encode) return;
    const fallback = () => {
      if (gen === this.gen) this.show(false, stamp);
    };
    canvas.toBlob((blob) => {
      if (gen !== this.gen) return;
      if (!blob) return fallback();
      const url = URL.createObjectURL(blob);
      // loaded into the hidden <img>, then shown in place of the canvas; it is decoded once,
      // when its tiles are rastered (decoding="sync": in the frame that shows it)
      img.onload = () => {
        if (gen !== this.gen) return URL.revokeObjectURL(url);
        if (this.url) URL.revokeObjectURL(this.url);
        this.url = url;
        this.show(true, stamp);
      };
      img.onerror = () => {
        URL.revokeObjectURL(url);
        fallback();
      };
      img.src = url;
    }, "image/png");
  }

  /** The component is gone: drop the blob. */
  dispose(): void {
    this.gen++;
    if (this.url) URL.revokeObjectURL(this.url);
    this.url = null;
  }

  /** Image or canvas, switched and stamped in one task, so no frame shows neither or both. */
  private show(image: boolean, stamp: string): void {
    const iv = image ? "visible" : "hidden";
    const cd = image ? "none" : "block";
    if (this.img.style.visibility !== iv) this.img.style.visibility = iv;
    if (this.canvas.style.display !== cd) this.canvas.style.display = cd;
    if (image) this.img.dataset.painted = stamp;
    else delete this.img.dataset.painted;
    markPainted(this.canvas, stamp);
    this.shown = true;
  }
}
