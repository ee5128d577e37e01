/**
 * `GET /api/export` (#17, docs/export.md "From the UI"): the run's offline report as an
 * attachment; options bounded by the zod contract (400 naming the bound); restricted runs
 * answer only to their readers (403, the trajectory guard); every exported sample's
 * conversation/tokens is written to the audit table.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Report } from "@/lib/contracts/report";
import { readInlineReport, REPORT_CSP } from "@/lib/export";
import { recentAudit, restrictRun } from "@/lib/server/auth/run-access";
import { getDb } from "@/lib/server/db";
import { copyRunWithOldMtimes, makeTmpDir } from "@/lib/store/telemetry/testing";
import { callJson, callRoute, setupTestServer, type TestServer } from "@/lib/testing/api";
import { MILES_DEMO_RUN } from "@/lib/testing/fixtures";
import { GET } from "./route";

let base: string;
let server: TestServer;

beforeAll(async () => {
  base = makeTmpDir("rlboard-export-route-");
  const run = copyRunWithOldMtimes(MILES_DEMO_RUN, path.join(base, "demo-run"));
  server = await setupTestServer({ dumpDetails: run });
});

afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

describe("GET /api/export", () => {
  test("401 without credentials", async () => {
    expect((await callRoute(GET, "/api/export")).status).toBe(401);
  });

  test("the HTML as an attachment; the export is audited per exported sample", async () => {
    const before = recentAudit(getDb(), 1000).length;
    const res = await callRoute(GET, "/api/export?steps=0-1&samples_per_step=2", { token: server.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="demo-run-report.html"');
    const html = await res.text();
    expect(html).toContain(`content="${REPORT_CSP}"`);
    const report = Report.parse(readInlineReport(html));
    expect(Object.keys(report.rollout)).toEqual(["0", "1"]);
    expect(report.options).toEqual({ steps: [0, 1], samples_per_step: 2, max_lanes: 64 });
    const rows = recentAudit(getDb(), 1000).slice(0, recentAudit(getDb(), 1000).length - before);
    const expected = Object.entries(report.samples).flatMap(([step, list]) =>
      list.flatMap((s) => [
        ...(s.messages ? [`tester ${step}/${s.sample_index} messages`] : []),
        ...(s.tokens ? [`tester ${step}/${s.sample_index} tokens`] : []),
      ]),
    );
    expect(expected.length).toBeGreaterThan(2);
    expect(rows.map((r) => `${r.user_name} ${r.step}/${r.sample} ${r.kind}`).sort()).toEqual(expected.sort());
    expect(rows.every((r) => r.run_id === "demo-run")).toBe(true);
  });

  test("format=json answers the report object", async () => {
    const r = await callJson<Report>(GET, "/api/export?format=json&samples_per_step=0", { token: server.token });
    expect(r.status).toBe(200);
    expect(Report.parse(r.body).samples).toEqual({ "0": [], "1": [], "2": [] });
    // the UI's form sends an empty steps field for "all steps"
    const all = await callJson<Report>(GET, "/api/export?format=json&samples_per_step=0&steps=&max_lanes=64", { token: server.token });
    expect(all.status).toBe(200);
    expect(Object.keys(all.body.rollout)).toEqual(["0", "1", "2"]);
    expect(all.body.options.steps).toBeNull();
  });

  test("options out of bounds are refused with the bound", async () => {
    const cases: [string, string][] = [
      ["samples_per_step=17", "samples_per_step=17: the maximum is 16"],
      ["max_lanes=0", "max_lanes=0: must be ≥ 1"],
      ["steps=3-1", "steps: A must not exceed B"],
      ["steps=x", "steps: expected N or A-B (train step ids, inclusive)"],
    ];
    for (const [q, msg] of cases) {
      const r = await callJson<{ error: { message: string } }>(GET, `/api/export?${q}`, { token: server.token });
      expect(r.status, q).toBe(400);
      expect(r.body.error.message, q).toBe(msg);
    }
    expect((await callRoute(GET, "/api/export?max_lanes=1.5", { token: server.token })).status).toBe(422);
  });

  test("a restricted run answers 403 to a member who may not read it, 200 to one listed", async () => {
    const outsider = await server.tokenFor("outsider");
    const reader = await server.tokenFor("reader");
    restrictRun(getDb(), "demo-run", ["reader"]);
    const denied = await callJson<{ error: { code: string; message: string } }>(GET, "/api/export", { token: outsider });
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain("ask an admin to add 'outsider' to run 'demo-run'");
    const ok = await callRoute(GET, "/api/export?samples_per_step=1&steps=2", { token: reader });
    expect(ok.status).toBe(200);
    expect(recentAudit(getDb(), 5).some((r) => r.user_name === "reader" && r.step === 2)).toBe(true);
  });
});
