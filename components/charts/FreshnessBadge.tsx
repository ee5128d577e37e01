"use client";

/**
 * Freshness of the newest *data* (meta.time_range[1]), with its age ticking every second:
 * live (follow mode, fresh), stale (follow mode, the collector stopped writing), static
 * (finished run), offline (the server stopped answering), waiting (no data yet, the run is
 * running), none (no data and the run is not running: nothing is coming).
 *
 * The run state is `run_status`'s lifecycle (the run header's badge, the same query), so
 * the badge never says "waiting" on a finished dump-only run (#15 defect 6). A panel shows
 * `PanelFreshness`: the age of *its own* last point (an SGLang chart frozen for 43 min
 * says so beside a live GPU view).
 */
import { useParams } from "next/navigation";
import { useNowS } from "@/components/shell/use-now";
import { useRunStatus } from "@/components/health/use-run-status";
import { formatClock, formatDateTime, formatDuration } from "@/lib/charts/core/format";
import { freshness, panelFreshness } from "@/lib/charts/freshness";
import { useMeta } from "@/lib/client/telemetry-queries";
import type { RunState } from "@/lib/contracts/health";

/** The lifecycle state of the run whose page this is (null outside a run page or until known). */
function useRunState(): RunState | null {
  const params = useParams<{ runId?: string }>();
  let runId = "";
  try {
    runId = params?.runId ? decodeURIComponent(params.runId) : "";
  } catch {
    runId = "";
  }
  const status = useRunStatus(runId, runId !== "");
  return status.data?.lifecycle.state ?? null;
}

export function FreshnessBadge({ mode, t1, failing, error }: { mode: string | undefined; t1: number | null | undefined; failing: boolean; error?: string | null }) {
  // The wall clock, ticking (the age must keep growing while nothing arrives); null while
  // the server renders and the page hydrates: the clock time and the age are the browser's
  // (another second, another time zone), so they are left out until then (#15 defect 2).
  const clock = useNowS();
  const now = clock ?? (typeof t1 === "number" ? t1 : 0);
  const runState = useRunState();
  const f = freshness({ mode, t1, nowS: now, failing, runState });
  const stamp = typeof t1 === "number" && clock !== null ? formatClock(t1) : "…";
  const age = f.ageS === null || clock === null ? "" : f.ageS < 86400 * 2 ? ` · ${formatDuration(f.ageS)} ago` : "";
  const text =
    f.state === "waiting"
      ? "waiting for data…"
      : f.state === "none"
        ? `no telemetry · run ${runState ?? "not running"}`
        : f.state === "offline"
        ? `offline · data → ${stamp}`
        : f.state === "live"
          ? `live · data → ${stamp}${age}`
          : f.state === "stale"
            ? `stale · data → ${stamp}${age}`
            : `data → ${stamp}`;
  const title =
    (typeof t1 === "number" && clock !== null ? `newest data: ${formatDateTime(t1)} (${formatDateTime(t1, true)})\n` : "") +
    (f.state === "stale"
      ? "Following a live run, but no new data has arrived for a while: the job or its collector may have stopped."
      : f.state === "offline"
        ? `The server did not answer the last refresh${error ? `: ${error}` : ""}. Showing the last data received.`
        : f.state === "live"
          ? "Auto-refreshing every 5 s from a still-running job."
          : f.state === "static"
            ? "Static snapshot: the server is not following this run."
            : f.state === "none"
              ? "This run recorded no telemetry streams (dumps only, or nothing yet) and is not running: no data is coming."
              : "");
  return (
    <span className={`fresh fresh-${f.state}`} title={title} data-testid="freshness" data-state={f.state} role="status">
      {text}
    </span>
  );
}

/**
 * Freshness of one panel: the age of its own newest point (`t1`), "stale" when it trails
 * the run's newest data (`runT1`) by more than the stale window — the view can be live
 * while this panel is frozen.
 */
export function PanelFreshness({ runId, t1 }: { runId: string; t1: number | null }) {
  const clock = useNowS();
  // the view's meta query (same key: no extra request) gives the mode and the run's newest data
  const meta = useMeta(runId).data;
  const mode = meta?.mode;
  const runT1 = meta?.time_range ? meta.time_range[1] : null;
  const runState = useRunState();
  const f = panelFreshness({ mode, t1, runT1, nowS: clock ?? (t1 ?? 0), runState });
  const age = f.ageS === null || clock === null ? "" : formatDuration(f.ageS);
  const behind = f.behindS !== null && f.behindS > 0 ? formatDuration(f.behindS) : "";
  const text =
    f.ageS === null
      ? f.state === "none"
        ? "no data"
        : "waiting…"
      : f.state === "live"
        ? `live · ${age} ago`
        : f.state === "stale"
          ? clock === null
            ? "stale"
            : mode === "follow"
              ? `stale · last point ${age} ago`
              : `stale · ends ${behind} before the run`
          : clock === null
            ? "last point"
            : `last point ${age} ago`;
  const title = (
    (t1 !== null && clock !== null ? `this panel's newest point: ${formatDateTime(t1)}\n` : "") +
    (f.state === "stale" ? "This panel has stopped receiving points while the run's other data moved on (or the run stopped)." : "")
  ).trim();
  return (
    <span className={`fresh fresh-panel fresh-${f.state}`} title={title} data-testid="panel-freshness" data-state={f.state}>
      {text}
    </span>
  );
}
