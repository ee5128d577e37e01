"use client";

import { usePathname } from "next/navigation";
import { Link } from "@/components/shell/Link";

/**
 * The page for a run that does not exist (or that this user may not see): inside the app
 * shell, with the id that was asked for and the way back (#15 defect 11). The HTTP status
 * stays 404. A run the user may not see answers the same as an unknown one, so the text
 * names both.
 */
export function RunNotFound() {
  const pathname = usePathname();
  const m = /^\/runs\/([^/]+)/.exec(pathname ?? "");
  let runId = "";
  try {
    runId = m ? decodeURIComponent(m[1]!) : "";
  } catch {
    runId = m ? m[1]! : "";
  }
  return (
    <main className="rv-notfound" role="alert">
      <h1>Run not found</h1>
      <p>
        {runId ? (
          <>
            There is no run <code>{runId}</code> under the server&apos;s runs roots, or you are not allowed to see it.
          </>
        ) : (
          <>There is no such run under the server&apos;s runs roots, or you are not allowed to see it.</>
        )}
      </p>
      <p className="muted">A run appears once its folder has a telemetry stream or a rollout dump; a run just started may take a few seconds to show up.</p>
      <p>
        <Link href="/">← All runs</Link>
      </p>
    </main>
  );
}
