import { withApi } from "@/lib/api/with-api";
import { GetExportQuery } from "@/lib/contracts/report";
import { exportForUser } from "@/lib/export/serve";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** The run's offline report as a download (docs/export.md); restricted runs answer only to their readers. */
export const GET = withApi({ cost: "heavy", query: GetExportQuery, trajectories: "lifecycle" }, async ({ query, run, user }) =>
  exportForUser(run, user!, query),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
