import { expect, test, type Page } from "@playwright/test";
import { E2E } from "./env";

// The copy `slime-pd` of fixtures/slime-debug/with-pd (cli/e2e.ts): a run written by slime's
// own rollout path — rollout_data/{0,1,2}.pt with per-sample traces, PD breakdown, no
// dashboard/, no train_data/.
const RUN = "/runs/slime-pd";
const shot = (page: Page, name: string) => page.screenshot({ path: `${E2E.screenshots}/${name}.png`, fullPage: true });

test.describe("slime run", () => {
  test("is listed in the run list", async ({ page }) => {
    await page.goto("/");
    await page.getByLabel("Search runs").fill("slime");
    await expect(page.getByTestId("run-row")).toHaveCount(1);
    await expect(page.getByTestId("run-row").first()).toContainText("slime-pd");
  });

  test("Rollouts: the step view shows the request swimlanes, sorts them and opens a sample", async ({ page }) => {
    await page.goto(`${RUN}/rollout/0`);
    await expect(page.getByTestId("stat-samples")).toContainText("16");
    const traces = page.getByTestId("step-traces");
    await expect(traces.getByRole("heading", { name: /Request traces/ })).toBeVisible();
    await expect(traces.locator("g[data-sample]")).toHaveCount(16);
    await traces.getByRole("button", { name: "e2e latency" }).click();
    await expect(page).toHaveURL(/tsort=e2e/);
    // sorted by e2e latency: the first lane is the slowest request of the step
    const first = await traces.locator("g[data-sample]").first().getAttribute("data-sample");
    await shot(page, "slime-step-traces");
    await traces.locator("g[data-sample]").first().click();
    await expect(page).toHaveURL(new RegExp(`/rollout/0/sample/${first}`));
  });

  test("Sample: the trace timeline with [P] and [D] lanes, hover attrs and the request card", async ({ page }) => {
    await page.goto(`${RUN}/rollout/0/sample/0`);
    const panel = page.getByTestId("trace-panel");
    await expect(panel.getByRole("heading", { name: /Request trace/ })).toBeVisible();
    const tl = panel.getByTestId("trace-timeline");
    for (const name of ["generate_and_rm_group", "generate_and_rm", "sglang_generate", "reward_model"]) await expect(tl.getByText(name, { exact: true })).toBeVisible();
    await expect(tl.getByText("[P]", { exact: true })).toBeVisible();
    await expect(tl.getByText("[D]", { exact: true })).toBeVisible();
    await expect(tl.locator('g[data-lane="P"] rect[data-span="sglang_pd_prefill_forward"]')).toHaveCount(1);
    await expect(tl.locator('g[data-lane="D"] rect[data-span="sglang_pd_decode_forward"]')).toHaveCount(1);
    await tl.locator('rect[data-span="sglang_generate"]').hover();
    const tip = page.getByRole("tooltip");
    await expect(tip).toContainText("e2e_latency");
    await expect(tip).toContainText("sglang_request_id");
    await expect(tip).toContainText("max_new_tokens");
    await tl.locator('path[data-event="sglang_pd_summary"]').hover();
    await expect(page.getByRole("tooltip")).toContainText("pd_transfer_speed_gb_s");
    const card = panel.getByTestId("request-card");
    await expect(card).toHaveCount(1);
    await expect(card).toContainText("prompt 169 tok");
    await expect(card).toContainText("completion 258 tok");
    await expect(card).toContainText("cached 2 tok");
    await expect(card).toContainText("queue");
    await expect(card).toContainText("bootstrap_queue");
    await shot(page, "slime-sample-trace");
  });

  test("Metrics: the perf category plots the trace-derived request metrics per rollout step", async ({ page }) => {
    await page.goto(`${RUN}/metrics?cat=perf`);
    const cats = page.getByRole("navigation", { name: "Categories" });
    await expect(cats.getByRole("button", { name: /^perf/ })).toHaveAttribute("aria-pressed", "true");
    await expect(cats.getByRole("button", { name: /^perf/ })).toContainText("66");
    const card = page.locator('[data-testid="metric-card"][data-key="perf/request/e2e_latency/mean"]');
    await card.scrollIntoViewIfNeeded();
    await expect(card.getByTestId("chart")).toHaveAttribute("data-points", "3");
    await expect(card).toContainText("@ 2");
    await expect(page.locator('[data-testid="metric-card"][data-key="perf/prefill/transfer_speed_gb_s/mean"]')).toBeVisible();
    // The viewport (the category has 66 charts; off-screen ones draw when scrolled to).
    await page.screenshot({ path: `${E2E.screenshots}/slime-metrics-perf.png` });
  });
});
