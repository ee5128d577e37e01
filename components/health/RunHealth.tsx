"use client";
/**
 * Run health on the run header (docs/api.md 9.5): the state badge (running, finished,
 * stalled, crashed, killed) and, opened, the cause, time to ready and every log signal —
 * zero counts included — each linking to its time on the Compute Utilization view.
 */
import { useState, type ReactNode } from "react";
import "@/components/health/health.css";
import { Link } from "@/components/shell/Link";
import { HostPanel } from "@/components/health/HostPanel";
import { MuteAlerts } from "@/components/health/MuteAlerts";
import { timelineHref, useRunStatus } from "@/components/health/use-run-status";
import { formatUtc } from "@/lib/format/time";

const dur = (s: number | null) => (s === null ? "—" : s < 120 ? `${Math.round(s)} s` : s < 7200 ? `${(s / 60).toFixed(1)} min` : `${(s / 3600).toFixed(1)} h`);

export function RunHealth({ runId, children }: { runId: string; children?: ReactNode }) {
  const status = useRunStatus(runId);
  const [open, setOpen] = useState(false);
  const s = status.data;
  if (!s) return null;
  const l = s.lifecycle;
  const fired = s.log_signals.filter((x) => x.count > 0).length;
  return (
    <span className="run-health">
      <button
        type="button"
        className={`badge badge-state badge-${l.state}`}
        data-testid="run-state"
        data-state={l.state}
        title={l.cause}
        aria-expanded={open}
        onClick={() => setOpen((o) => !o)}
      >
        {l.state}
        {fired ? ` · ${fired} signal${fired > 1 ? "s" : ""}` : ""}
      </button>
      {open ? (
        <div className="panel run-health-panel" data-testid="run-health-panel">
          <p>
            <strong>{l.state}</strong>: {l.cause}
          </p>
          <p className="muted">
            start {formatUtc(l.start_ts)} · ready after {dur(l.time_to_ready_s)} · first step after {dur(l.time_to_first_step_s)} · last
            progress {formatUtc(l.last_progress_ts)}
          </p>
          <table className="signals">
            <thead>
              <tr>
                <th>signal</th>
                <th>count</th>
                <th>first</th>
                <th>last</th>
                <th>latest line</th>
              </tr>
            </thead>
            <tbody>
              {s.log_signals.map((x) => {
                const sample = x.samples[x.samples.length - 1];
                return (
                  <tr key={x.signal} data-signal={x.signal} className={x.count ? `fired fired-${x.severity}` : "quiet"}>
                    <td>{x.signal}</td>
                    <td>{x.count}</td>
                    <td>{x.first_ts === null ? "—" : <Link href={timelineHref(runId, x.first_ts)}>{formatUtc(x.first_ts)}</Link>}</td>
                    <td>{x.last_ts === null ? "—" : <Link href={timelineHref(runId, x.last_ts)}>{formatUtc(x.last_ts)}</Link>}</td>
                    <td className="sample" title={sample?.text}>
                      {sample ? `${sample.file}:${sample.line} ${sample.text}` : ""}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {s.inputs.host.present ? <HostPanel runId={runId} /> : null}
          {s.alerts ? <MuteAlerts runId={runId} configured={s.alerts.configured} muted={s.alerts.muted} /> : null}
          {children}
        </div>
      ) : null}
    </span>
  );
}
