"use server";
/**
 * Per-run alert mute (docs/api.md 9.5.5): any signed-in member may mute or unmute a run's
 * webhook alerts; the session is re-checked here and the run id must be one the registry
 * knows.
 */
import { formText } from "@/lib/actions/form";
import { getDb } from "@/lib/server/db";
import { setMuted } from "@/lib/server/alerts/mutes";
import { getRegistry } from "@/lib/server/runs/context";
import { currentPageUser } from "@/lib/server/session";

export interface MuteState {
  muted: boolean | null;
  error: string | null;
}

export async function setAlertMuteAction(_: MuteState, form: FormData): Promise<MuteState> {
  const user = await currentPageUser();
  if (!user) return { muted: null, error: "sign in to mute alerts" };
  const runId = formText(form, "run").trim();
  if (!runId || !getRegistry().find(runId)) return { muted: null, error: `unknown run '${runId}'` };
  const muted = formText(form, "muted") === "1";
  setMuted(getDb(), runId, muted, user.name);
  return { muted, error: null };
}
