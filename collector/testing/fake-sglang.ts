/**
 * Test helper: node:http servers that answer like SGLang engines / the router,
 * serving the exposition fixtures from `fixtures/sglang`.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { SGLANG_FIXTURES } from "@/lib/testing/fixtures";

export { SGLANG_FIXTURES };

export function sglangFixture(name: string): string {
  return readFileSync(resolve(SGLANG_FIXTURES, name), "utf8");
}

export interface FakeEngine {
  url: string;
  /** Requests served so far, by path. */
  hits: string[];
  /** Replace the body served from now on. */
  setBody(body: string): void;
  /** Make the engine hang (never answer) or fail with a status. */
  setMode(mode: "ok" | "hang" | number): void;
  close(): Promise<void>;
}

/** An engine serving `body` at `path` (`/metrics` or `/engine_metrics`). */
export async function startFakeEngine(body: string, path = "/metrics"): Promise<FakeEngine> {
  let current = body;
  let mode: "ok" | "hang" | number = "ok";
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(req.url ?? "");
    if (mode === "hang") return; // never answers; the scraper must time out
    if (typeof mode === "number") {
      res.writeHead(mode).end("error");
      return;
    }
    if (req.url !== path) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(current);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    setBody: (b) => {
      current = b;
    },
    setMode: (m) => {
      mode = m;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
