/**
 * The run list's state cell (docs/api.md 9.5.4): state badge and worst alarm from
 * `/api/runs` (`state`, `alarm`); "…" until the server has judged the run.
 */
import type { RunSummary } from "@/lib/contracts/runs";
import "@/components/health/health.css";

export function RunStateCell({ run }: { run: Pick<RunSummary, "state" | "alarm"> }) {
  if (!run.state) return <span className="muted" title="not judged yet">…</span>;
  return (
    <span className="state-cell" data-testid="run-state-cell" data-state={run.state}>
      <span className={`badge badge-state badge-${run.state}`}>{run.state}</span>
      {run.alarm ? (
        <span className={`alarm alarm-${run.alarm.level}`} title={run.alarm.text}>
          {" "}
          {run.alarm.level === "critical" ? "⚠" : "△"} {run.alarm.text.length > 60 ? `${run.alarm.text.slice(0, 60)}…` : run.alarm.text}
        </span>
      ) : null}
    </span>
  );
}
