"use client";

import { useLayoutEffect, useRef, useState } from "react";

export interface TooltipState {
  x: number;
  y: number;
  text: string;
}

/**
 * Fixed-position tooltip 12px right of and below the cursor; flips left at the right
 * edge and is clamped to the viewport bottom. Ignores the pointer.
 */
export function Tooltip({ tip }: { tip: TooltipState | null }) {
  const ref = useRef<HTMLDivElement>(null);
  const [pos, setPos] = useState<{ left: number; top: number } | null>(null);
  // Measuring the rendered box is the one way to flip it; this syncs with layout only.
  useLayoutEffect(() => {
    const el = ref.current;
    if (!tip || !el) return;
    const w = el.offsetWidth;
    const h = el.offsetHeight;
    let left = tip.x + 12;
    if (left + w > window.innerWidth - 4) left = Math.max(4, tip.x - 12 - w);
    const top = Math.max(4, Math.min(tip.y + 12, window.innerHeight - h - 4));
    setPos({ left, top });
  }, [tip]);
  if (!tip) return null;
  return (
    <div ref={ref} className="rv-tooltip" role="tooltip" style={{ left: pos?.left ?? tip.x + 12, top: pos?.top ?? tip.y + 12 }}>
      {tip.text}
    </div>
  );
}
