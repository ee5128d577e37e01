import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { GetCompareResponse } from "@/lib/contracts/compare";
import { restrictRun } from "@/lib/server/auth/run-access";
import { getDb } from "@/lib/server/db";
import { RunBuilder } from "@/lib/store/telemetry/testing";
import type { MetricsRecord } from "@/lib/store/telemetry/types";
import { callJson, setupTestServer, type TestServer } from "@/lib/testing/api";
import { GET } from "@/app/api/compare/route";

let server: TestServer;
let root: string;
const ARGS = { lr: 1e-6, rollout_batch_size: 32, wandb_team: "t", wandb_project: "p", wandb_run_id: "r1" };

const recs = (stepTime: number): MetricsRecord[] =>
  Array.from({ length: 5 }, (_, i) => ({
    ts: 1000 + i,
    step_key: "rollout/step",
    step: i,
    metrics: { "perf/step_time": stepTime + (i % 3), "rollout/raw_reward": 0.5, "rollout/step": i },
  }));

function write(name: string, args: Record<string, unknown> | null, stepTime: number) {
  const b = new RunBuilder(path.join(root, name));
  if (args) b.meta({ run_name: `Run ${name}`, start_ts: 1000, args });
  b.metrics(...recs(stepTime));
}

type Err = { error: { code: string; message: string } };

beforeAll(async () => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-compare-")));
  write("base", ARGS, 100);
  write("one", { ...ARGS, lr: 2e-6, wandb_run_id: "r2" }, 80);
  write("many", { ...ARGS, lr: 3e-6, rollout_batch_size: 64 }, 90);
  write("same", { ...ARGS, wandb_run_id: "r3" }, 100);
  write("noargs", null, 100);
  write("secret", ARGS, 100);
  server = await setupTestServer({ runsRoots: [root] });
  await server.tokenFor("alice");
  restrictRun(getDb(), "secret", ["alice"]);
});

const get = <T>(q: string, token: string | null = server.token) => callJson<T>(GET, `/api/compare${q}`, { token });

describe("GET /api/compare", () => {
  it("401 without credentials", async () => {
    expect((await get("?runs=base,one", null)).status).toBe(401);
  });

  it("one differing key: verdict single naming it, KPIs against the baseline", async () => {
    const res = await get<unknown>("?runs=base,one");
    expect(res.status).toBe(200);
    const body = GetCompareResponse.parse(res.body);
    expect(body.baseline).toBe("base");
    expect(body.runs.map((r) => [r.id, r.name])).toEqual([["base", "Run base"], ["one", "Run one"]]);
    expect(body.runs[0]!.wandb_url).toBe("https://wandb.ai/t/p/runs/r1");
    expect(body.verdict).toMatchObject({ kind: "single", keys: ["lr"] });
    expect(body.config_delta.map((d) => [d.key, d.values])).toEqual([
      ["lr", [1e-6, 2e-6]],
      ["wandb_run_id", ["r1", "r2"]],
    ]);
    const st = body.kpis.find((k) => k.key === "perf/step_time")!;
    expect(st).toMatchObject({ statistic: "median", values: [101, 81], delta: [null, -20] });
    expect(st.pct[1]).toBeCloseTo(-19.80198, 4);
    expect(body.movers[0]!.key).toBe("perf/step_time");
    expect(JSON.stringify(body)).not.toContain(root);
  });

  it("several keys, none, and a run without args", async () => {
    expect(GetCompareResponse.parse((await get("?runs=base,many")).body).verdict).toMatchObject({
      kind: "multiple",
      keys: ["lr", "rollout_batch_size"],
    });
    expect(GetCompareResponse.parse((await get("?runs=base,same")).body).verdict.kind).toBe("identical");
    const u = GetCompareResponse.parse((await get("?runs=base,noargs,one")).body);
    expect(u.verdict).toMatchObject({ kind: "unknown", missing_args: [1] });
    expect(u.runs.map((r) => r.id)).toEqual(["base", "noargs", "one"]);
    expect(u.kpis.find((k) => k.key === "perf/step_time")!.values).toEqual([101, 101, 81]);
  });

  it("400 naming runs for fewer than 2, more than 8, empty items and repeats", async () => {
    for (const q of ["", "?runs=", "?runs=base", "?runs=base,,one", "?runs=base,base", `?runs=${Array(9).fill("base").join(",")}`]) {
      const res = await get<Err>(q);
      expect(res.status, q).toBe(400);
      expect(res.body.error.message, q).toMatch(/^runs: /);
    }
    expect((await get<Err>(`?runs=${Array(9).fill("base").join(",")}`)).body.error.message).toContain("lists 9 run(s)");
  });

  it("404 naming the unknown run, with no absolute path", async () => {
    const res = await get<Err>("?runs=base,nope");
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain("'nope'");
    expect(JSON.stringify(res.body)).not.toContain(root);
  });

  it("403 for a restricted run the user may not read; its members and admins may compare it", async () => {
    const res = await get<Err>("?runs=base,secret");
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("'secret'");
    const alice = await server.tokenFor("alice2");
    restrictRun(getDb(), "secret", ["alice", "alice2"]);
    expect((await get("?runs=base,secret", alice)).status).toBe(200);
    const admin = await server.tokenFor("root", "admin");
    expect((await get("?runs=secret,base", admin)).status).toBe(200);
  });
});
