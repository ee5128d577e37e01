/**
 * The run list's state cell (docs/api.md 9.5.4): the one run state (`run_status`'s
 * lifecycle, the same the run header shows) and the worst alarm as a badge — a
 * crashed/stalled cause, an advisory alarm (docs/api.md 10) or a log signal — with the
 * count of the others; "…" until the server has judged the run. The alarm sits on its own
 * line under the state (two lines at most), so a long advisory never widens the table.
 */
import type { RunState } from "@/lib/contracts/health";
import type { RunSummary } from "@/lib/contracts/runs";
import "@/components/health/health.css";

/** What each state means, as the badge's hover text (docs/api.md 9.5.2). */
export const STATE_TITLES: Record<RunState, string> = {
  running: "running: telemetry or logs written in the last 5 minutes",
  finished: "finished: the last rollout step reached num_rollout − 1 (the end marker)",
  stalled: "stalled: the stall watchdog fired at the end of the data",
  crashed: "crashed: a crash, OOM, NCCL or Ray actor error was logged after the last progress",
  killed: "killed: a kill is on record (SIGKILL, exit code 137) after the last progress",
  ended: "ended: the files stopped with no exit record — no end marker, no crash or kill line (how it ended is not recorded)",
};

export function RunStateCell({ run }: { run: Pick<RunSummary, "state" | "alarm"> & Partial<Pick<RunSummary, "alarms">> }) {
  if (!run.state) return <span className="muted" title="not judged yet">…</span>;
  const more = run.alarm && (run.alarms ?? 0) > 1 ? (run.alarms ?? 0) - 1 : 0;
  return (
    <span className="state-cell" data-testid="run-state-cell" data-state={run.state}>
      <span className={`badge badge-state badge-${run.state}`} title={STATE_TITLES[run.state]}>
        {run.state}
      </span>
      {run.alarm ? (
        <span className={`alarm alarm-${run.alarm.level}`} title={run.alarm.text} data-testid="run-alarm" data-level={run.alarm.level}>
          {" "}
          {run.alarm.level === "critical" ? "⚠" : "△"} {run.alarm.text.length > 60 ? `${run.alarm.text.slice(0, 60)}…` : run.alarm.text}
          {more ? <span className="alarm-count"> +{more} more</span> : null}
        </span>
      ) : null}
    </span>
  );
}
