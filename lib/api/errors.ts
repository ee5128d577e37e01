/**
 * The HTTP side of API errors: map anything a handler throws to a Response. The error
 * table, `ApiError` and its helpers are a shared contract in lib/contracts/errors.ts
 * (docs/api.md 9.3 "Errors").
 */
import { ZodError } from "zod";
import { ApiError, describeZodError, ERROR_STATUS, errorBody, storageFailureMessage } from "@/lib/contracts/errors";

/** The body of an unknown API path: FastAPI's, plus the error object every body carries. */
export function unknownApiPathResponse(): Response {
  return Response.json(errorBody("not_found", "Not Found"), { status: 404 });
}

/** What a GET-only route answers: GET, HEAD (Next answers it with the GET handler) and OPTIONS. */
const GET_ONLY_ALLOW = "GET, HEAD, OPTIONS";

/**
 * A method a route does not answer: 405 with the `Allow` header (RFC 9110 requires it) and
 * the body every error carries — Next's own 405 had neither. Public, like the unknown
 * path's 404: it tells only what the API's documentation does.
 */
export function methodNotAllowedResponse(req: Request, allow: string = GET_ONLY_ALLOW): Response {
  const path = new URL(req.url).pathname;
  return Response.json(errorBody("method_not_allowed", `${req.method} is not allowed on ${path}: it answers ${allow}`, "Method Not Allowed"), {
    status: 405,
    headers: { allow },
  });
}

const notAllowed = async (req: Request) => methodNotAllowedResponse(req);
/** Next's own OPTIONS answer lists every method a route module exports, these 405 ones too. */
const options = async () => new Response(null, { status: 204, headers: { allow: GET_ONLY_ALLOW } });

/** The other methods' handlers of a GET-only route: `export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;`. */
export const GET_ONLY = { POST: notAllowed, PUT: notAllowed, PATCH: notAllowed, DELETE: notAllowed, OPTIONS: options } as const;

function isZodError(err: unknown): err is ZodError {
  return err instanceof ZodError || (err instanceof Error && err.name === "ZodError" && Array.isArray((err as ZodError).issues));
}

/**
 * A corrupt file is the data's problem, and a run's Prometheus being down the upstream's,
 * not bugs: one line per problem, no stack (every engine panel would otherwise log each poll).
 */
const corruptSeen = new Set<string>();
function warnCorruptOnce(message: string, what = "corrupt file"): void {
  if (corruptSeen.has(message)) return;
  if (corruptSeen.size > 1000) corruptSeen.clear();
  corruptSeen.add(message);
  console.warn(`[rlboard] ${what}: ${message}`);
}

/**
 * Map anything thrown by a handler to a Response. Unknown errors are logged and hidden.
 * A bare ZodError (a schema parsed outside withApi, which turns contract failures into
 * 422/400 itself) stays a 400 naming the field.
 */
export function toErrorResponse(err: unknown, log: (msg: string, err: unknown) => void = defaultLog): Response {
  if (ApiError.is(err)) {
    const status = ERROR_STATUS[err.code] ?? 500;
    if (err.code === "corrupt_file") warnCorruptOnce(err.message);
    else if (err.code === "bad_gateway" || err.code === "gateway_timeout") warnCorruptOnce(err.message, "upstream");
    else if (status >= 500 && err.code !== "still_writing" && err.code !== "busy") log(`api error ${err.code}`, err);
    return Response.json(errorBody(err.code, err.message, err.detail ?? err.message), { status, headers: err.headers });
  }
  if (isZodError(err)) {
    return Response.json(errorBody("bad_request", describeZodError(err)), { status: 400 });
  }
  const storage = storageFailureResponse(err);
  if (storage) return storage;
  log("unhandled error in API handler", err);
  return Response.json(errorBody("internal", "internal server error (see the server log)"), { status: 500 });
}

/**
 * The 503 `storage_unavailable` answer when `err` is the server's own storage failing
 * (`storageFailureMessage`), else null. Every request fails the same way until space is
 * freed: one log line per error, not a stack each. The proxy answers pages with it too.
 */
export function storageFailureResponse(err: unknown): Response | null {
  const message = storageFailureMessage(err);
  if (message === null) return null;
  warnCorruptOnce(`${message} (${err instanceof Error ? err.message : String(err)})`, "storage");
  return Response.json(errorBody("storage_unavailable", message), { status: 503, headers: { "retry-after": "30" } });
}

function defaultLog(msg: string, err: unknown): void {
  console.error(`[rlboard] ${msg}:`, err);
}
