import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ageFiles, fullValues, makeRunDir, writeRollout, writeTrainShard } from "@/lib/store/dumps/test-fixtures";
import { callJson, setupTestServer, type TestServer } from "@/lib/testing/api";
import {
  GetRolloutGroupsResponse,
  GetRolloutSummaryResponse,
  GetRolloutTrajectoriesResponse,
  GetSampleMessagesResponse,
  GetSampleTokensResponse,
} from "@/lib/contracts/rollout";
import { GET as summaryGET } from "./[rolloutId]/summary/route";
import { GET as groupsGET } from "./[rolloutId]/groups/route";
import { GET as trajectoriesGET } from "./[rolloutId]/trajectories/route";
import { GET as messagesGET } from "./[rolloutId]/sample/[sampleIndex]/messages/route";
import { GET as tokensGET } from "./[rolloutId]/sample/[sampleIndex]/tokens/route";

let dir: string;
let server: TestServer;
type ErrBody = { error: { code: string; message: string } };

beforeAll(async () => {
  dir = await makeRunDir();
  const s0 = { index: 0, response_length: 1, group_index: 0 };
  const s1 = { index: 1, response_length: 4, group_index: 0, rollout_log_probs: [-0.5, -0.25, -1, -2] };
  await writeRollout(dir, 0, [s0, s1]);
  await writeTrainShard(dir, 0, {
    rank: 0,
    rows: [
      { sample: s0, values: fullValues(s0, 1) },
      { sample: s1, values: fullValues(s1, 2), loss_mask: [1, 1, 0, 1] },
    ],
    cp: { rank: 0, size: 1 },
    raw_reward: [1, 0],
  });
  await writeRollout(dir, 0, [s0], { evaluation: true });
  await fs.mkdir(path.join(dir, "trajectory"));
  await fs.writeFile(path.join(dir, "trajectory", "0.jsonl"), '{"sample_index":1,"group_index":0,"status":"completed","reward":NaN,"prompt":"p","messages":[{"role":"user","content":"hi"}]}\n');
  await ageFiles(dir);
  await fs.mkdir(path.join(dir, "rollout_data"), { recursive: true });
  await fs.writeFile(path.join(dir, "rollout_data", "5.pt"), "PK\u0003\u0004 torn"); // fresh and broken
  server = await setupTestServer({ dumpDetails: dir });
});

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const call = <T>(handler: typeof summaryGET, url: string, params: Record<string, string>) =>
  callJson<T>(handler, url, { token: server.token, params });

describe("GET /api/rollout/{rolloutId}/summary and /groups", () => {
  test("happy path: the response matches the contract, NaN statistics are null", async () => {
    const { status, body } = await call(summaryGET, "/api/rollout/0/summary", { rolloutId: "0" });
    expect(status).toBe(200);
    const parsed = GetRolloutSummaryResponse.parse(body);
    expect(parsed.rows.map((r) => r.raw_reward)).toEqual([1, 0]);
    expect(parsed.rows[0]!.adv_std).toBeNull(); // one token ⇒ NaN ⇒ null
    const g = await call(groupsGET, "/api/rollout/0/groups?eval=YES", { rolloutId: "0" });
    expect(g.status).toBe(200);
    expect(GetRolloutGroupsResponse.parse(g.body).evaluation).toBe(true);
  });

  test("invalid input → 400; missing or negative step → 404", async () => {
    expect((await call(summaryGET, "/api/rollout/abc/summary", { rolloutId: "abc" })).status).toBe(422);
    expect((await call(summaryGET, "/api/rollout/0/summary?eval=maybe", { rolloutId: "0" })).status).toBe(422);
    const missing = await call<ErrBody>(summaryGET, "/api/rollout/9/summary", { rolloutId: "9" });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    expect((await call(summaryGET, "/api/rollout/-1/summary", { rolloutId: "-1" })).status).toBe(404);
  });

  test("a rollout dump still being written → 503 still_writing", async () => {
    const r = await call<ErrBody>(summaryGET, "/api/rollout/5/summary", { rolloutId: "5" });
    expect(r.status).toBe(503);
    expect(r.body.error).toEqual({ code: "still_writing", message: "dump still being written: rollout_data/5.pt" });
  });
});

describe("GET /api/rollout/{rolloutId}/sample/{sampleIndex}/tokens", () => {
  test("window, loss-masked positions as null, contract", async () => {
    const { status, body } = await call(tokensGET, "/api/rollout/0/sample/1/tokens?start=4&end=7", { rolloutId: "0", sampleIndex: "1" });
    expect(status).toBe(200);
    const t = GetSampleTokensResponse.parse(body);
    expect(t).toMatchObject({ total_len: 7, prompt_len: 3, start: 4, end: 7, response_offset: 0, loss_mask: [1, 0, 1] });
    expect(t.token_ids).toHaveLength(3);
    expect(t.rollout_log_probs).toEqual([-0.25, null, -2]);
    expect(t.train_log_probs?.[1]).toBeNull();
  });

  test("bad bounds → 400, unknown sample → 404", async () => {
    const p = { rolloutId: "0", sampleIndex: "1" };
    expect((await call(tokensGET, "/api/rollout/0/sample/1/tokens?start=1.5", p)).status).toBe(422);
    const empty = await call<ErrBody>(tokensGET, "/api/rollout/0/sample/1/tokens?start=6&end=2", p);
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toBe("empty token range [6, 2) for total_len=7");
    expect((await call(tokensGET, "/api/rollout/0/sample/7/tokens", { rolloutId: "0", sampleIndex: "7" })).status).toBe(404);
    expect((await call(tokensGET, "/api/rollout/0/sample/x/tokens", { rolloutId: "0", sampleIndex: "x" })).status).toBe(422);
  });
});

describe("GET /api/rollout/{rolloutId}/sample/{sampleIndex}/messages", () => {
  test("the sidecar row comes back unchanged (NaN → null); no conversation → 404", async () => {
    const ok = await call(messagesGET, "/api/rollout/0/sample/1/messages", { rolloutId: "0", sampleIndex: "1" });
    expect(ok.status).toBe(200);
    expect(GetSampleMessagesResponse.parse(ok.body)).toMatchObject({ sample_index: 1, reward: null, prompt: "p" });
    expect((await call(messagesGET, "/api/rollout/0/sample/0/messages", { rolloutId: "0", sampleIndex: "0" })).status).toBe(404);
    expect((await call(messagesGET, "/api/rollout/0/sample/1/messages?eval=1", { rolloutId: "0", sampleIndex: "1" })).status).toBe(404);
  });
});

describe("GET /api/rollout/{rolloutId}/trajectories", () => {
  test("a run without telemetry has no lanes and no consume time", async () => {
    const { status, body } = await call(trajectoriesGET, "/api/rollout/0/trajectories", { rolloutId: "0" });
    expect(status).toBe(200);
    expect(GetRolloutTrajectoriesResponse.parse(body)).toEqual({ lanes: [], consume_ts: null, t0: null });
    expect((await call(trajectoriesGET, "/api/rollout/0/trajectories?sample_index=z", { rolloutId: "0" })).status).toBe(422);
    // An explicit sample index needs no dump at all.
    expect((await call(trajectoriesGET, "/api/rollout/9/trajectories?sample_index=3", { rolloutId: "9" })).status).toBe(200);
    expect((await call(trajectoriesGET, "/api/rollout/9/trajectories", { rolloutId: "9" })).status).toBe(404);
  });
});
