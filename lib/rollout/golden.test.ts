/**
 * Parity with the Python miles dashboard on the shared fixture run: every /api/rollout/*
 * answer of `miles-demo-expected/golden.json`, asked through our route handlers, and the
 * `dump/*` series of the /api/metrics answer via `stepAggregates()`. The first pass
 * computes and caches every summary; the URLs are then answered a second time from the
 * on-disk summary cache by a fresh reader. Parity rule of
 * the parity comparison rule: floats within rel 1e-5 / abs 1e-6, every golden key present
 * (extra keys allowed), lists of equal length, status equal with 400 ≡ 422.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { z } from "zod";
import { toErrorResponse } from "@/lib/api/errors";
import { jsonSafeStringify } from "@/lib/api/json";
import {
  GetRolloutGroupsQuery,
  GetRolloutGroupsResponse,
  GetRolloutSummaryQuery,
  GetRolloutSummaryResponse,
  GetRolloutTrajectoriesQuery,
  GetRolloutTrajectoriesResponse,
  GetSampleMessagesQuery,
  GetSampleMessagesResponse,
  GetSampleTokensQuery,
  GetSampleTokensResponse,
  RolloutParams,
  SampleParams,
} from "@/lib/contracts/rollout";
import {
  getRolloutGroups,
  getRolloutSummary,
  getRolloutTrajectories,
  getSampleMessages,
  getSampleTokens,
  storeTimeline,
} from "@/lib/rollout";
import { openDumpReader, type DumpReader } from "@/lib/store/dumps";
import { ageFiles } from "@/lib/store/dumps/test-fixtures";
import { openMetricStore, type MetricStore } from "@/lib/store/telemetry";
import { MILES_DEMO_GOLDEN, MILES_DEMO_RUN } from "@/lib/testing/fixtures";

const FIXTURE = MILES_DEMO_RUN;
const GOLDEN = MILES_DEMO_GOLDEN;

interface GoldenAnswer {
  url: string;
  status: number;
  body: unknown;
}

/** The parity check's `same`: golden `a` vs ours `b`; appends mismatch descriptions. */
function parityDiff(a: unknown, b: unknown, at = "$", out: string[] = []): string[] {
  if (typeof a === "number" || typeof b === "number") {
    if (typeof a !== "number" || typeof b !== "number") out.push(`${at}: ${JSON.stringify(a)} != ${JSON.stringify(b)}`);
    else if (!(a === b || Math.abs(a - b) <= Math.max(1e-5 * Math.max(Math.abs(a), Math.abs(b)), 1e-6))) {
      out.push(`${at}: ${a} != ${b}`);
    }
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) out.push(`${at}: length ${a.length} != ${b.length}`);
    else a.forEach((x, i) => parityDiff(x, b[i], `${at}[${i}]`, out));
    return out;
  }
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
    for (const [k, v] of Object.entries(a)) {
      if (!(k in b)) out.push(`${at}.${k}: missing`);
      else parityDiff(v, (b as Record<string, unknown>)[k], `${at}.${k}`, out);
    }
    return out;
  }
  if (a !== b) out.push(`${at}: ${JSON.stringify(a)?.slice(0, 80)} != ${JSON.stringify(b)?.slice(0, 80)}`);
  return out;
}

interface Ctx {
  dumps: DumpReader;
  store: MetricStore;
}

/**
 * One endpoint as its route file wires it (contract parsing, one lib call, the shared
 * JSON serializer and error mapper) — everything except authentication, which the
 * route tests cover. lib/ may not import app/, hence this table.
 */
const ENDPOINTS: {
  re: RegExp;
  schema: z.ZodType;
  run: (ctx: Ctx, m: RegExpExecArray, q: Record<string, string>) => Promise<unknown>;
}[] = [
  {
    re: /^\/api\/rollout\/([^/]+)\/summary$/,
    schema: GetRolloutSummaryResponse,
    run: (c, m, q) => getRolloutSummary(c.dumps, RolloutParams.parse({ rolloutId: m[1] }).rolloutId, GetRolloutSummaryQuery.parse(q).eval),
  },
  {
    re: /^\/api\/rollout\/([^/]+)\/groups$/,
    schema: GetRolloutGroupsResponse,
    run: (c, m, q) => getRolloutGroups(c.dumps, RolloutParams.parse({ rolloutId: m[1] }).rolloutId, GetRolloutGroupsQuery.parse(q).eval),
  },
  {
    re: /^\/api\/rollout\/([^/]+)\/trajectories$/,
    schema: GetRolloutTrajectoriesResponse,
    run: (c, m, q) =>
      getRolloutTrajectories(
        c.dumps,
        storeTimeline(c.store),
        RolloutParams.parse({ rolloutId: m[1] }).rolloutId,
        GetRolloutTrajectoriesQuery.parse(q).sample_index,
      ),
  },
  {
    re: /^\/api\/rollout\/([^/]+)\/sample\/([^/]+)\/tokens$/,
    schema: GetSampleTokensResponse,
    run: (c, m, q) => {
      const p = SampleParams.parse({ rolloutId: m[1], sampleIndex: m[2] });
      return getSampleTokens(c.dumps, p.rolloutId, p.sampleIndex, GetSampleTokensQuery.parse(q));
    },
  },
  {
    re: /^\/api\/rollout\/([^/]+)\/sample\/([^/]+)\/messages$/,
    schema: GetSampleMessagesResponse,
    run: (c, m, q) => {
      const p = SampleParams.parse({ rolloutId: m[1], sampleIndex: m[2] });
      return getSampleMessages(c.dumps, p.rolloutId, p.sampleIndex, GetSampleMessagesQuery.parse(q).eval);
    },
  },
];

