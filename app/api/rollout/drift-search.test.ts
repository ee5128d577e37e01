import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { callJson, setupTestServer, type TestServer } from "@/lib/testing/api";
import { GetRolloutDriftResponse, GetRolloutSearchResponse } from "@/lib/contracts/drift";
import { writeDriftRun } from "@/lib/rollout/drift-test-run";
import { GET as driftGET } from "./[rolloutId]/drift/route";
import { GET as searchGET } from "./search/route";

let dir: string;
let server: TestServer;
type ErrBody = { error: { code: string; message: string } };

beforeAll(async () => {
  dir = await writeDriftRun();
  // Step 2 has a conversation sidecar: search reads it instead of the .pt strings.
  await fs.mkdir(path.join(dir, "trajectory"), { recursive: true });
  await fs.writeFile(
    path.join(dir, "trajectory", "2.jsonl"),
    [
      '{"sample_index":3,"group_index":0,"status":"completed","reward":1.0,"prompt":"p","messages":[{"role":"user","content":"Weather in Paris?"},{"role":"assistant","content":"Checking.","tool_calls":[{"function":{"name":"get_weather","arguments":"{\\"city\\": \\"Paris\\"}"}}]},{"role":"tool","content":"sunny"}]}',
      '{"sample_index":4,"group_index":0,"status":"completed","reward":0.0,"prompt":"p","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}',
      // 40 words and a "!": the trap of a backtracking pattern (below)
      JSON.stringify({ sample_index: 5, group_index: 1, status: "completed", reward: 0.0, prompt: "p", messages: [{ role: "assistant", content: "ab ".repeat(40) + "!" }] }),
    ].join("\n") + "\n",
  );
  server = await setupTestServer({ dumpDetails: dir });
});

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const drift = <T>(url: string, rolloutId: string) => callJson<T>(driftGET, url, { token: server.token, params: { rolloutId } });
const search = <T>(url: string) => callJson<T>(searchGET, url, { token: server.token });

describe("GET /api/rollout/{id}/drift", () => {
  test("answers the contract with bins, histogram and staleness", async () => {
    const r = await drift("/api/rollout/1/drift?by=version&clip_lo=0.9&clip_hi=1.1", "1");
    expect(r.status).toBe(200);
    const body = GetRolloutDriftResponse.parse(r.body);
    expect(body.params).toEqual({ by: "version", bins: 16, clip_lo: 0.9, clip_hi: 1.1, after_tool: 32 });
    expect(body.bins.map((b) => b.key)).toEqual(["0", "1"]);
    expect(body.tokens).toBe(10);
    expect(body.staleness.available).toBe(true);
    const byEngine = GetRolloutDriftResponse.parse((await drift("/api/rollout/1/drift?by=engine", "1")).body);
    expect(byEngine.bins).toHaveLength(3);
  });

  test("bad parameters → 400/422; unknown step → 404", async () => {
    expect((await drift("/api/rollout/1/drift?by=gpu", "1")).status).toBe(422);
    expect((await drift("/api/rollout/1/drift?bins=0", "1")).status).toBe(400);
    expect((await drift("/api/rollout/1/drift?clip_lo=1.5&clip_hi=1.2", "1")).status).toBe(400);
    const missing = await drift<ErrBody>("/api/rollout/9/drift", "9");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
  });
});

describe("GET /api/rollout/search", () => {
  test("plain text over a step range: .pt prompts/responses and sidecar conversations", async () => {
    const r = await search("/api/rollout/search?q=weather&steps=1-2");
    expect(r.status).toBe(200);
    const body = GetRolloutSearchResponse.parse(r.body);
    expect(body.steps).toEqual([1, 2]);
    // step 1 (.pt): 3 prompts "… about the weather" + sample 0 and 2 responses; step 2 (sidecar):
    // the user message and the tool call name of sample 3
    expect(body.total).toBe(3 + 2 + 2);
    const s3 = body.samples.find((s) => s.rollout_id === 2 && s.sample_index === 3)!;
    expect(s3.hits.map((h) => [h.field, h.message])).toEqual([
      ["prompt", 0],
      ["tool_call", 1],
    ]);
    const h = s3.hits[1]!;
    expect(h.snippet.slice(h.pre, h.pre + h.length).toLowerCase()).toBe("weather");
    expect(body.truncated).toBe(false);
  });

  test("regex, default step, invalid regex → 422 with the reason", async () => {
    const r = GetRolloutSearchResponse.parse((await search("/api/rollout/search?q=%5Cbsunny%5Cb&regex=1")).body);
    expect(r.steps).toEqual([2]);
    expect(r.samples.map((s) => s.sample_index)).toEqual([3]);
    const bad = await search<ErrBody>("/api/rollout/search?q=(unclosed&regex=1");
    expect(bad.status).toBe(422);
    expect(bad.body.error.message).toContain("invalid regular expression");
    // the same text without regex=1 is a literal search
    expect(GetRolloutSearchResponse.parse((await search("/api/rollout/search?q=(unclosed")).body).total).toBe(0);
    expect((await search("/api/rollout/search?q=x&steps=a-b")).status).toBe(400);
  });

  test("a pattern that backtracks without end answers at the time budget, truncated", async () => {
    // (\w+\s?)+$ on sample 5's 40 words and "!" would backtrack for hours, holding the
    // server's only thread; the search is stopped at its 2 s budget with what it found.
    const t = performance.now();
    const r = await search("/api/rollout/search?q=" + encodeURIComponent("(\\w+\\s?)+$") + "&regex=1");
    const ms = performance.now() - t;
    expect(r.status).toBe(200);
    const body = GetRolloutSearchResponse.parse(r.body);
    expect(body.truncated).toBe(true);
    expect(ms).toBeLessThan(4_000);
    // what came before the trap was searched: texts of samples 3 and 4 that end in a word,
    // and sample 5's prompt "p" — its message, the trap, has no hit
    expect(body.samples.map((s) => s.sample_index)).toEqual([3, 4, 5]);
    expect(body.samples[2]!.hits.map((h) => [h.field, h.message])).toEqual([["prompt", null]]);
  }, 15_000);
});
