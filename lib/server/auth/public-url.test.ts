/** public-url.ts: one answer for "where do users reach us", forwarded headers only when trusted. */
import { describe, expect, it } from "vitest";
import { setServerEnvForTests, type ServerEnvironment } from "@/lib/env";
import { isCrossOrigin, isSecureRequest, publicOrigin } from "@/lib/server/auth/public-url";

const h = (o: Record<string, string>) => new Headers(o);
const at = (env: Partial<ServerEnvironment>) => setServerEnvForTests({ dataDir: "/nonexistent", ...env });
const proxied = h({ host: "127.0.0.1:7788", "x-forwarded-host": "dash.lab.test", "x-forwarded-proto": "https" });

describe("publicOrigin", () => {
  it("uses the public URL over any header", () => {
    at({ publicUrl: "https://dash.lab.test", trustProxy: true });
    expect(publicOrigin(h({ host: "x:1", "x-forwarded-host": "evil.test", "x-forwarded-proto": "http" }))).toBe("https://dash.lab.test");
  });

  it("without --trust-proxy ignores forwarded headers: Host over http", () => {
    at({});
    expect(publicOrigin(proxied)).toBe("http://127.0.0.1:7788");
    expect(isSecureRequest(proxied)).toBe(false);
  });

  it("with --trust-proxy takes the proxy's value (the last of a list), Host when it sent no X-Forwarded-Host", () => {
    at({ trustProxy: true });
    expect(publicOrigin(proxied)).toBe("https://dash.lab.test");
    expect(isSecureRequest(proxied)).toBe(true);
    expect(publicOrigin(h({ host: "dash.lab.test", "x-forwarded-host": "evil.test, dash.lab.test", "x-forwarded-proto": "http, https" }))).toBe(
      "https://dash.lab.test",
    );
    expect(publicOrigin(h({ host: "dash.lab.test" }))).toBe("http://dash.lab.test");
  });

  it("never builds a URL from a malformed host", () => {
    at({ trustProxy: true });
    expect(publicOrigin(h({ host: "ok.test", "x-forwarded-host": "evil.test/path@x" }))).toBe("http://ok.test");
    at({});
    expect(publicOrigin(h({ host: "a b" }))).toBe("http://localhost");
    expect(publicOrigin(h({ host: "[::1]:7788" }))).toBe("http://[::1]:7788");
  });

  it("RLBOARD_SECURE_COOKIES says users come over https", () => {
    at({ secureCookies: true });
    expect(publicOrigin(h({ host: "dash.lab.test" }))).toBe("https://dash.lab.test");
    expect(isSecureRequest(h({ host: "dash.lab.test" }))).toBe(true);
  });
});

describe("isCrossOrigin", () => {
  it("compares Origin with the public host", () => {
    at({ publicUrl: "https://dash.lab.test" });
    expect(isCrossOrigin(h({ host: "127.0.0.1:7788", origin: "https://dash.lab.test" }))).toBe(false);
    expect(isCrossOrigin(h({ host: "127.0.0.1:7788", origin: "https://evil.test" }))).toBe(true);
    at({});
    // A client-sent X-Forwarded-Host cannot make a foreign origin look like ours.
    expect(isCrossOrigin(h({ host: "127.0.0.1:7788", "x-forwarded-host": "evil.test", origin: "http://evil.test" }))).toBe(true);
    expect(isCrossOrigin(h({ host: "127.0.0.1:7788", origin: "http://127.0.0.1:7788" }))).toBe(false);
  });
});
