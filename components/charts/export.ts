/**
 * Chart downloads (docs/charts.md §6). The PNG is what the chart shows: the theme's panel
 * background, the canvas bitmap (marks) and the SVG axes drawn on top at the same
 * device-pixel ratio. The SVG is serialised with its CSS-variable colours resolved, since
 * an image has no access to the page's stylesheet.
 */
import type { ChartTheme } from "@/components/charts/use-chart-theme";

/** Save a blob through a temporary `<a download>` (the browser's own download). */
export function downloadBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.style.display = "none";
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function svgImage(svg: SVGSVGElement, theme: ChartTheme): Promise<HTMLImageElement | null> {
  const clone = svg.cloneNode(true) as SVGSVGElement;
  clone.setAttribute("xmlns", "http://www.w3.org/2000/svg");
  for (const t of clone.querySelectorAll("text")) {
    t.setAttribute("fill", theme.muted);
    t.setAttribute("font-family", theme.mono);
    if (!t.getAttribute("font-size")) t.setAttribute("font-size", "11");
  }
  for (const l of clone.querySelectorAll("line")) l.setAttribute("stroke", theme.border);
  const src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(new XMLSerializer().serializeToString(clone))}`;
  return new Promise((resolve) => {
    const img = new Image();
    img.onload = () => resolve(img);
    img.onerror = () => resolve(null);
    img.src = src;
  });
}

export async function chartPng(canvas: HTMLCanvasElement, svg: SVGSVGElement, cssW: number, cssH: number, theme: ChartTheme): Promise<Blob | null> {
  const out = document.createElement("canvas");
  out.width = canvas.width;
  out.height = canvas.height;
  const ctx = out.getContext("2d");
  if (!ctx) return null;
  ctx.fillStyle = theme.panel;
  ctx.fillRect(0, 0, out.width, out.height);
  ctx.drawImage(canvas, 0, 0);
  const img = await svgImage(svg, theme);
  if (img) ctx.drawImage(img, 0, 0, cssW, cssH, 0, 0, out.width, out.height);
  return new Promise((resolve) => out.toBlob((b) => resolve(b), "image/png"));
}
