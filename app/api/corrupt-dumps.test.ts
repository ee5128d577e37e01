/**
 * Issue #11 item 16 at the route level, on a copy of fixtures/miles-demo with real
 * corrupted files: a corrupt `.pt` answers a JSON error naming the file; one bad step
 * never breaks the `dump/*` aggregates of the others (and /api/meta lists it); a corrupt
 * parquet mirror falls back to the intact `.pt`; a torn sidecar line fails only its sample.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { jsonSafeStringify } from "@/lib/api/json";
import { GetMetaResponse } from "@/lib/contracts/telemetry";
import { openDumpReader } from "@/lib/store/dumps";
import { ageFiles } from "@/lib/store/dumps/test-fixtures";
import { copyRunWithOldMtimes, makeTmpDir } from "@/lib/store/telemetry/testing";
import { callJson, setupTestServer, type TestServer } from "@/lib/testing/api";
import { MILES_DEMO_RUN } from "@/lib/testing/fixtures";
import { writeZip } from "@/lib/store/pt/write";
import { GET as metaGET } from "./meta/route";
import { GET as metricsGET } from "./metrics/route";
import { GET as summaryGET } from "./rollout/[rolloutId]/summary/route";
import { GET as advisoryGET } from "./advisory/route";
import { GET as messagesGET } from "./rollout/[rolloutId]/sample/[sampleIndex]/messages/route";
import { GET as tokensGET } from "./rollout/[rolloutId]/sample/[sampleIndex]/tokens/route";

let base: string;
let run: string;
let server: TestServer;
type ErrBody = { error: { code: string; message: string } };
const TORN = "TORN-LINE-CONTENT";

beforeAll(async () => {
  base = makeTmpDir("rlboard-corrupt-");
  run = copyRunWithOldMtimes(MILES_DEMO_RUN, path.join(base, "run"));
  const p = (rel: string) => path.join(run, rel);
  // Step 1: the rollout dump lost its second half (no central directory any more).
  const whole = fs.readFileSync(p("rollout_data/1.pt"));
  fs.writeFileSync(p("rollout_data/1.pt"), whole.subarray(0, whole.length >> 1));
  // Step 2: one train shard is a valid zip whose data.pkl is garbage.
  await writeZip(p("train_data/2_1.pt"), [
    { name: "2_1/data.pkl", data: new Uint8Array([0x80, 0x02, 0xff, 0xfe, 0x00, 0x13]) },
    { name: "2_1/version", data: new TextEncoder().encode("3\n") },
  ]);
  // Step 0: the parquet mirror is torn; the .pt next to it is intact.
  const mirror = fs.readFileSync(p("dashboard_columns/rollout_0.parquet"));
  fs.writeFileSync(p("dashboard_columns/rollout_0.parquet"), mirror.subarray(0, mirror.length - 40));
  // Step 0 sidecar: sample 0's line is torn, and a garbage line belongs to no sample.
  const lines = fs.readFileSync(p("trajectory/0.jsonl"), "utf8").split("\n");
  lines[0] = `${lines[0]!.slice(0, 60)} ${TORN}`;
  lines.splice(1, 0, `\u0001\u0002 ${TORN} {{{`);
  fs.writeFileSync(p("trajectory/0.jsonl"), lines.join("\n"));
  await ageFiles(run);
  server = await setupTestServer({ dumpDetails: run });
});

afterAll(() => {
  fs.rmSync(base, { recursive: true, force: true });
});

async function get<T = unknown>(handler: typeof metaGET, url: string, params: Record<string, string> = {}) {
  const r = await callJson<T>(handler, url, { token: server.token, params });
  const text = JSON.stringify(r.body);
  expect(text).not.toContain(base); // messages name files relative to the run
  expect(text).not.toContain(TORN); // and never echo their bytes
  return r;
}

describe("a corrupt .pt answers a JSON error naming the file", () => {
  test("truncated rollout dump → 500 corrupt_file, relative name and the problem", async () => {
    const r = await get<ErrBody>(summaryGET, "/api/rollout/1/summary", { rolloutId: "1" });
    expect(r.status).toBe(500);
    expect(r.body.error.code).toBe("corrupt_file");
    expect(r.body.error.message).toBe("rollout_data/1.pt: no end-of-central-directory record (truncated or still being written?)");
  });

  test("a zip whose data.pkl is broken → names the train shard and data.pkl", async () => {
    const r = await get<ErrBody>(summaryGET, "/api/rollout/2/summary", { rolloutId: "2" });
    expect(r.status).toBe(500);
    expect(r.body.error.code).toBe("corrupt_file");
    expect(r.body.error.message).toMatch(/^train_data\/2_1\.pt: data\.pkl: /);
  });
});

describe("one bad step never breaks the others", () => {
  test("dump/* aggregates keep step 0 and skip 1 and 2; /api/meta lists the skipped files", async () => {
    const m = await get<Record<string, { x: number[]; y: number[] }>>(metricsGET, "/api/metrics?keys=dump/reward_mean,dump/response_length_mean");
    expect(m.status).toBe(200);
    expect(m.body["dump/reward_mean"]!.x).toEqual([0]);
    expect(m.body["dump/response_length_mean"]!.x).toEqual([0]);
    const meta = await get(metaGET, "/api/meta");
    expect(meta.status).toBe(200);
    const parsed = GetMetaResponse.parse(meta.body);
    expect(parsed.rollout_ids.train).toEqual([0, 1, 2]); // still listed: the step view explains
    expect(parsed.skipped_dumps.map((s) => s.file)).toEqual(["rollout_data/1.pt", "train_data/2_1.pt"]);
    expect(parsed.skipped_dumps[0]!.reason).toBe("no end-of-central-directory record (truncated or still being written?)");
  });

  test("a corrupt parquet mirror next to an intact .pt falls back to the .pt (same answer)", async () => {
    const pristine = openDumpReader(MILES_DEMO_RUN);
    try {
      for (const si of [0, 1]) {
        const r = await get(tokensGET, `/api/rollout/0/sample/${si}/tokens`, { rolloutId: "0", sampleIndex: String(si) });
        expect(r.status).toBe(200);
        expect(r.body).toEqual(JSON.parse(jsonSafeStringify(await pristine.tokens(0, si, {}))));
      }
    } finally {
      await pristine.close();
    }
  });

  test("a torn sidecar line fails only its sample; a garbage line belongs to none", async () => {
    const bad = await get<ErrBody>(messagesGET, "/api/rollout/0/sample/0/messages", { rolloutId: "0", sampleIndex: "0" });
    expect(bad.status).toBe(500);
    expect(bad.body.error).toMatchObject({ code: "corrupt_file", message: "trajectory/0.jsonl: line 1 (sample 0) is not valid JSON" });
    const ok = await get<{ sample_index: number; messages: unknown[] }>(messagesGET, "/api/rollout/0/sample/1/messages", {
      rolloutId: "0",
      sampleIndex: "1",
    });
    expect(ok.status).toBe(200);
    expect(ok.body.sample_index).toBe(1);
    expect(ok.body.messages.length).toBeGreaterThan(0);
  });
});

describe("the advisory with a corrupt newest step", () => {
  test("answers 200 and says which step could not be read, instead of a 500", async () => {
    const r = await get<{ advisories: { level: string; message: string }[] }>(advisoryGET, "/api/advisory");
    expect(r.status).toBe(200);
    const warn = r.body.advisories.find((a) => a.message.startsWith("rollout 2 could not be read"));
    expect(warn?.level).toBe("warning");
    expect(warn?.message).toContain("train_data/2_1.pt");
  });
});
