"use client";
/**
 * A one-line heat strip of a token range (one cell per token, coloured by the chosen
 * stat) drawn on a canvas under the conversation turn that produced those tokens.
 */
import { useEffect, useRef, useState } from "react";
import { statColor, tokenTooltip, type StatScale, type TokenModel } from "@/lib/rollout-view/tokens";
import { prepareCanvas } from "@/components/charts/canvas";
import { useChartTheme } from "@/components/charts/use-chart-theme";
import { useElementWidth } from "@/components/charts/use-element-width";
import { ChartTooltip, type TooltipState } from "@/components/charts/ChartTooltip";

export function TurnStrip({ model, range, scale, onOpen, label }: { model: TokenModel; range: readonly [number, number]; scale: StatScale | null; onOpen: () => void; label: string }) {
  const wrapRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const width = useElementWidth(wrapRef, 600);
  const theme = useChartTheme();
  const [tip, setTip] = useState<TooltipState | null>(null);
  const a = Math.max(range[0], model.start);
  const b = Math.min(range[1], model.end);
  const n = Math.max(0, b - a);
  const H = 14;

  // Draws the strip: syncs the canvas with (tokens, range, stat, size, theme).
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    const ctx = prepareCanvas(canvas, width, H);
    if (!ctx || !n) return;
    const c = theme;
    const col = scale ? model.stats[scale.stat] : undefined;
    const w = width / n;
    ctx.fillStyle = c.panel2;
    ctx.fillRect(0, 0, width, H);
    for (let p = a; p < b; p++) {
      const i = p - model.start;
      const x = (p - a) * w;
      if (model.masked[i]) {
        ctx.fillStyle = c.border;
        ctx.fillRect(x, H / 2 - 1, Math.max(1, w), 2);
        continue;
      }
      const color = col && scale ? statColor(scale, col[i]!) : null;
      if (!color) continue;
      ctx.fillStyle = color;
      ctx.fillRect(x, 0, Math.max(1, w + 0.5), H);
    }
  }, [model, a, b, n, scale, width, theme]);

  return (
    <div ref={wrapRef} className="sv-turnstrip">
      <canvas
        ref={canvasRef}
        role="img"
        aria-label={label}
        onMouseMove={(e) => {
          const r = e.currentTarget.getBoundingClientRect();
          const p = a + Math.floor(((e.clientX - r.left) / r.width) * n);
          setTip(p >= a && p < b ? { clientX: e.clientX, clientY: e.clientY, content: `${tokenTooltip(model, p - model.start)}\nclick = open in the Tokens tab` } : null);
        }}
        onMouseLeave={() => setTip(null)}
        onClick={onOpen}
      />
      <ChartTooltip tip={tip} />
    </div>
  );
}
