"use client";
/**
 * The token strip without one DOM node per token: tokens are measured once, laid out
 * into lines (lib/rollout-view/tokens.layoutLines) and only the lines in view are
 * rendered (react-virtual), so an 8k–32k token sample costs ~40 lines of spans. Text
 * stays real text (selectable, searchable with the browser). One delegated mouse handler
 * serves every token's tooltip.
 */
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useMemo, useRef, useState, type MouseEvent } from "react";
import type { Range } from "@/lib/charts/core/range";
import { layoutLines, statColor, tokenTooltip, type StatScale, type TokenModel } from "@/lib/rollout-view/tokens";
import { useElementWidth } from "@/components/charts/use-element-width";
import { ChartTooltip, type TooltipState } from "@/components/charts/ChartTooltip";
import { MONO_FONT } from "@/components/charts/use-chart-theme";

const LINE_H = 25;
const FONT = `13px ${MONO_FONT}`;

let measureCtx: CanvasRenderingContext2D | null | undefined;
const widthCache = new Map<string, number>();
function textWidth(s: string): number {
  const hit = widthCache.get(s);
  if (hit !== undefined) return hit;
  const w = measure(s);
  if (widthCache.size > 50_000) widthCache.clear();
  widthCache.set(s, w);
  return w;
}
function measure(s: string): number {
  if (measureCtx === undefined) {
    try {
      measureCtx = typeof document === "undefined" ? null : document.createElement("canvas").getContext("2d");
    } catch {
      measureCtx = null;
    }
    if (measureCtx) measureCtx.font = FONT;
  }
  return measureCtx ? measureCtx.measureText(s).width : s.length * 7.8;
}

export interface TokenStripProps {
  model: TokenModel;
  scale: StatScale | null;
  /** Absolute token range to highlight and scroll to (the chart's zoom). */
  highlight: Range | null;
  onHover?: (absolutePosition: number | null) => void;
}

export function TokenStrip({ model, scale, highlight, onHover }: TokenStripProps) {
  const wrapRef = useRef<HTMLDivElement>(null);
  const scrollRef = useRef<HTMLDivElement>(null);
  const width = useElementWidth(wrapRef, 900);
  const [tip, setTip] = useState<TooltipState | null>(null);
  const widths = useMemo(() => Float64Array.from(model.text, (t) => textWidth(t) + 1), [model]);
  const lines = useMemo(() => layoutLines(widths, model.breakAfter, Math.max(120, width - 28)), [widths, model, width]);
  const col = scale ? model.stats[scale.stat] : undefined;

  // eslint-disable-next-line react-hooks/incompatible-library -- no React Compiler in this build (next.config.ts); the instance is read fresh every render, never memoised
  const virtualizer = useVirtualizer({
    count: lines.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => LINE_H,
    overscan: 6,
    initialRect: { width: 900, height: 420 },
  });

  // Scroll the strip to the start of the highlighted range (the chart drives it).
  const hlStart = highlight ? Math.max(0, Math.floor(highlight[0]) - model.start) : null;
  useEffect(() => {
    if (hlStart === null || !lines.length) return;
    let lo = 0;
    let hi = lines.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lines[mid]! <= hlStart) lo = mid;
      else hi = mid - 1;
    }
    virtualizer.scrollToIndex(lo, { align: "start" });
  }, [hlStart, lines, virtualizer]);

  const onMove = (e: MouseEvent) => {
    const el = (e.target as HTMLElement).closest<HTMLElement>("[data-i]");
    if (!el) {
      setTip(null);
      onHover?.(null);
      return;
    }
    const i = Number(el.dataset.i);
    setTip({ clientX: e.clientX, clientY: e.clientY, content: tokenTooltip(model, i) });
    onHover?.(model.start + i);
  };

  const inHl = (i: number) => highlight !== null && model.start + i >= highlight[0] && model.start + i < highlight[1];
  const items = virtualizer.getVirtualItems();
  return (
    <div ref={wrapRef} className="ts-wrap">
      <div
        ref={scrollRef}
        className="ts-scroll"
        style={{ maxHeight: Math.min(440, lines.length * LINE_H + 12) }}
        onMouseMove={onMove}
        onMouseLeave={() => {
          setTip(null);
          onHover?.(null);
        }}
        data-testid="token-strip"
      >
        <div className="ts-inner" style={{ height: virtualizer.getTotalSize() }}>
          {items.map((vi) => {
            const a = lines[vi.index]!;
            const b = lines[vi.index + 1] ?? model.n;
            const spans = [];
            for (let i = a; i < b; i++) {
              const prompt = i < model.respStart;
              const masked = model.masked[i] === 1;
              const bg = !prompt && !masked && col && scale ? statColor(scale, col[i]!) : null;
              spans.push(
                <span key={i} data-i={i} className={`ts-tok${prompt ? " ts-prompt" : ""}${masked ? " ts-masked" : ""}${inHl(i) ? " ts-hl" : ""}`} style={bg ? { background: bg } : undefined}>
                  {model.text[i]}
                </span>,
              );
            }
            return (
              <div key={vi.key} className="ts-line" style={{ transform: `translateY(${vi.start}px)`, height: LINE_H }}>
                {spans}
              </div>
            );
          })}
        </div>
      </div>
      <ChartTooltip tip={tip} />
    </div>
  );
}
