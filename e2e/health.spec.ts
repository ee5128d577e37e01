/**
 * Run health in the browser (#19): a run whose log holds a traceback and a CUDA OOM is
 * listed as crashed with its worst signal, the run header's state badge opens the signal
 * table (zero counts kept) whose times link to the Compute Utilization view, and an empty
 * view says which input is missing and what writes it.
 */
import fs from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { E2E } from "./env";
import { removeRuns } from "./runs";

const CRASHED = "health-crashed";
const DUMP_ONLY = "health-dump-only";

const LOG = [
  "2026-11-30 10:00:00 INFO starting trainer",
  "2026-11-30 10:05:01 INFO rollout 0 done",
  "Traceback (most recent call last):",
  '  File "train.py", line 42, in <module>',
  "    main()",
  "2026-11-30 10:07:13 ERROR torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 3; 79.15 GiB total capacity)",
  "RuntimeError: CUDA error: an illegal memory access was encountered",
].join("\n");

test.beforeAll(() => {
  const src = path.join(E2E.runsRoot, "miles-demo");
  const crashed = path.join(E2E.runsRoot, CRASHED);
  fs.cpSync(src, crashed, { recursive: true });
  fs.mkdirSync(path.join(crashed, "logs", "node0"), { recursive: true });
  fs.writeFileSync(path.join(crashed, "logs", "node0", "train.log"), `${LOG}\n`);
  const old = new Date("2026-01-01T00:00:00Z");
  for (const f of fs.readdirSync(crashed, { recursive: true }) as string[]) fs.utimesSync(path.join(crashed, f), old, old);
  const dumpOnly = path.join(E2E.runsRoot, DUMP_ONLY);
  fs.mkdirSync(dumpOnly);
  fs.cpSync(path.join(src, "rollout_data"), path.join(dumpOnly, "rollout_data"), { recursive: true });
});

test.afterAll(() => removeRuns(CRASHED, DUMP_ONLY));

test("GET /api/run_status: every signal present, counts and samples from the log", async ({ request }) => {
  const res = await request.get(`/api/run_status?run=${CRASHED}`, { headers: { Authorization: `Bearer ${E2E.token}` } });
  expect(res.status()).toBe(200);
  const body = (await res.json()) as {
    lifecycle: { state: string; cause: string };
    log_signals: { signal: string; count: number; samples: { file: string; line: number; text: string }[] }[];
  };
  const by = Object.fromEntries(body.log_signals.map((s) => [s.signal, s]));
  expect(Object.keys(by).sort()).toEqual(["crash", "engine_error", "kv_transfer_timeout", "nan_inf", "nccl_error", "oom", "ray_actor_died"]);
  expect(by.oom!.count).toBeGreaterThanOrEqual(1);
  expect(by.crash!.count).toBeGreaterThanOrEqual(1);
  expect(by.nccl_error!.count).toBe(0);
  expect(by.oom!.samples[0]).toMatchObject({ file: "logs/node0/train.log", line: 6 });
  expect(body.lifecycle.state).toBe("crashed");
});

test("the run list shows the state and the header's badge opens the signals, linked to the timeline", async ({ page }) => {
  await page.goto(`/?q=${CRASHED}`);
  // The list refetches every 2 s while the server is still judging a run.
  await expect(page.getByTestId("run-state-cell").first()).toHaveAttribute("data-state", "crashed", { timeout: 30_000 });
  await expect(page.getByTestId("run-state-cell").first()).toContainText("crashed");
  await page.screenshot({ path: `${E2E.screenshots}/health-run-list.png` });

  await page.goto(`/runs/${CRASHED}/metrics`);
  const badge = page.getByTestId("run-state");
  await expect(badge).toHaveAttribute("data-state", "crashed");
  await badge.click();
  const panel = page.getByTestId("run-health-panel");
  await expect(panel.locator('tr[data-signal="oom"] td').nth(1)).not.toHaveText("0");
  await expect(panel.locator('tr[data-signal="nccl_error"] td').nth(1)).toHaveText("0");
  await expect(panel.locator('tr[data-signal="oom"] td.sample')).toContainText("CUDA out of memory");
  await page.screenshot({ path: `${E2E.screenshots}/health-panel.png` });
  await panel.locator('tr[data-signal="oom"] td').nth(2).getByRole("link").click();
  await expect(page).toHaveURL(new RegExp(`/runs/${CRASHED}/timeline\\?v=`));
});

test("an empty view says which input is missing and what writes it", async ({ page }) => {
  await page.goto(`/runs/${DUMP_ONLY}/timeline`);
  const why = page.getByTestId("why-empty");
  await expect(why).toHaveAttribute("data-input", "dashboard");
  await expect(why).toContainText("start the collector");
  await expect(why).toContainText("--use-miles-dashboard");
});
