import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpTimeoutError, httpFetch } from "./http-client";

let server: Server;
let base: string;
const seen: { method: string; body: string; type: string | undefined }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", body: Buffer.concat(chunks).toString("utf8"), type: req.headers["content-type"] });
      if (req.url === "/hang") return;
      if (req.url === "/slow-body") {
        res.writeHead(200);
        res.write("partial");
        return; // never ends
      }
      if (req.url === "/cut") {
        res.writeHead(200, { "content-length": "100" });
        res.write("short");
        setTimeout(() => res.destroy(), 20);
        return;
      }
      if (req.url === "/fail") {
        res.writeHead(503).end("busy");
        return;
      }
      res.writeHead(200, { "content-type": "text/plain" }).end("héllo ✓ " + "x".repeat(100_000));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe("httpFetch", () => {
  it("GETs a UTF-8 body split over many chunks", async () => {
    const r = await httpFetch(`${base}/ok`, { timeoutMs: 5000 });
    expect(r.status).toBe(200);
    expect(r.ok).toBe(true);
    expect(r.text).toBe("héllo ✓ " + "x".repeat(100_000));
  });

  it("POSTs a body with its headers and returns non-2xx answers as they are", async () => {
    const r = await httpFetch(`${base}/fail`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"records":["é"]}', timeoutMs: 5000 });
    expect(r).toEqual({ status: 503, ok: false, text: "busy" });
    expect(seen.at(-1)).toEqual({ method: "POST", body: '{"records":["é"]}', type: "application/json" });
  });

  it("times out (TimeoutError) when the server never answers or never finishes the body", async () => {
    for (const path of ["/hang", "/slow-body"]) {
      const t0 = Date.now();
      const err = await httpFetch(`${base}${path}`, { timeoutMs: 300 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HttpTimeoutError);
      expect((err as Error).name).toBe("TimeoutError");
      expect(Date.now() - t0).toBeLessThan(3000);
    }
  });

  it("fails on a refused connection and on a response cut short", async () => {
    await expect(httpFetch("http://127.0.0.1:1/metrics", { timeoutMs: 2000 })).rejects.toThrow(/ECONNREFUSED/);
    await expect(httpFetch(`${base}/cut`, { timeoutMs: 2000 })).rejects.toThrow();
  });

  it("rejects protocols other than http and https", async () => {
    await expect(httpFetch("ftp://127.0.0.1/x", { timeoutMs: 1000 })).rejects.toThrow(/unsupported protocol ftp:/);
  });
});
