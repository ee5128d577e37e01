/**
 * The live demo shows every view moving, and the run list and run header tell one
 * truthful state (#15 defects 5–7, #16 part 5):
 *  - the demo's live writer (lib/demo/live.ts, what `npm run demo` runs) on a copy of the
 *    qwen run: new SGLang engine points and a new rollout dump within the test's wait;
 *    the SGLang cards carry their own freshness;
 *  - the run list: one state from run_status, the last training step beside the dump
 *    count, the worst alarm as a badge (the stalled 64-GPU run is not "finished");
 *  - a dump-only run's Rollouts view shows its rollout advisories in the header strip.
 */
import fs from "node:fs";
import path from "node:path";
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { startDemoLiveWriter, type LiveWriterHandle } from "@/lib/demo/live";
import { E2E } from "./env";
import { removeRuns } from "./runs";

const LIVE = "qwen-live-e2e";
const FLEET = "llama-70b-gspo-64gpu";
const QWEN = "qwen3-4b-grpo-demo";
const OFFLINE = "offline-dumps-only";
const auth = { Authorization: `Bearer ${E2E.token}` };
const shot = (page: Page, name: string) => page.screenshot({ path: `${E2E.screenshots}/${name}.png`, fullPage: false });

let live: LiveWriterHandle | null = null;

test.beforeAll(async () => {
  const dest = path.join(E2E.runsRoot, LIVE);
  fs.rmSync(dest, { recursive: true, force: true });
  fs.cpSync(path.join(E2E.runsRoot, QWEN), dest, { recursive: true });
  // compressed steps (8 s) so a rollout finishes, and its dump lands, within the test's wait
  live = await startDemoLiveWriter(dest, { intervalS: 1, stepS: 8 });
});

test.afterAll(async () => {
  await live?.stop();
  await removeRuns(LIVE);
});

async function enginePoints(request: APIRequestContext, run: string): Promise<{ n: number; last: number }> {
  const res = await request.get(`/api/timeline/engine_series?run=${run}&metric=sglang_num_running_reqs&max_points=40000`, { headers: auth });
  expect(res.ok()).toBe(true);
  const body = (await res.json()) as { series: { ts: number[] }[] };
  let n = 0;
  let last = 0;
  for (const s of body.series) {
    n += s.ts.length;
    last = Math.max(last, s.ts[s.ts.length - 1] ?? 0);
  }
  return { n, last };
}

async function rolloutIds(request: APIRequestContext, run: string): Promise<number[]> {
  const res = await request.get(`/api/meta?run=${run}`, { headers: auth });
  expect(res.ok()).toBe(true);
  return ((await res.json()) as { rollout_ids: { train: number[] } }).rollout_ids.train;
}

test("the live run gains engine series points and a new rollout dump; SGLang cards show their own freshness", async ({ page, request }) => {
  test.setTimeout(120_000);
  const before = await enginePoints(request, LIVE);
  const idsBefore = await rolloutIds(request, LIVE);
  expect(Math.max(...idsBefore)).toBe(7);
  await expect.poll(async () => (await enginePoints(request, LIVE)).n, { timeout: 30_000 }).toBeGreaterThan(before.n);
  const after = await enginePoints(request, LIVE);
  expect(after.last).toBeGreaterThan(Date.now() / 1000 - 30);
  await expect.poll(async () => Math.max(...(await rolloutIds(request, LIVE))), { timeout: 60_000 }).toBeGreaterThanOrEqual(8);

  // Rollouts view: the new step is listed and opens with its 64 samples
  await page.goto(`/runs/${LIVE}/rollout/8`);
  await expect(page.getByTestId("step-position")).toHaveText(/\(9\/\d+\)/, { timeout: 20_000 });
  await expect(page.getByTestId("step-snap-note")).toHaveCount(0);
  await shot(page, "live-demo-rollout-step8");

  // Metrics → sglang: each card's own last point, live
  await page.goto(`/runs/${LIVE}/metrics?cat=sglang`);
  const fresh = page.getByTestId("panel-freshness").first();
  await expect(fresh).toBeVisible({ timeout: 20_000 });
  await expect(fresh).toHaveAttribute("data-state", "live", { timeout: 20_000 });
  await expect(fresh).toContainText(/^live · [\d.]+ s ago$/);
  await shot(page, "live-demo-sglang-freshness");
});

