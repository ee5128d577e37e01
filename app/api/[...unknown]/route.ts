import { unknownApiPathResponse } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/**
 * Any /api/* path no route serves: FastAPI's 404 `{"detail":"Not Found"}` (docs/api.md
 * 9.1) instead of the HTML 404 page. Public on purpose — it reads nothing, so it cannot
 * tell whether a run, step or file exists.
 */
const notFound = async () => unknownApiPathResponse();

export const GET = notFound;
export const POST = notFound;
export const PUT = notFound;
export const PATCH = notFound;
export const DELETE = notFound;
