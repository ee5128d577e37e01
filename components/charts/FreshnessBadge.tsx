"use client";

/**
 * Freshness of the newest *data* (meta.time_range[1]), with its age ticking every second:
 * live (follow mode, fresh), stale (follow mode, the collector stopped writing), static
 * (finished run), offline (the server stopped answering), waiting (no data yet).
 */
import { useEffect, useState } from "react";
import { formatClock, formatDateTime, formatDuration } from "@/lib/charts/core/format";
import { freshness } from "@/lib/charts/freshness";

export function FreshnessBadge({ mode, t1, failing, error }: { mode: string | undefined; t1: number | null | undefined; failing: boolean; error?: string | null }) {
  const [now, setNow] = useState(() => Date.now() / 1000);
  // External system: the wall clock (the age must keep growing while nothing arrives).
  useEffect(() => {
    const id = setInterval(() => setNow(Date.now() / 1000), 1000);
    return () => clearInterval(id);
  }, []);
  const f = freshness({ mode, t1, nowS: now, failing });
  const stamp = typeof t1 === "number" ? formatClock(t1) : "…";
  const age = f.ageS === null ? "" : f.ageS < 86400 * 2 ? ` · ${formatDuration(f.ageS)} ago` : "";
  const text =
    f.state === "waiting"
      ? "waiting for data…"
      : f.state === "offline"
        ? `offline · data → ${stamp}`
        : f.state === "live"
          ? `live · data → ${stamp}${age}`
          : f.state === "stale"
            ? `stale · data → ${stamp}${age}`
            : `data → ${stamp}`;
  const title =
    (typeof t1 === "number" ? `newest data: ${formatDateTime(t1)} (${formatDateTime(t1, true)})\n` : "") +
    (f.state === "stale"
      ? "Following a live run, but no new data has arrived for a while: the job or its collector may have stopped."
      : f.state === "offline"
        ? `The server did not answer the last refresh${error ? `: ${error}` : ""}. Showing the last data received.`
        : f.state === "live"
          ? "Auto-refreshing every 5 s from a still-running job."
          : f.state === "static"
            ? "Static snapshot: the server is not following this run."
            : "");
  return (
    <span className={`fresh fresh-${f.state}`} title={title} data-testid="freshness" data-state={f.state} role="status">
      {text}
    </span>
  );
}