test("the run list: one state, the last step beside the dump count, the worst alarm as a badge", async ({ page }) => {
  test.setTimeout(90_000);
  await page.goto("/");
  // by path (the live copy shares the qwen run's name)
  const row = (dir: string) => page.getByTestId("run-row").filter({ has: page.locator(".run-path").getByText(dir, { exact: true }) });
  // no mtime "finished"/"live" status column beside the state
  await expect(page.getByRole("columnheader", { name: "Status" })).toHaveCount(0);
  await expect(page.getByRole("columnheader", { name: "Last step" })).toBeVisible();
  await expect(page.getByRole("columnheader", { name: "Dumps" })).toBeVisible();
  // the 64-GPU run stalls: stalled with a critical alarm, never "finished"; it logged steps but no dumps
  const fleet = row(FLEET);
  await expect(fleet.getByTestId("run-state-cell")).toHaveAttribute("data-state", "stalled", { timeout: 45_000 });
  await expect(fleet.getByTestId("run-alarm")).toHaveAttribute("data-level", "critical");
  await expect(fleet.getByTestId("run-alarm")).toContainText("Phase '");
  await expect(fleet.getByTestId("run-dumps")).toHaveText("0");
  const fleetStep = Number(await fleet.getByTestId("run-last-step").innerText());
  expect(fleetStep).toBeGreaterThan(5);
  // the qwen history: 8 dumps (steps 0–7), last logged step 7
  const qwen = row(QWEN);
  await expect(qwen.getByTestId("run-last-step")).toHaveText("7", { timeout: 45_000 });
  await expect(qwen.getByTestId("run-dumps")).toHaveText("8");
  // the dump-only run: its rollout alarms reach the list
  const offline = row(OFFLINE);
  await expect(offline.getByTestId("run-alarm")).toHaveAttribute("data-level", "warning", { timeout: 45_000 });
  await expect(offline.getByTestId("run-alarm")).toContainText(/zero reward std|truncated/);
  await expect(offline.getByTestId("run-last-step")).toHaveText("3");
  await shot(page, "live-demo-run-list");
});

test("a dump-only run's Rollouts view shows its advisories in the run header; the badge does not wait forever", async ({ page }) => {
  await page.goto(`/runs/${OFFLINE}/rollout`);
  // where the view starts before the strip arrives (it is asked once the browser is idle)
  const view = page.locator(".run-shell > :nth-child(2)");
  await expect(page.locator(".run-tabs")).toBeVisible();
  const before = (await view.boundingBox())!.y;
  const strip = page.getByTestId("advisory-strip");
  await expect(strip).toBeVisible({ timeout: 20_000 });
  // a strip that lands late moves nothing: the view starts where it did
  expect((await view.boundingBox())!.y).toBe(before);
  await expect(strip).toHaveAttribute("data-level", "warning");
  await expect(strip).toContainText("2 warning");
  await strip.getByRole("button").click();
  await expect(page.getByTestId("advisory-strip-list")).toContainText("2/4 groups in rollout 3 have zero reward std");
  await expect(page.getByTestId("advisory-strip-list")).toContainText("of samples in rollout 3 are truncated");
  // opened, the list floats over the view instead of pushing it down
  expect((await view.boundingBox())!.y).toBe(before);
  await shot(page, "live-demo-dump-only-advisories");
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("advisory-strip-list")).toHaveCount(0);
  // the header has one state (run_status), no "live" pill beside it
  await expect(page.locator(".run-title .badge-live")).toHaveCount(0);
  await expect(page.getByTestId("run-state")).toBeVisible();
  // Metrics of a run without telemetry: not "waiting for data…" once the run is known not to run
  await page.goto(`/runs/${OFFLINE}/metrics`);
  const badge = page.getByTestId("freshness");
  await expect(badge).toBeVisible();
  await expect(badge).not.toHaveText("waiting for data…", { timeout: 20_000 });
  // the strip is on every view of the run
  await expect(page.getByTestId("advisory-strip")).toBeVisible();
});