async function answer(ctx: Ctx, url: string): Promise<{ status: number; body: unknown; schema: z.ZodType }> {
  const u = new URL(url, "http://x");
  for (const e of ENDPOINTS) {
    const m = e.re.exec(u.pathname);
    if (!m) continue;
    try {
      const data = await e.run(ctx, m, Object.fromEntries(u.searchParams));
      return { status: 200, body: JSON.parse(jsonSafeStringify(data)) as unknown, schema: e.schema };
    } catch (err) {
      const res = toErrorResponse(err, () => undefined);
      return { status: res.status, body: await res.json(), schema: e.schema };
    }
  }
  throw new Error(`no endpoint for ${url}`);
}

let runDir: string;
let cacheDir: string;
let ctx: Ctx;
let golden: GoldenAnswer[];

beforeAll(async () => {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "rlboard-golden-"));
  runDir = path.join(tmp, "miles-demo");
  cacheDir = path.join(tmp, "cache");
  await fs.cp(FIXTURE, runDir, { recursive: true });
  for (const e of await fs.readdir(runDir, { withFileTypes: true, recursive: true })) {
    await fs.chmod(path.join(e.parentPath, e.name), e.isDirectory() ? 0o755 : 0o644);
  }
  await fs.chmod(runDir, 0o755);
  await ageFiles(runDir); // a fresh copy would hide eval_0.pt for 10 s (visibility rule)
  ctx = {
    dumps: openDumpReader(runDir, { cacheDir: path.join(cacheDir, "dumps") }),
    store: openMetricStore(runDir, { follow: false, cacheDir: path.join(cacheDir, "telemetry") }),
  };
  golden = JSON.parse(await fs.readFile(GOLDEN, "utf8")) as GoldenAnswer[];
});

/** Readers opened here; closed at the end (no shard file handle is left to the GC). */
const extraReaders: DumpReader[] = [];

afterAll(async () => {
  await Promise.all([ctx.dumps, ...extraReaders].map((r) => r.close()));
  await fs.rm(path.dirname(runDir), { recursive: true, force: true });
});

const rolloutUrls = (JSON.parse(await fs.readFile(GOLDEN, "utf8")) as GoldenAnswer[])
  .map((g) => g.url)
  .filter((u) => u.startsWith("/api/rollout/"));

describe("golden parity of /api/rollout/*", () => {
  test.each(rolloutUrls)("%s", async (url) => {
    const g = golden.find((x) => x.url === url)!;
    const { status, body, schema } = await answer(ctx, url);
    const okStatus = status === g.status || (new Set([400, 422]).has(status) && new Set([400, 422]).has(g.status));
    expect(okStatus, `status ${status} != ${g.status}: ${JSON.stringify(body)}`).toBe(true);
    if (g.body !== null) {
      expect(parityDiff(g.body, body).slice(0, 5)).toEqual([]);
      schema.parse(body);
    }
  });

  test("a fresh reader answers the summaries from the on-disk cache with the same values", async () => {
    const cached: Ctx = { ...ctx, dumps: openDumpReader(runDir, { cacheDir: path.join(cacheDir, "dumps") }) };
    extraReaders.push(cached.dumps);
    const files = await fs.readdir(path.join(cacheDir, "dumps"));
    expect(files).toEqual(expect.arrayContaining(["rollout_0.summary.parquet", "rollout_eval_0.summary.parquet"]));
    for (const g of golden.filter((x) => /\/(summary|groups)/.test(x.url) && x.status === 200)) {
      const { status, body } = await answer(cached, g.url);
      expect(status).toBe(200);
      expect(parityDiff(g.body, body, g.url)).toEqual([]);
    }
  });

  test("dump/* series of /api/metrics come from stepAggregates()", async () => {
    const g = golden.find((x) => x.url.startsWith("/api/metrics?"))!;
    const want = g.body as Record<string, { x: number[]; y: (number | null)[] }>;
    const agg = await ctx.dumps.stepAggregates();
    for (const [key, series] of Object.entries(want)) {
      if (!key.startsWith("dump/")) continue;
      const col = key.slice(5) as keyof (typeof agg)[number];
      const pts = agg.filter((r) => r[col] !== null);
      const ours = { x: pts.map((r) => r.rollout_id), y: pts.map((r) => r[col]), ts: [] };
      expect(parityDiff(series, ours, key)).toEqual([]);
    }
  });
});
