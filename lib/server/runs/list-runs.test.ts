import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { GetRunsResponse } from "@/lib/contracts/runs";
import { getDb } from "@/lib/server/db";
import { AnnotationError, allAnnotations, parseTags, setAnnotation } from "@/lib/server/runs/annotations";
import { RunBuilder } from "@/lib/store/telemetry/testing";
import { callJson, setupTestServer, type TestServer } from "@/lib/testing/api";
import { GET } from "@/app/api/runs/route";

let server: TestServer;
let root: string;

beforeAll(async () => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-runs-args-")));
  new RunBuilder(path.join(root, "a")).meta({ run_name: "A", args: { lr: 1e-6, optim: { beta2: 0.98 }, sizes: [1, 2], host: null } });
  new RunBuilder(path.join(root, "b")).meta({ run_name: "B", args: {} });
  new RunBuilder(path.join(root, "c"));
  server = await setupTestServer({ runsRoots: [root] });
});

const list = async () => GetRunsResponse.parse((await callJson(GET, "/api/runs", { token: server.token })).body).runs;

describe("/api/runs args, tags and notes (additive)", () => {
  it("args flattened to dotted paths, arrays as JSON text; null without a snapshot", async () => {
    const runs = await list();
    expect(runs.find((r) => r.id === "a")!.args).toEqual({ lr: 1e-6, "optim.beta2": 0.98, sizes: "[1,2]", host: null });
    expect(runs.find((r) => r.id === "b")!.args).toBeNull();
    expect(runs.find((r) => r.id === "c")!.args).toBeNull();
  });

  it("a changed meta.json is re-read", async () => {
    const f = path.join(root, "b", "dashboard", "meta.json");
    fs.writeFileSync(f, JSON.stringify({ run_name: "B", start_ts: 0, args: { lr: 3e-6, longer_key: "x" }, schema_version: 1 }));
    fs.utimesSync(f, new Date(), new Date(Date.now() + 5000));
    expect((await list()).find((r) => r.id === "b")!.args).toEqual({ lr: 3e-6, longer_key: "x" });
  });

  it("tags and notes come from SQLite; empty ones delete the row", async () => {
    const db = getDb();
    setAnnotation(db, "a", { tags: parseTags(" ablation, lr ,ablation,"), notes: "doubled lr" }, "tester");
    let a = (await list()).find((r) => r.id === "a")!;
    expect([a.tags, a.notes]).toEqual([["ablation", "lr"], "doubled lr"]);
    expect((await list()).find((r) => r.id === "c")).toMatchObject({ tags: [], notes: "" });
    setAnnotation(db, "a", { tags: [], notes: " " }, "tester");
    expect(allAnnotations(db).has("a")).toBe(false);
    a = (await list()).find((r) => r.id === "a")!;
    expect(a.tags).toEqual([]);
  });

  it("limits: too many or too long tags, too long notes", () => {
    expect(() => parseTags(Array.from({ length: 17 }, (_, i) => `t${i}`).join(","))).toThrow(AnnotationError);
    expect(() => parseTags("x".repeat(41))).toThrow(/longer than 40/);
    expect(() => setAnnotation(getDb(), "a", { tags: [], notes: "n".repeat(2001) }, "tester")).toThrow(/2000/);
  });
});
