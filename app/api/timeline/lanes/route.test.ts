import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { GetTimelineLanesResponse } from "@/lib/contracts/timeline-lanes";
import { RunBuilder } from "@/lib/store/telemetry/testing";
import { callJson, setupTestServer, type TestServer } from "@/lib/testing/api";
import { GET } from "./route";

let b: RunBuilder;
let server: TestServer;

beforeAll(async () => {
  b = new RunBuilder()
    .meta({ run_name: "lanes", start_ts: 1000, args: {} })
    .laneCatalog({
      "n1:0": { ranks: [0], roles: ["train", "rollout"], engine_addrs: ["http://n1:15000"] },
      "n1:1": { ranks: [1], roles: ["train"] },
      "n2:0": { ranks: [], roles: ["rollout"], engine_addrs: ["http://n2:15001"] },
    })
    .gpu({ ts: 1000, node: "n1", gpu: 0, util: 1, mem_mb: 1, power_w: 1 });
  server = await setupTestServer({ dumpDetails: b.runDir });
});
afterAll(() => fs.rmSync(b.runDir, { recursive: true, force: true }));

const ask = (sel: string | null) =>
  callJson<unknown>(GET, `/api/timeline/lanes${sel === null ? "" : `?lanes=${encodeURIComponent(sel)}`}`, { token: server.token });

describe("GET /api/timeline/lanes", () => {
  test("no selection keeps every lane", async () => {
    const { status, body } = await ask(null);
    expect(status).toBe(200);
    const r = GetTimelineLanesResponse.parse(body);
    expect(r).toEqual({
      lanes: null,
      all: true,
      selected: [
        { key: "n1:0", node: "n1", gpu: 0, index: 0, roles: ["train", "rollout"] },
        { key: "n1:1", node: "n1", gpu: 1, index: 1, roles: ["train"] },
        { key: "n2:0", node: "n2", gpu: 0, index: 2, roles: ["rollout"] },
      ],
      unknown: [],
      total: 3,
    });
  });

  test.each([
    ["rank:1", ["n1:1"], []],
    ["role:rollout", ["n1:0", "n2:0"], []],
    ["engine:15001", ["n2:0"], []],
    ["g:0,every:2", ["n1:0", "n2:0"], []],
    ["gpu:n9:4,node:n2", ["n2:0"], ["n9:4"]],
    ["g:1-0", [], []],
  ])("%s", async (sel, keys, unknown) => {
    const { status, body } = await ask(sel);
    expect(status).toBe(200);
    const r = GetTimelineLanesResponse.parse(body);
    expect(r.all).toBe(false);
    expect(r.selected.map((l) => l.key)).toEqual(keys);
    expect(r.unknown).toEqual(unknown);
  });

  test("a bad selection is a 400 with the grammar's message", async () => {
    const { status, body } = await ask("role:critic");
    expect(status).toBe(400);
    expect(body).toMatchObject({ detail: "bad lane selector 'role:critic': role must be train or rollout" });
  });
});
