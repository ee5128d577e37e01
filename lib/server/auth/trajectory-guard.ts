import { forbidden } from "@/lib/api/errors";
import type { AuthUser } from "@/lib/server/auth/request-auth";
import { canReadTrajectories, recordTrajectoryView } from "@/lib/server/auth/run-access";
import { getDb } from "@/lib/server/db";

/**
 * Called by the messages/tokens routes before reading a sample: refuses users without
 * access to a restricted run (403 with a message a person can act on) and records the
 * view in the audit table.
 */
export function guardTrajectoryRead(
  runId: string,
  user: AuthUser | null,
  what: { step: number; sample: number; kind: "messages" | "tokens" },
): void {
  if (!user) throw forbidden("sign in to read trajectories");
  const db = getDb();
  if (!canReadTrajectories(db, runId, user)) {
    throw forbidden(`this run's trajectories are restricted: ask an admin to add '${user.name}' to run '${runId}'`);
  }
  recordTrajectoryView(db, { user_name: user.name, run_id: runId, step: what.step, sample: what.sample, kind: what.kind });
}
