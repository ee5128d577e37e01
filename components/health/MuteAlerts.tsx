"use client";
/** Mute / unmute a run's webhook alerts (docs/api.md 9.5.5) — a server action, re-checked there. */
import { useActionState } from "react";
import { setAlertMuteAction, type MuteState } from "@/lib/actions/alerts";

export function MuteAlerts({ runId, configured, muted }: { runId: string; configured: boolean; muted: boolean }) {
  const [state, action, pending] = useActionState<MuteState, FormData>(setAlertMuteAction, { muted: null, error: null });
  const now = state.muted ?? muted;
  if (!configured) return <p className="muted">Alerts: no webhook configured (<code>serve --alert-webhook URL</code>).</p>;
  return (
    <form action={action} className="mute-alerts">
      <input type="hidden" name="run" value={runId} />
      <input type="hidden" name="muted" value={now ? "0" : "1"} />
      <span className="muted">Alerts {now ? "muted for this run" : "on"} · </span>
      <button type="submit" className="btn" disabled={pending} data-testid="mute-alerts">
        {now ? "Unmute alerts" : "Mute alerts"}
      </button>
      {state.error ? <span className="error"> {state.error}</span> : null}
    </form>
  );
}
