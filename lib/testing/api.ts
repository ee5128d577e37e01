/**
 * Route-test harness: point the server modules at a fresh temp data dir and
 * run, create a member with an API token, and call exported route handlers with a real
 * `Request` — no HTTP server needed.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setServerEnvForTests, type ServerEnvironment } from "@/lib/env";
import { getDb } from "@/lib/server/db";
import { addUser, createToken, type Role } from "@/lib/server/auth/users";

export interface TestServer {
  dataDir: string;
  token: string;
  /** Extra user/token pairs by name. */
  tokenFor(name: string, role?: Role): Promise<string>;
}

export async function setupTestServer(env: Partial<ServerEnvironment> = {}): Promise<TestServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-data-"));
  setServerEnvForTests({ dataDir, ...env });
  const db = getDb();
  const tokenFor = async (name: string, role: Role = "member") => {
    await addUser(db, name, "password-123", role);
    return createToken(db, name);
  };
  const token = await tokenFor("tester", "member");
  return { dataDir, token, tokenFor };
}

type Handler = (req: Request, ctx: { params: Promise<Record<string, string | string[]>> }) => Promise<Response>;

export async function callRoute(
  handler: Handler,
  url: string,
  opts: { token?: string | null; params?: Record<string, string> } = {},
): Promise<Response> {
  const headers = new Headers();
  if (opts.token) headers.set("authorization", `Bearer ${opts.token}`);
  const req = new Request(new URL(url, "http://127.0.0.1"), { headers });
  return handler(req, { params: Promise.resolve(opts.params ?? {}) });
}

export async function callJson<T = unknown>(
  handler: Handler,
  url: string,
  opts: { token?: string | null; params?: Record<string, string> } = {},
): Promise<{ status: number; body: T }> {
  const res = await callRoute(handler, url, opts);
  return { status: res.status, body: (await res.json()) as T };
}
