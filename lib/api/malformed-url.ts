/**
 * Malformed %-encoding in a request path (`/api/rollout/%E0%A4%A/summary`): Next fails
 * to decode the dynamic segment before any handler runs and answers its HTML error page
 * (or a bare 500). `malformedPathResponse` is the check the request proxy runs first: a
 * path that does not decode gets a 400 JSON body in the API's error shape (docs/api.md
 * "Errors"); any other path gets null (carry on).
 */
import { errorBody } from "@/lib/contracts/errors";

export const MALFORMED_PATH_MESSAGE = "malformed percent-encoding in the request path";

/** True when every `%` escape of `pathname` is well-formed UTF-8. */
export function pathDecodes(pathname: string): boolean {
  if (!pathname.includes("%")) return true;
  try {
    decodeURIComponent(pathname);
    return true;
  } catch {
    return false;
  }
}

export function malformedPathResponse(pathname: string): Response | null {
  if (pathDecodes(pathname)) return null;
  return Response.json(errorBody("bad_request", MALFORMED_PATH_MESSAGE), { status: 400 });
}
