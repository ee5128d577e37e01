import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { GetHealthResponse, GetRunsResponse } from "@/lib/contracts/runs";
import { callJson, setupTestServer, type TestServer } from "@/lib/testing/api";
import { GET as getRuns } from "@/app/api/runs/route";
import { GET as getHealth } from "@/app/api/health/route";

let server: TestServer;
let root: string;

beforeAll(async () => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-runs-")));
  for (const name of ["grpo-a", "grpo-b", "ppo/c"]) fs.mkdirSync(path.join(root, name, "dashboard"), { recursive: true });
  fs.writeFileSync(path.join(root, "grpo-a", "dashboard", "meta.json"), '{"run_name": "Qwen GRPO A", "start_ts": 5.0}');
  server = await setupTestServer({ runsRoots: [root] });
});

describe("GET /api/health", () => {
  it("answers without credentials", async () => {
    const res = await callJson(getHealth, "/api/health");
    expect(res.status).toBe(200);
    expect(GetHealthResponse.parse(res.body)).toEqual({ ok: true });
  });
});

describe("GET /api/runs", () => {
  it("401s without a token, with the error body shape", async () => {
    const res = await callJson(getRuns, "/api/runs");
    expect(res.status).toBe(401);
    const body = res.body as { error: { code: string; message: string } };
    expect(body.error.code).toBe("unauthorized");
    expect(body.error.message).toContain("Bearer");
  });

  it("401s with a wrong or malformed token", async () => {
    expect((await callJson(getRuns, "/api/runs", { token: "rlb_nope" })).status).toBe(401);
  });

  it("lists every run under the roots with a valid token", async () => {
    const res = await callJson(getRuns, "/api/runs", { token: server.token });
    expect(res.status).toBe(200);
    const body = GetRunsResponse.parse(res.body);
    expect(body.mode).toBe("multi");
    expect(body.runs.map((r) => r.id).sort()).toEqual(["grpo-a", "grpo-b", "ppo~c"]);
    expect(body.runs.find((r) => r.id === "grpo-a")).toMatchObject({ name: "Qwen GRPO A", first_ts: 5, path: "grpo-a" });
  });

  it("filters by q and rejects a bad refresh flag with FastAPI's 422 naming the parameter", async () => {
    const res = await callJson<{ runs: { id: string }[] }>(getRuns, "/api/runs?q=ppo", { token: server.token });
    expect(res.body.runs.map((r) => r.id)).toEqual(["ppo~c"]);
    const bad = await callJson<{ error: { code: string; message: string } }>(getRuns, "/api/runs?refresh=maybe", { token: server.token });
    expect(bad.status).toBe(422);
    expect(bad.body.error.message).toMatch(/^query\.refresh: /);
  });
});
