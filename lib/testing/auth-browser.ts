/**
 * A browser behind a reverse proxy, for driving rlboard's Auth.js route handlers
 * (app/api/auth/[...nextauth]/route.ts) with real Requests: a cookie jar fed by
 * Set-Cookie, and requests shaped the way Next's server hands them to a route handler —
 * the URL is Next's own (`<proto>://<bind address>:<port><path>`, proto https when
 * X-Forwarded-Proto says so), the Host header is what the proxy sent, plus the proxy's
 * forwarded headers.
 */
import { NextRequest } from "next/server";

export interface ProxyShape {
  /** Where the server listens (the URL Next builds for route handlers). */
  bind: string;
  /** Host header the proxy passes (nginx without `proxy_set_header Host`: the upstream). */
  host: string;
  /** X-Forwarded-* headers the proxy (or a client) adds. */
  forwarded?: Record<string, string>;
}

export class ProxiedBrowser {
  readonly jar = new Map<string, string>();

  constructor(private readonly shape: ProxyShape) {}

  cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  /** The request the route handler receives for `pathAndQuery` (a path or a public URL). */
  request(pathAndQuery: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): NextRequest {
    const target = new URL(pathAndQuery, "http://placeholder");
    const proto = (this.shape.forwarded?.["x-forwarded-proto"] ?? "").includes("https") ? "https" : "http";
    const url = `${proto}://${this.shape.bind}${target.pathname}${target.search}`;
    const headers = new Headers({ host: this.shape.host, ...this.shape.forwarded, ...init.headers });
    if (this.jar.size) headers.set("cookie", this.cookieHeader());
    let body: string | undefined;
    if (init.form) {
      headers.set("content-type", "application/x-www-form-urlencoded");
      body = new URLSearchParams(init.form).toString();
    }
    return new NextRequest(url, { method: init.method ?? (body ? "POST" : "GET"), headers, body });
  }

  /** Keep the response's cookies (a Max-Age=0 / past Expires cookie is deleted). */
  absorb(res: Response): Response {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => {
        const [k, v] = a.trim().split("=");
        if (k!.toLowerCase() === "max-age") return Number(v) <= 0;
        if (k!.toLowerCase() === "expires") return Date.parse(v ?? "") <= Date.now();
        return false;
      });
      if (expired || !value) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return res;
  }

  /** Names of the cookies a response set, with their attributes (for Secure checks). */
  static setCookies(res: Response): { name: string; attrs: string[] }[] {
    return res.headers.getSetCookie().map((line) => {
      const [pair, ...attrs] = line.split(";");
      return { name: pair!.slice(0, pair!.indexOf("=")).trim(), attrs: attrs.map((a) => a.trim().toLowerCase()) };
    });
  }
}
