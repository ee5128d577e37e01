/**
 * Browser-side API access. Error bodies are `{"detail", "error":{code,message}}`
 * (docs/api.md "Errors"); the message shown in place is `error.message`, else a string
 * `detail` (a FastAPI-shaped body from elsewhere), else the first 422 item's `msg`.
 * 503 is the retryable status: `still_writing` (a dump is being written) and `busy`
 * (too many expensive queries at once; `Retry-After` says when).
 */
/**
 * Whether a failed multi-key request may be one bad key's fault, so that asking again key
 * by key isolates it: a 4xx other than 401 (no session), 403 (no access) and 404 (unknown
 * run) — those every key would get again.
 */
export function mayBeOneKeysFault(err: unknown): boolean {
  return err instanceof ApiClientError && err.status >= 400 && err.status < 500 && err.status !== 401 && err.status !== 403 && err.status !== 404;
}

export class ApiClientError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds from a `Retry-After` header, or null. */
    readonly retryAfterS: number | null = null,
  ) {
    super(message);
    this.name = "ApiClientError";
  }
  get retryable(): boolean {
    return this.status === 503;
  }
}

interface ErrorBodyLike {
  detail?: unknown;
  error?: { code?: unknown; message?: unknown };
}

/** The person-readable message of an error body, or null. */
export function errorMessageOf(body: unknown): string | null {
  if (typeof body !== "object" || body === null) return null;
  const b = body as ErrorBodyLike;
  if (typeof b.error?.message === "string" && b.error.message) return b.error.message;
  if (typeof b.detail === "string" && b.detail) return b.detail;
  if (Array.isArray(b.detail)) {
    const first = b.detail[0] as { msg?: unknown; loc?: unknown } | undefined;
    if (typeof first?.msg === "string") {
      const loc = Array.isArray(first.loc) ? first.loc.join(".") : "";
      return loc ? `${loc}: ${first.msg}` : first.msg;
    }
  }
  return null;
}

function retryAfter(res: Response): number | null {
  const v = res.headers.get("retry-after");
  if (v === null || !/^\d+$/.test(v.trim())) return null;
  return Number(v);
}

export async function errorFromResponse(res: Response): Promise<ApiClientError> {
  let code = "http_error";
  let message = `HTTP ${res.status}`;
  try {
    const body = (await res.json()) as ErrorBodyLike;
    message = errorMessageOf(body) ?? message;
    if (typeof body.error?.code === "string" && body.error.code) code = body.error.code;
  } catch {
    /* non-JSON error body: keep the status line */
  }
  if (res.status === 401 && typeof window !== "undefined") {
    // Session expired: go to the login page and come back here afterwards.
    const next = window.location.pathname + window.location.search;
    window.location.assign(`/login?next=${encodeURIComponent(next)}`);
  }
  return new ApiClientError(res.status, code, message, retryAfter(res));
}

export async function apiJson<T>(path: string, init?: RequestInit): Promise<T> {
  // No custom headers: a fetch with extra headers would not reuse a <link rel=preload>.
  const res = await fetch(path, init);
  if (!res.ok) throw await errorFromResponse(res);
  return (await res.json()) as T;
}

export async function apiBinary(path: string, init?: RequestInit): Promise<ArrayBuffer> {
  const res = await fetch(path, init);
  if (!res.ok) throw await errorFromResponse(res);
  return res.arrayBuffer();
}

/** What a view prints for a failed request: the API's message, else the error's. */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
