/**
 * Issue #11 item 3c at the route level: symlinks inside a run directory that point
 * outside it (a file to /etc/passwd, a dump to a private copy, the tokenizer folder, a
 * telemetry file) are never followed, and no answer echoes what they point to.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { GetMetaResponse } from "@/lib/contracts/telemetry";
import { copyRunWithOldMtimes, makeTmpDir } from "@/lib/store/telemetry/testing";
import { callRoute, setupTestServer, type TestServer } from "@/lib/testing/api";
import { MILES_DEMO_RUN } from "@/lib/testing/fixtures";
import { GET as metaGET } from "./meta/route";
import { GET as metricsGET } from "./metrics/route";
import { GET as summaryGET } from "./rollout/[rolloutId]/summary/route";
import { GET as messagesGET } from "./rollout/[rolloutId]/sample/[sampleIndex]/messages/route";
import { GET as tokensGET } from "./rollout/[rolloutId]/sample/[sampleIndex]/tokens/route";

const MARKER = "OUTSIDE-SECRET-MARKER";
let base: string;
let run: string;
let outside: string;
let server: TestServer;

beforeAll(async () => {
  base = makeTmpDir("rlboard-confine-");
  run = copyRunWithOldMtimes(MILES_DEMO_RUN, path.join(base, "run"));
  outside = path.join(base, "outside");
  fs.mkdirSync(path.join(outside, "tok"), { recursive: true });
  // Outside copies that WOULD parse if followed, each carrying the marker.
  fs.writeFileSync(
    path.join(outside, "private.jsonl"),
    `${JSON.stringify({ sample_index: 0, messages: [{ role: "user", content: MARKER }] })}\n`,
  );
  fs.copyFileSync(path.join(run, "rollout_data", "2.pt"), path.join(outside, "2.pt"));
  const tok = JSON.parse(fs.readFileSync(path.join(run, "tokenizer", "tokenizer.json"), "utf8")) as Record<string, unknown>;
  tok.added_tokens = Array.from({ length: 4096 }, (_, id) => ({ id, content: MARKER }));
  fs.writeFileSync(path.join(outside, "tok", "tokenizer.json"), JSON.stringify(tok));
  fs.writeFileSync(
    path.join(outside, "metrics.jsonl"),
    `${JSON.stringify({ ts: 1, step_key: "rollout/step", step: 0, metrics: { "leak/x": 4242.4242, [`${MARKER}/y`]: 1 } })}\n`,
  );
  const old = new Date("2026-01-01T00:00:00Z");
  for (const f of ["private.jsonl", "2.pt", "tok/tokenizer.json", "metrics.jsonl"]) fs.utimesSync(path.join(outside, f), old, old);

  const swap = (rel: string, target: string) => {
    fs.rmSync(path.join(run, rel), { recursive: true, force: true });
    fs.symlinkSync(target, path.join(run, rel));
  };
  swap("trajectory/0.jsonl", "/etc/passwd");
  swap("trajectory/1.jsonl", path.join(outside, "private.jsonl"));
  swap("rollout_data/2.pt", path.join(outside, "2.pt"));
  swap("tokenizer", path.join(outside, "tok"));
  swap("dashboard/metrics.jsonl", path.join(outside, "metrics.jsonl"));
  server = await setupTestServer({ dumpDetails: run });
});

afterAll(() => {
  fs.rmSync(base, { recursive: true, force: true });
});

async function get(
  handler: typeof metaGET,
  url: string,
  params: Record<string, string> = {},
): Promise<{ status: number; text: string; body: unknown }> {
  const res = await callRoute(handler, url, { token: server.token, params });
  const text = await res.text();
  // Nothing from outside the run — file bytes or the absolute target — ever comes back.
  expect(text).not.toContain(MARKER);
  expect(text).not.toContain("root:");
  expect(text).not.toContain(outside);
  return { status: res.status, text, body: JSON.parse(text) as unknown };
}

type ErrBody = { error: { code: string; message: string } };

describe("symlinks leaving the run directory are never followed", () => {
  test("trajectory/0.jsonl → /etc/passwd: messages refuse (403) naming the relative file only", async () => {
    const r = await get(messagesGET, "/api/rollout/0/sample/0/messages", { rolloutId: "0", sampleIndex: "0" });
    expect(r.status).toBe(403);
    expect((r.body as ErrBody).error.message).toBe("trajectory/0.jsonl points outside the run directory");
  });

  test("trajectory/1.jsonl → a parseable outside file: refused, its record is not served", async () => {
    const r = await get(messagesGET, "/api/rollout/1/sample/0/messages", { rolloutId: "1", sampleIndex: "0" });
    expect(r.status).toBe(403);
    expect((r.body as ErrBody).error.message).toBe("trajectory/1.jsonl points outside the run directory");
  });

  test("rollout_data/2.pt → an outside copy: not listed, and its summary is refused", async () => {
    const s = await get(summaryGET, "/api/rollout/2/summary", { rolloutId: "2" });
    expect(s.status).toBe(403);
    expect((s.body as ErrBody).error.message).toBe("rollout_data/2.pt points outside the run directory");
    const meta = await get(metaGET, "/api/meta");
    expect(meta.status).toBe(200);
    const parsed = GetMetaResponse.parse(meta.body);
    expect(parsed.rollout_ids.train).toEqual([0, 1]);
  });

  test("tokenizer/ → an outside folder: counts as absent (ids only), nothing decoded from it", async () => {
    const meta = GetMetaResponse.parse((await get(metaGET, "/api/meta")).body);
    expect(meta.capabilities.has_tokenizer).toBe(false);
    const t = await get(tokensGET, "/api/rollout/0/sample/0/tokens", { rolloutId: "0", sampleIndex: "0" });
    expect(t.status).toBe(200);
    expect((t.body as { token_text: unknown }).token_text).toBeNull();
    expect((t.body as { token_ids: number[] }).token_ids.length).toBeGreaterThan(0);
  });

  test("dashboard/metrics.jsonl → an outside file: the metrics stream counts as absent", async () => {
    const meta = GetMetaResponse.parse((await get(metaGET, "/api/meta")).body);
    expect(meta.capabilities.has_metrics).toBe(false);
    expect(meta.metric_keys.some((k) => k.startsWith("leak/"))).toBe(false);
    const m = await get(metricsGET, "/api/metrics?keys=leak/x");
    expect(m.status).toBe(200);
    expect(m.body).toEqual({ "leak/x": { x: [], y: [], ts: [] } });
    expect(m.text).not.toContain("4242");
  });
});
