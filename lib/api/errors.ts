/**
 * Typed API errors: one code → status table, one body shape, one mapper.
 *
 * Policy (shared with every client, see lib/client/fetcher.ts):
 *  - 400 bad_request: the caller sent something wrong (bad window, bad lanes, unknown metric);
 *    the message names the parameter and is safe to show to a person.
 *  - 401/403: no credentials / not allowed.
 *  - 404 not_found: unknown run, step, sample or file.
 *  - 503 still_writing: a dump is being written right now — retry in a moment.
 *  - 500 internal: a bug or a corrupt old file; the real message is logged, never sent.
 *  - 500 corrupt_file: an old run file that does not parse (a torn `.pt`); the message,
 *    which names the file relative to the run and the problem (never its bytes), is sent.
 * Body: {"error":{"code","message"}}. Handlers throw; only `toErrorResponse` maps.
 */
import { ZodError } from "zod";

export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  too_many_requests: 429,
  internal: 500,
  corrupt_file: 500,
  still_writing: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * Next bundles server code per entry (pages vs. route handlers), so one process can hold
 * two copies of this class while run stores are shared through globalThis. A global
 * symbol brand, not `instanceof`, identifies our errors across copies.
 */
const BRAND = Symbol.for("rlboard.ApiError");

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly [BRAND] = true;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ApiError";
    this.code = code;
  }
  static is(err: unknown): err is ApiError {
    return typeof err === "object" && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export const badRequest = (message: string) => new ApiError("bad_request", message);
export const notFound = (message: string) => new ApiError("not_found", message);
export const forbidden = (message: string) => new ApiError("forbidden", message);
export const stillWriting = (path: string) =>
  new ApiError("still_writing", `dump still being written: ${path}`);

export interface ErrorBody {
  error: { code: ErrorCode; message: string };
}

/** Human-readable one-liner for a zod failure: `t0: expected number, received "abc"`. */
export function describeZodError(err: ZodError): string {
  return err.issues
    .map((issue) => {
      const where = issue.path.length ? issue.path.join(".") : "query";
      return `${where}: ${issue.message}`;
    })
    .join("; ");
}

export function errorBody(code: ErrorCode, message: string): ErrorBody {
  return { error: { code, message } };
}

/** Map anything thrown by a handler to a Response. Unknown errors are logged and hidden. */
function isZodError(err: unknown): err is ZodError {
  return err instanceof ZodError || (err instanceof Error && err.name === "ZodError" && Array.isArray((err as ZodError).issues));
}

export function toErrorResponse(err: unknown, log: (msg: string, err: unknown) => void = defaultLog): Response {
  if (ApiError.is(err)) {
    const status = ERROR_STATUS[err.code] ?? 500;
    if (status >= 500 && err.code !== "still_writing") log(`api error ${err.code}`, err);
    return Response.json(errorBody(err.code, err.message), { status });
  }
  if (isZodError(err)) {
    return Response.json(errorBody("bad_request", describeZodError(err)), { status: 400 });
  }
  log("unhandled error in API handler", err);
  return Response.json(errorBody("internal", "internal server error (see the server log)"), { status: 500 });
}

function defaultLog(msg: string, err: unknown): void {
  console.error(`[rlboard] ${msg}:`, err);
}
