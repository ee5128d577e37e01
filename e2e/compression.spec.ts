/**
 * Response compression as `serve --compress` sets it (docs/deploy.md "Compression"): the
 * suite's server is on 127.0.0.1 with the default (`auto`), so it sends pages, static
 * files and JSON answers as they are, even to a client that accepts gzip; a server started
 * through the real CLI with `--compress on` gzips them; a bad value stops the CLI before
 * anything starts.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { expect, test } from "@playwright/test";
import { freePort } from "@/lib/testing/net";
import { E2E } from "./env";

test.use({ storageState: { cookies: [], origins: [] } });

const GZIP = { "accept-encoding": "gzip" };

/** Status, Content-Encoding and the body's bytes as sent (fetch would decode them). */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; encoding: string | null; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { ...GZIP, ...headers } }, (res) => {
        const parts: Buffer[] = [];
        res.on("data", (d: Buffer) => parts.push(d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, encoding: res.headers["content-encoding"] ?? null, body: Buffer.concat(parts) }));
        res.on("error", reject);
      })
      .on("error", reject);
  });
}

/** The first script chunk the login page loads. */
async function staticChunk(base: string): Promise<string> {
  const html = await (await fetch(`${base}/login`)).text();
  const src = /<script[^>]+src="(\/_next\/static\/[^"]+\.js)"/.exec(html)?.[1];
  expect(src, "the login page loads a script chunk").toBeTruthy();
  return src!;
}

test("a server on a loopback address sends answers uncompressed to a client that accepts gzip", async () => {
  const login = await get(`${E2E.baseURL}/login`);
  expect(login.status).toBe(200);
  expect(login.encoding).toBeNull();
  expect(login.body.toString("utf8")).toContain("<html");
  expect(login.body.length).toBeGreaterThan(1024); // above Next's 1 KB threshold: would be gzipped if on

  const js = await get(E2E.baseURL + (await staticChunk(E2E.baseURL)));
  expect(js.status).toBe(200);
  expect(js.encoding).toBeNull();
  expect(js.body.length).toBeGreaterThan(1024);

  const runs = await get(`${E2E.baseURL}/api/runs`, { authorization: `Bearer ${E2E.token}` });
  expect(runs.status).toBe(200);
  expect(runs.encoding).toBeNull();
  expect(runs.body.length).toBeGreaterThan(1024);
  expect((JSON.parse(runs.body.toString("utf8")) as { runs: unknown[] }).runs.length).toBeGreaterThan(0);
});

const SERVE = ["--import", "tsx", path.join("cli", "serve.ts")];

test("serve --compress on gzips pages, static files and JSON answers on a loopback address", async () => {
  test.setTimeout(120_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-e2e-compress-"));
  const port = await freePort();
  const child = spawn(process.execPath, [...SERVE, "--runs-root", E2E.runsRoot, "--data-dir", dataDir, "--port", String(port), "--compress", "on"], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const base = `http://127.0.0.1:${port}`;
  try {
    await expect
      .poll(async () => (await fetch(`${base}/api/health`).catch(() => null))?.status ?? 0, { timeout: 90_000 })
      .toBe(200)
      .catch((e: Error) => {
        throw new Error(`serve --compress on did not come up: ${e.message}\n${out}`);
      });
    const login = await get(`${base}/login`);
    expect(login.status).toBe(200);
    expect(login.encoding).toBe("gzip");
    expect(zlib.gunzipSync(login.body).toString("utf8")).toContain("<html");

    const js = await get(base + (await staticChunk(base)));
    expect(js.encoding).toBe("gzip");
    expect(zlib.gunzipSync(js.body).length).toBeGreaterThan(js.body.length);

    const users = spawnSync(process.execPath, ["--import", "tsx", path.join("cli", "users.ts"), "token", "admin", "--data-dir", dataDir], { encoding: "utf8" });
    expect(users.status, users.stderr).toBe(0);
    const token = users.stdout.trim().split("\n").pop()!;
    const runs = await get(`${base}/api/runs`, { authorization: `Bearer ${token}` });
    expect(runs.status).toBe(200);
    expect(runs.encoding).toBe("gzip");
    expect((JSON.parse(zlib.gunzipSync(runs.body).toString("utf8")) as { runs: unknown[] }).runs.length).toBeGreaterThan(0);
    // a client that does not accept gzip still gets plain text
    const plain = await get(`${base}/api/runs`, { authorization: `Bearer ${token}`, "accept-encoding": "identity" });
    expect(plain.encoding).toBeNull();
    expect(plain.body.equals(zlib.gunzipSync(runs.body))).toBe(true);
  } finally {
    if (child.exitCode === null) process.kill(-child.pid!, "SIGTERM");
    await new Promise((r) => (child.exitCode === null ? child.once("exit", r) : r(null)));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test("serve --compress with a bad value stops with one clear line", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-e2e-compress-"));
  try {
    const r = spawnSync(process.execPath, [...SERVE, "--runs-root", E2E.runsRoot, "--data-dir", dataDir, "--compress", "fast"], { encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("--compress must be auto, on or off, got 'fast'");
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
