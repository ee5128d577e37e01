/**
 * Restricted runs (#11 item 3a/3b): every answer holding trajectory content or per-sample
 * lifecycle goes through one guard, and a symlinked alias of a restricted run is not a way
 * around it. Real route handlers over a copy of the fixture run in multi-run mode.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/server/db";
import { restrictRun, recentAudit } from "@/lib/server/auth/run-access";
import { callRoute, setupTestServer } from "@/lib/testing/api";
import { MILES_DEMO_RUN } from "@/lib/testing/fixtures";
import { copyRunWithOldMtimes } from "@/lib/store/telemetry/testing";
import { GET as trajectoriesGET } from "@/app/api/rollout/[rolloutId]/trajectories/route";
import { GET as messagesGET } from "@/app/api/rollout/[rolloutId]/sample/[sampleIndex]/messages/route";
import { GET as tokensGET } from "@/app/api/rollout/[rolloutId]/sample/[sampleIndex]/tokens/route";
import { GET as heatmapGET } from "@/app/api/timeline/heatmap/route";
import { GET as summaryGET } from "@/app/api/rollout/[rolloutId]/summary/route";
import { GET as runsGET } from "@/app/api/runs/route";

let member = "";
let allowed = "";
let admin = "";

beforeAll(async () => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-restrict-")));
  copyRunWithOldMtimes(MILES_DEMO_RUN, path.join(root, "secret-run"));
  fs.symlinkSync(path.join(root, "secret-run"), path.join(root, "alias"));
  const server = await setupTestServer({ runsRoots: [root] });
  member = server.token;
  allowed = await server.tokenFor("alice");
  admin = await server.tokenFor("root", "admin");
  restrictRun(getDb(), "secret-run", ["alice"]);
});

const ROUTES = [
  { name: "trajectories", handler: trajectoriesGET, url: "/api/rollout/0/trajectories", params: { rolloutId: "0" } },
  { name: "messages", handler: messagesGET, url: "/api/rollout/0/sample/0/messages", params: { rolloutId: "0", sampleIndex: "0" } },
  { name: "tokens", handler: tokensGET, url: "/api/rollout/0/sample/0/tokens", params: { rolloutId: "0", sampleIndex: "0" } },
  { name: "lifecycle heatmap", handler: heatmapGET, url: "/api/timeline/heatmap?metric=lifecycle&t0=1000000&t1=1000329&x_buckets=100", params: {} },
] as const;

const withRun = (url: string, run: string) => `${url}${url.includes("?") ? "&" : "?"}run=${run}`;

describe("restricted run", () => {
  for (const r of ROUTES) {
    it(`${r.name}: 403 for an unlisted member, 200 for a listed member and an admin`, async () => {
      const denied = await callRoute(r.handler, withRun(r.url, "secret-run"), { token: member, params: r.params });
      expect(denied.status).toBe(403);
      const body = (await denied.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("forbidden");
      expect(body.error.message).toContain("restricted");
      for (const token of [allowed, admin]) {
        const ok = await callRoute(r.handler, withRun(r.url, "secret-run"), { token, params: r.params });
        expect(ok.status).toBe(200);
      }
    });
  }

  it("metrics-level answers stay visible to members (summary, util heatmap)", async () => {
    expect((await callRoute(summaryGET, "/api/rollout/0/summary?run=secret-run", { token: member, params: { rolloutId: "0" } })).status).toBe(200);
    const util = await callRoute(heatmapGET, "/api/timeline/heatmap?metric=util&t0=1000000&t1=1000329&x_buckets=100&run=secret-run", { token: member });
    expect(util.status).toBe(200);
  });

  it("content opens are audited under the run's one id", async () => {
    await callRoute(messagesGET, "/api/rollout/0/sample/1/messages?run=secret-run", { token: allowed, params: { rolloutId: "0", sampleIndex: "1" } });
    const rows = recentAudit(getDb(), 50).filter((a) => a.sample === 1 && a.kind === "messages");
    expect(rows[0]).toMatchObject({ user_name: "alice", run_id: "secret-run", step: 0 });
  });

  it("a symlinked alias is not listed and does not answer", async () => {
    const list = (await (await callRoute(runsGET, "/api/runs", { token: member })).json()) as { runs: { id: string }[] };
    expect(list.runs.map((r) => r.id)).toEqual(["secret-run"]);
    for (const r of ROUTES) {
      const res = await callRoute(r.handler, withRun(r.url, "alias"), { token: member, params: r.params });
      expect(res.status, r.name).toBe(404);
    }
  });
});
