import { forbidden } from "@/lib/contracts/errors";
import type { AuthUser } from "@/lib/server/auth/request-auth";
import { canReadTrajectories, recordTrajectoryView } from "@/lib/server/auth/run-access";
import { getDb } from "@/lib/server/db";

/** What a route returns of a run's trajectories: content (audited) or lifecycle. */
export type TrajectoryKind = "messages" | "tokens" | "lifecycle";

/**
 * The one guard in front of every answer that holds trajectory content or per-sample
 * lifecycle (called by withApi for routes declaring `trajectories`): refuses users without
 * access to a restricted run (403 with a message a person can act on) and records content
 * opens (messages, tokens of one sample) in the audit table.
 */
export function guardTrajectoryRead(
  runId: string,
  user: AuthUser | null,
  kind: TrajectoryKind,
  where?: { rolloutId?: number; sampleIndex?: number },
): void {
  if (!user) throw forbidden("sign in to read trajectories");
  const db = getDb();
  if (!canReadTrajectories(db, runId, user)) {
    throw forbidden(`this run's trajectories are restricted: ask an admin to add '${user.name}' to run '${runId}'`);
  }
  if (kind !== "lifecycle" && where?.rolloutId !== undefined && where.sampleIndex !== undefined) {
    recordTrajectoryView(db, { user_name: user.name, run_id: runId, step: where.rolloutId, sample: where.sampleIndex, kind });
  }
}
