/**
 * Typed API errors: one code → status table, one body shape, one mapper (docs/api.md
 * "Errors").
 *
 * Policy (shared with every client, see lib/client/fetcher.ts):
 *  - 400 bad_request: the request parsed but its values are wrong (bad window, bad lanes,
 *    unknown metric, a size over its maximum); the message names the parameter and is safe
 *    to show to a person. The reference server raises these in its handlers.
 *  - 422 unprocessable: a parameter is missing or its string does not parse as the type
 *    the reference declares (int, float, bool) — FastAPI's request validation.
 *  - 401/403: no credentials / not allowed.
 *  - 404 not_found: unknown run, step, sample, file or API path (messages never carry an
 *    absolute path).
 *  - 405 method_not_allowed: a method the route does not answer (every route but sign-in
 *    answers GET, HEAD and OPTIONS only); the `Allow` header lists what it answers.
 *  - 503 still_writing: a dump is being written right now — retry in a moment.
 *  - 503 busy: too many expensive queries at once — retry after `Retry-After` seconds.
 *  - 503 storage_unavailable: the server's own storage failed (its database or a file it
 *    reads: a full disk, an I/O error, a read-only mount); the message names the error
 *    code and what the operator can do, never a path.
 *  - 500 internal: a bug or a corrupt old file; the real message is logged, never sent.
 *  - 500 corrupt_file: an old run file that does not parse (a torn `.pt`); the message,
 *    which names the file relative to the run and the problem (never its bytes), is sent.
 *  - 502 bad_gateway / 504 gateway_timeout: the run's Prometheus (`serve --prometheus`) is
 *    down, failed, rejected the query or did not answer in time; the message names the
 *    Prometheus URL and what happened (lib/prometheus/client.ts).
 *
 * Body: FastAPI's `{"detail": …}` (a string, or for 422 the list of validation items)
 * plus rlboard's `{"error":{"code","message"}}`. Handlers throw; only `toErrorResponse`
 * (lib/api/errors.ts, the HTTP side) maps.
 *
 * This module is a contract, not HTTP: the stores and domain layers throw these errors
 * without importing lib/api (enforced by eslint.config.mjs).
 */
import type { ZodError } from "zod";

export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unprocessable: 422,
  too_many_requests: 429,
  internal: 500,
  corrupt_file: 500,
  /** An upstream the server reads for a run (its Prometheus) failed or sent nonsense. */
  bad_gateway: 502,
  still_writing: 503,
  busy: 503,
  /** The server's own storage failed: its disk is full, an I/O error, a read-only mount. */
  storage_unavailable: 503,
  /** That upstream did not answer within its timeout. */
  gateway_timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** One item of a 422 `detail` list, exactly as FastAPI (pydantic v2) writes it. */
export interface ValidationItem {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

/**
 * Next bundles server code per entry (pages vs. route handlers), so one process can hold
 * two copies of this class while run stores are shared through globalThis. A global
 * symbol brand, not `instanceof`, identifies our errors across copies.
 */
const BRAND = Symbol.for("rlboard.ApiError");

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly [BRAND] = true;
  /** FastAPI's `detail` when it is not simply the message (the 422 item list). */
  readonly detail: string | ValidationItem[] | undefined;
  /** Extra response headers (`Retry-After` on a busy 503). */
  readonly headers: Record<string, string> | undefined;
  constructor(
    code: ErrorCode,
    message: string,
    options?: { cause?: unknown; detail?: string | ValidationItem[]; headers?: Record<string, string> },
  ) {
    super(message, options);
    this.name = "ApiError";
    this.code = code;
    this.detail = options?.detail;
    this.headers = options?.headers;
  }
  static is(err: unknown): err is ApiError {
    return typeof err === "object" && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/**
 * Error codes of the server's own storage failing — SQLite's (better-sqlite3 names them)
 * and the file system's — by what an operator is told: a disk filled, an I/O error, or
 * storage that cannot be written. Nothing a request did, and nothing a retry alone fixes.
 */
const STORAGE_FAILURES: readonly [RegExp, string][] = [
  [/^(SQLITE_FULL|ENOSPC|EDQUOT)$/, "its disk is full"],
  [/^(SQLITE_IOERR\w*|EIO)$/, "disk I/O error"],
  [/^(SQLITE_CANTOPEN\w*|SQLITE_READONLY\w*|EROFS)$/, "its storage cannot be written"],
];

/**
 * What to tell a person when `err` — or the error it wraps (`cause`; Auth.js puts a
 * sign-in's error at `cause.err`) — is the server's own storage failing: its code, what it
 * means, what to do; never a path. Null for anything else.
 */
export function storageFailureMessage(err: unknown): string | null {
  const inner = (e: object): unknown => (e as { cause?: unknown }).cause ?? (e as { err?: unknown }).err;
  for (let e = err, depth = 0; e !== null && typeof e === "object" && depth < 4; e = inner(e), depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code !== "string") continue;
    for (const [re, why] of STORAGE_FAILURES)
      if (re.test(code)) return `the server cannot use its storage (${code}: ${why}): free disk space or check the disk on the server, then retry`;
  }
  return null;
}

export const badRequest = (message: string) => new ApiError("bad_request", message);
export const notFound = (message: string) => new ApiError("not_found", message);
export const forbidden = (message: string) => new ApiError("forbidden", message);
export const stillWriting = (path: string) =>
  new ApiError("still_writing", `dump still being written: ${path}`);
export const busy = (message: string, retryAfterS = 1) =>
  new ApiError("busy", message, { headers: { "retry-after": String(retryAfterS) } });

/** A 422: `items` become the `detail` list; the message joins them for people. */
export function unprocessable(items: ValidationItem[]): ApiError {
  const message = items.map((i) => `${i.loc.join(".")}: ${i.msg}`).join("; ");
  return new ApiError("unprocessable", message, { detail: items });
}

export interface ErrorBody {
  detail: string | ValidationItem[];
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

export function errorBody(code: ErrorCode, message: string, detail: string | ValidationItem[] = message): ErrorBody {
  return { detail, error: { code, message } };
}

/**
 * A `.pt` (or sidecar) that fails to parse and is not fresh: a 500 `corrupt_file` naming
 * the file (relative to the run directory) and what is wrong, e.g.
 * `rollout_data/3.pt: truncated zip (…)`. The detail comes from the reader, whose messages
 * describe structure, never bytes (docs/api.md 1.9).
 */
export function corruptFile(rel: string, detail: string, cause?: unknown): ApiError {
  const err = new ApiError("corrupt_file", `${rel}: ${detail}`, cause === undefined ? undefined : { cause });
  CORRUPT.set(err, { file: rel, reason: detail });
  return err;
}

const CORRUPT = new WeakMap<object, { file: string; reason: string }>();

/** The file and reason of a `corruptFile` error (null for anything else). */
export function corruptInfo(err: unknown): { file: string; reason: string } | null {
  return typeof err === "object" && err !== null ? (CORRUPT.get(err) ?? null) : null;
}
