/**
 * Browser-side API access. Errors carry the server's `{error:{code,message}}` so views
 * can show the message in place; 503 (`still_writing`) is the one retryable status.
 */
export class ApiClientError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiClientError";
  }
  get retryable(): boolean {
    return this.status === 503;
  }
}

async function toError(res: Response): Promise<ApiClientError> {
  let code = "http_error";
  let message = `HTTP ${res.status}`;
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    if (body.error?.message) message = body.error.message;
    if (body.error?.code) code = body.error.code;
  } catch {
    /* non-JSON error body: keep the status line */
  }
  if (res.status === 401 && typeof window !== "undefined") {
    // Session expired: go to the login page and come back here afterwards.
    const next = window.location.pathname + window.location.search;
    window.location.assign(`/login?next=${encodeURIComponent(next)}`);
  }
  return new ApiClientError(res.status, code, message);
}

export async function apiJson<T>(path: string, init?: RequestInit): Promise<T> {
  // No custom headers: a fetch with extra headers would not reuse a <link rel=preload>.
  const res = await fetch(path, init);
  if (!res.ok) throw await toError(res);
  return (await res.json()) as T;
}

export async function apiBinary(path: string, init?: RequestInit): Promise<ArrayBuffer> {
  const res = await fetch(path, init);
  if (!res.ok) throw await toError(res);
  return res.arrayBuffer();
}
