"use client";

import type { ReactNode } from "react";
import "@/components/charts/chart.css";

export interface TooltipState {
  clientX: number;
  clientY: number;
  /** rows of a chart, or plain text (newlines kept) */
  content: ReactNode;
}

/**
 * The one floating tooltip of every chart and strip: 12 px right of and below the cursor,
 * flipped left near the right edge and above near the bottom. Ignores the pointer so it
 * never steals hover.
 */
export function ChartTooltip({ tip }: { tip: TooltipState | null }) {
  if (!tip) return null;
  const vw = typeof window === "undefined" ? 1e9 : window.innerWidth;
  const vh = typeof window === "undefined" ? 1e9 : window.innerHeight;
  const flipX = tip.clientX > vw - 340;
  const flipY = tip.clientY > vh - 180;
  return (
    <div
      className="chart-tooltip"
      role="tooltip"
      style={{
        left: flipX ? undefined : tip.clientX + 12,
        right: flipX ? vw - tip.clientX + 12 : undefined,
        top: flipY ? undefined : tip.clientY + 12,
        bottom: flipY ? vh - tip.clientY + 12 : undefined,
      }}
    >
      {tip.content}
    </div>
  );
}
