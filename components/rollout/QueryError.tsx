"use client";

import { ApiClientError } from "@/lib/client/fetcher";

/** An API failure shown in place with the server's own message (e.g. 403 restricted trajectories). */
export function QueryError({ error, what }: { error: unknown; what: string }) {
  const status = error instanceof ApiClientError ? error.status : null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div className="error-box rv-error" role="alert">
      <strong>
        Could not load {what}
        {status ? ` (HTTP ${status})` : ""}:
      </strong>{" "}
      {message}
    </div>
  );
}

export function isNotFound(error: unknown): boolean {
  return error instanceof ApiClientError && error.status === 404;
}
