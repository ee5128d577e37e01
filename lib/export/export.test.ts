/**
 * Offline export (#17, docs/export.md): the report JSON is the routes' answers for the
 * same run (each part compared with the route handler's body on the same files), the
 * HTML is one self-contained file with a no-network CSP, and a run killed mid-write
 * (torn last lines, a half-written .pt) exports what is complete and names the rest.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { GET as metaGET } from "@/app/api/meta/route";
import { GET as metricsGET } from "@/app/api/metrics/route";
import { GET as phasesGET } from "@/app/api/timeline/phases/route";
import { GET as gpuGET } from "@/app/api/timeline/gpu/route";
import { GET as topologyGET } from "@/app/api/timeline/topology/route";
import { GET as advisoryGET } from "@/app/api/advisory/route";
import { GET as summaryGET } from "@/app/api/rollout/[rolloutId]/summary/route";
import { GET as groupsGET } from "@/app/api/rollout/[rolloutId]/groups/route";
import { GET as messagesGET } from "@/app/api/rollout/[rolloutId]/sample/[sampleIndex]/messages/route";
import { GET as tokensGET } from "@/app/api/rollout/[rolloutId]/sample/[sampleIndex]/tokens/route";
import { axisForKey } from "@/lib/charts/metric-catalog";
import { EXPORT_LIMITS, Report, REPORT_SCHEMA, type ReportOptions } from "@/lib/contracts/report";
import { exportRunDir, pickSamples, readInlineReport, REPORT_CSP } from "@/lib/export";
import { tornFiles } from "@/lib/export/torn";
import type { SummaryTable } from "@/lib/store/dumps";
import { ageFiles } from "@/lib/store/dumps/test-fixtures";
import { copyRunWithOldMtimes, makeTmpDir } from "@/lib/store/telemetry/testing";
import { callJson, setupTestServer, type TestServer } from "@/lib/testing/api";
import { MILES_DEMO_RUN } from "@/lib/testing/fixtures";

const OPTS: ReportOptions = { steps: null, samples_per_step: 4, max_lanes: 64 };

let base: string;
let run: string;
let server: TestServer;
let report: Report;
let html: string;

beforeAll(async () => {
  base = makeTmpDir("rlboard-export-");
  run = copyRunWithOldMtimes(MILES_DEMO_RUN, path.join(base, "run"));
  server = await setupTestServer({ dumpDetails: run });
  const out = await exportRunDir(run, OPTS);
  report = Report.parse(JSON.parse(out.json));
  html = out.html;
}, 120_000);

afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

type H = typeof metaGET;
async function api(handler: H, url: string, params: Record<string, string> = {}): Promise<unknown> {
  const r = await callJson(handler, url, { token: server.token, params });
  expect(r.status, url).toBe(200);
  return r.body;
}

describe("report.json equals the API answers for the same run", () => {
  test("schema, version, run header", () => {
    expect(report.schema).toBe(REPORT_SCHEMA);
    expect(report.rlboard_version).toMatch(/^\d+\.\d+\.\d+/);
    expect(report.run).toMatchObject({ id: "run", name: "dummy-telemetry" });
    expect(report.incomplete).toEqual([]);
    expect(report.absent).toEqual({});
  });

  test("meta is /api/meta", async () => {
    expect(report.meta).toEqual(await api(metaGET, "/api/meta"));
  });

  test("metrics: every scalar key of meta.metric_keys, as /api/metrics on its step axis", async () => {
    expect(Object.keys(report.metrics).sort()).toEqual([...report.meta.metric_keys].sort());
    expect(report.meta.metric_keys.length).toBeGreaterThan(3);
    for (const key of report.meta.metric_keys) {
      const axis = axisForKey(key);
      expect(report.metric_axes[key]).toBe(axis);
      const body = (await api(metricsGET, `/api/metrics?keys=${encodeURIComponent(key)}&x=${encodeURIComponent(axis)}`)) as Record<string, unknown>;
      expect(report.metrics[key], key).toEqual(body[key]);
    }
    expect(report.metrics["rollout/rewards_mean"]!.y).toEqual([0.4, 0.45, 0.5]);
  });

  test("compute utilization: the lanes (≤ --max-lanes) with /api/timeline/phases, /gpu and /topology", async () => {
    expect(report.utilization?.kind).toBe("lanes");
    if (report.utilization?.kind !== "lanes") return;
    expect(report.utilization.topology).toEqual(await api(topologyGET, "/api/timeline/topology"));
    expect(report.utilization.gpu).toEqual(await api(gpuGET, `/api/timeline/gpu?max_points=${EXPORT_LIMITS.lane_points}`));
    expect(report.phases).toEqual(await api(phasesGET, "/api/timeline/phases"));
    expect(report.phases!.phases.length).toBeGreaterThan(10);
  });

  test("advisory is /api/advisory", async () => {
    expect(report.advisory).toEqual(await api(advisoryGET, "/api/advisory"));
  });

  test("rollout: summary and groups of every train step", async () => {
    expect(Object.keys(report.rollout)).toEqual(["0", "1", "2"]);
    for (const step of ["0", "1", "2"]) {
      expect(report.rollout[step]!.summary).toEqual(await api(summaryGET, `/api/rollout/${step}/summary`, { rolloutId: step }));
      expect(report.rollout[step]!.groups).toEqual(await api(groupsGET, `/api/rollout/${step}/groups`, { rolloutId: step }));
    }
  });

  test("samples: best, worst, median, most drifting, each with the API's messages and tokens", async () => {
    for (const [step, list] of Object.entries(report.samples)) {
      expect(list.flatMap((s) => s.picks).sort()).toEqual(["best", "median", "most_drifting", "worst"]);
      const rows = report.rollout[step]!.summary.rows;
      const rewards = rows.map((r) => r.raw_reward as number);
      const best = list.find((s) => s.picks.includes("best"))!;
      const worst = list.find((s) => s.picks.includes("worst"))!;
      expect(rows.find((r) => r.sample_index === best.sample_index)!.raw_reward).toBe(Math.max(...rewards));
      expect(rows.find((r) => r.sample_index === worst.sample_index)!.raw_reward).toBe(Math.min(...rewards));
      for (const s of list) {
        const params = { rolloutId: step, sampleIndex: String(s.sample_index) };
        expect(s.tokens).toEqual(await api(tokensGET, `/api/rollout/${step}/sample/${s.sample_index}/tokens`, params));
        const m = await callJson(messagesGET, `/api/rollout/${step}/sample/${s.sample_index}/messages`, { token: server.token, params });
        if (s.messages) expect(s.messages).toEqual(m.body);
        else {
          expect(m.status).toBe(404);
          expect(s.errors[0]).toBe(`conversation: ${(m.body as { error: { message: string } }).error.message}`);
        }
      }
    }
    expect(Object.values(report.samples).flat().filter((s) => s.messages).length).toBeGreaterThan(0);
  });

  test("--steps and --samples-per-step bound what is exported", async () => {
    const r = Report.parse(JSON.parse((await exportRunDir(run, { steps: [1, 2], samples_per_step: 1, max_lanes: 2 })).json));
    expect(Object.keys(r.rollout)).toEqual(["1", "2"]);
    expect(r.samples["1"]!.map((s) => s.picks)).toEqual([["best"]]);
    // 4 lanes > --max-lanes 2: the fleet overview instead of the lanes
    expect(r.utilization).toMatchObject({ kind: "fleet", lanes: 4 });
    expect(r.phases).toBeNull();
    expect(r.absent.lanes).toMatch(/^4 GPU lanes is more than --max-lanes 2/);
  });
});

describe("report.html is one self-contained file", () => {
  test("a CSP that forbids the network, the data and the viewer inline, no external reference", () => {
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">`);
    expect(REPORT_CSP).toMatch(/^default-src 'none';/);
    expect(html).not.toMatch(/<link\b|<img\b|<iframe\b|\ssrc=|@import|url\(/i);
    expect(readInlineReport(html)).toEqual(report);
    expect(html.match(/<script>/g)?.length).toBe(1);
    expect(html.match(/<script type="application\/json"/g)?.length).toBe(6); // index, main + phases, utilization, rollout, samples
  });

  test("a value that would end the script element is escaped", async () => {
    const { inlineJson } = await import("@/lib/export/html");
    expect(inlineJson(JSON.stringify({ a: "</script><script>alert(1)</script>" }))).not.toContain("</script");
  });
});

describe("pickSamples", () => {
  const table = (rows: [number, number | null, number | null][]): SummaryTable =>
    ({
      rollout_id: 0,
      evaluation: false,
      columns: ["sample_index", "raw_reward", "mean_abs_lp_diff"],
      rows: rows.map(([sample_index, raw_reward, mean_abs_lp_diff]) => ({ sample_index, raw_reward, mean_abs_lp_diff })),
    }) as unknown as SummaryTable;

  test("best, worst, median, most drifting; a sample picked twice is listed once", () => {
    const t = table([
      [0, 0.5, 0.1],
      [1, 1.0, 0.2],
      [2, 0.0, 0.9],
      [3, 0.25, 0.3],
      [4, null, 0.4],
    ]);
    expect(pickSamples(t, 4)).toEqual([
      { sample_index: 1, picks: ["best"] },
      { sample_index: 2, picks: ["worst", "most_drifting"] },
      { sample_index: 3, picks: ["median"] },
      { sample_index: 0, picks: ["quantile"] },
    ]);
    expect(pickSamples(t, 2).map((s) => s.sample_index)).toEqual([1, 2]);
    expect(pickSamples(t, 0)).toEqual([]);
    expect(pickSamples(t, 16).length).toBe(4); // only rewarded samples fill quantiles
  });
});

describe("a run killed mid-write", () => {
  let torn: string;
  let r: Report;
  beforeAll(async () => {
    torn = copyRunWithOldMtimes(MILES_DEMO_RUN, path.join(base, "torn"));
    const p = (rel: string) => path.join(torn, rel);
    // metrics.jsonl: the last record is half written (no newline).
    const text = fs.readFileSync(p("dashboard/metrics.jsonl"), "utf8");
    const lines = text.split("\n").filter(Boolean);
    fs.writeFileSync(p("dashboard/metrics.jsonl"), lines.slice(0, -1).join("\n") + "\n" + lines.at(-1)!.slice(0, 25));
    // a gpu_util partition: its last line is torn too.
    const part = fs.readdirSync(p("dashboard/gpu_util"))[0]!;
    const g = fs.readFileSync(p(`dashboard/gpu_util/${part}`), "utf8");
    fs.writeFileSync(p(`dashboard/gpu_util/${part}`), g.slice(0, g.length - 20));
    // step 1's rollout dump lost its second half.
    const whole = fs.readFileSync(p("rollout_data/1.pt"));
    fs.writeFileSync(p("rollout_data/1.pt"), whole.subarray(0, whole.length >> 1));
    await ageFiles(torn);
    r = Report.parse(JSON.parse((await exportRunDir(torn, OPTS)).json));
  }, 120_000);

  test("tornFiles names the JSONL files without a trailing newline", () => {
    expect(tornFiles(torn)).toEqual([`dashboard/gpu_util/${fs.readdirSync(path.join(torn, "dashboard/gpu_util"))[0]}`, "dashboard/metrics.jsonl"]);
    expect(tornFiles(MILES_DEMO_RUN)).toEqual([]);
  });

  test("what is complete is exported; the header's incomplete list names the rest", () => {
    expect(Object.keys(r.rollout)).toEqual(["0", "2"]);
    expect(Object.keys(r.samples)).toEqual(["0", "2"]);
    expect(r.metrics["rollout/rewards_mean"]!.y).toEqual([0.4, 0.45]);
    expect(r.utilization?.kind).toBe("lanes");
    const what = r.incomplete.map((i) => i.what);
    expect(what).toContain("rollout step 1");
    expect(what).toContain("dashboard/metrics.jsonl");
    expect(r.incomplete.find((i) => i.what === "rollout step 1")!.reason).toBe(
      "rollout_data/1.pt: no end-of-central-directory record (truncated or still being written?)",
    );
    expect(JSON.stringify(r)).not.toContain(base); // names are relative to the run
  });
});
