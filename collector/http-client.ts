/**
 * The collector's outgoing HTTP (SGLang scrapes, `--gpu-only` pushes) on
 * node:http / node:https.
 *
 * Why not `fetch`: Node's fetch is undici, which on first use loads a second
 * HTTP stack and compiles a WebAssembly HTTP parser — about 35 MB of RSS
 * (measured on Node 20) in a daemon whose whole budget is 80 MB, while
 * node:http is already loaded for the ingest server. node:https (and with it
 * TLS) is only loaded when an https:// URL is actually used.
 *
 * Semantics kept from the fetch calls this replaces: one deadline covers
 * connect, headers and body (`timeoutMs`; the error is named
 * "TimeoutError", like `AbortSignal.timeout`'s), the body is decoded as
 * UTF-8, any status is returned (callers decide what is an error). Connections
 * are kept alive through Node's global agents. Redirects are not followed
 * (SGLang engines and routers do not redirect).
 */
import { request as httpRequest } from "node:http";
import type { IncomingMessage, OutgoingHttpHeaders } from "node:http";

export interface HttpResponse {
  status: number;
  /** 2xx */
  ok: boolean;
  text: string;
}

export interface HttpRequestOptions {
  method?: "GET" | "POST";
  headers?: OutgoingHttpHeaders;
  body?: string;
  timeoutMs: number;
}

export class HttpTimeoutError extends Error {
  override name = "TimeoutError";
}

type RequestFn = typeof httpRequest;
let httpsRequest: RequestFn | undefined;

async function requestFn(protocol: string): Promise<RequestFn> {
  if (protocol === "http:") return httpRequest;
  if (protocol === "https:") return (httpsRequest ??= (await import("node:https")).request);
  throw new Error(`unsupported protocol ${protocol}`);
}

export async function httpFetch(url: string, opts: HttpRequestOptions): Promise<HttpResponse> {
  const u = new URL(url);
  const send = await requestFn(u.protocol);
  const body = opts.body === undefined ? undefined : Buffer.from(opts.body, "utf8");
  return new Promise<HttpResponse>((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | undefined, res?: HttpResponse): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(res!);
    };
    const req = send(
      u,
      {
        method: opts.method ?? "GET",
        headers: { ...opts.headers, ...(body ? { "content-length": body.length } : {}) },
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const status = res.statusCode ?? 0;
          finish(undefined, { status, ok: status >= 200 && status < 300, text: Buffer.concat(chunks).toString("utf8") });
        });
        res.on("error", (e) => finish(e));
        res.on("close", () => {
          if (!res.complete) finish(new Error("connection closed before the response ended"));
        });
      },
    );
    const timer = setTimeout(() => {
      const e = new HttpTimeoutError(`timed out after ${opts.timeoutMs} ms`);
      finish(e);
      req.destroy(e);
    }, opts.timeoutMs);
    req.on("error", (e) => finish(e));
    req.end(body);
  });
}
