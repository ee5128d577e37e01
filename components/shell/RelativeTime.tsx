"use client";

import { formatAgo, formatUtc } from "@/lib/format/time";
import { useNowS } from "./use-now";

/**
 * "5 min ago" with the UTC stamp as its title. The server render and the hydration show
 * only the stamp's placeholder (a dash), so the text can never mismatch (#15 defect 2).
 */
export function RelativeTime({ ts }: { ts: number | null }) {
  const now = useNowS();
  return (
    <span title={formatUtc(ts)} data-testid="relative-time">
      {now === null || ts === null ? "—" : formatAgo(ts, now * 1000)}
    </span>
  );
}
