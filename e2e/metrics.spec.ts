import fs from "node:fs";
import path from "node:path";
import { expect, test, type Locator, type Page } from "@playwright/test";
import { E2E } from "./env";
import { removeRuns } from "./runs";

// The fixture copy `miles-demo`: rollout steps 0–2 (rollout/* and perf/* keys) plus sglang
// engine series from 3 engines.
const RUN = "/runs/miles-demo";
const shot = (page: Page, name: string) => page.screenshot({ path: `${E2E.screenshots}/${name}.png`, fullPage: true });
const card = (page: Page, key: string) => page.locator(`[data-testid="metric-card"][data-key="${key}"]`);
const chartOf = (page: Page, key: string) => card(page, key).getByTestId("chart");

/** Plot box of a CanvasChart (margins left 56, right 14, top 10, bottom 24; height 220). */
async function plotBox(chart: Locator) {
  const b = (await chart.boundingBox())!;
  return { left: b.x + 56, top: b.y + 10, width: b.width - 70, height: b.height - 34 };
}

async function drag(page: Page, from: [number, number], to: [number, number]) {
  await page.mouse.move(...from);
  await page.mouse.down();
  await page.mouse.move(...to, { steps: 8 });
  await page.mouse.up();
}

test.describe("Metrics view", () => {
  test("lists categories, draws the category's charts and switches with the URL", async ({ page }) => {
    await page.goto(`${RUN}/metrics`);
    const cats = page.getByRole("navigation", { name: "Categories" });
    await expect(cats.getByRole("button", { name: /^rollout/ })).toHaveAttribute("aria-pressed", "true");
    await expect(cats.getByRole("button", { name: /^perf/ })).toBeVisible();
    await expect(cats.getByRole("button", { name: /^sglang/ })).toBeVisible();
    await expect(chartOf(page, "rollout/rewards_mean")).toHaveAttribute("data-points", "3");
    await expect(card(page, "rollout/rewards_mean")).toContainText("last 0.500 @ 2");
    await shot(page, "metrics-rollout");

    await cats.getByRole("button", { name: /^perf/ }).click();
    await expect(page).toHaveURL(/cat=perf/);
    await expect(page.getByTestId("metric-card")).toHaveCount(4);
    await expect(chartOf(page, "perf/wait_time_ratio")).toHaveAttribute("data-points", "3");

    await page.getByLabel("Filter metrics").fill("mfu");
    await expect(page).toHaveURL(/q=mfu/);
    await expect(page.getByTestId("metric-card")).toHaveCount(2);
    await expect(cats.getByRole("button", { name: /^perf/ })).toContainText("2/4");

    // Back undoes the category choice (deliberate changes push history)
    await page.getByLabel("Filter metrics").fill("");
    await expect(page).not.toHaveURL(/q=/);
    await page.goBack();
    await expect(cats.getByRole("button", { name: /^rollout/ })).toHaveAttribute("aria-pressed", "true");
    await expect(page.getByTestId("metric-card")).toHaveCount(1);
  });

  test("drag-box zoom follows the 10 px rule, double-click and Esc reset, zoom lives in the URL", async ({ page }) => {
    await page.goto(`${RUN}/metrics?cat=perf`);
    const chart = chartOf(page, "perf/step_time");
    await expect(chart).toHaveAttribute("data-points", "3");
    await expect(chart).toHaveAttribute("data-x0", "0");
    await expect(chart).toHaveAttribute("data-x1", "2");
    const p = await plotBox(chart);

    // horizontal sweep (dy < 10): x zoom only, shared by every chart of the view
    await drag(page, [p.left + p.width * 0.25, p.top + p.height * 0.5], [p.left + p.width * 0.75, p.top + p.height * 0.5 + 4]);
    await expect(page).toHaveURL(/[?&]x=0\.5[\d]*~1\.5/);
    await expect(chart).toHaveAttribute("data-zoomed", "true");
    await expect.poll(async () => Number(await chart.getAttribute("data-x0"))).toBeCloseTo(0.5, 1);
    await expect.poll(async () => Number(await chart.getAttribute("data-x1"))).toBeCloseTo(1.5, 1);
    await expect.poll(async () => Number(await chartOf(page, "perf/wait_time_ratio").getAttribute("data-x0"))).toBeCloseTo(0.5, 1);
    await shot(page, "metrics-perf-zoom");

    // a wobble under 4 px is a click: no zoom change
    await drag(page, [p.left + 30, p.top + 30], [p.left + 32, p.top + 31]);
    await expect.poll(async () => Number(await chart.getAttribute("data-x0"))).toBeCloseTo(0.5, 1);

    // the zoom survives a reload (it is in the URL)
    await page.reload();
    await expect.poll(async () => Number(await chartOf(page, "perf/step_time").getAttribute("data-x0"))).toBeCloseTo(0.5, 1);

    // a box (dy ≥ 10) zooms y too, on that chart only
    const p2 = await plotBox(chartOf(page, "perf/step_time"));
    await drag(page, [p2.left + 10, p2.top + 10], [p2.left + p2.width - 10, p2.top + p2.height - 10]);
    await expect(page).toHaveURL(/y:perf\/step_time=/);

    await chartOf(page, "perf/step_time").dblclick({ position: { x: 200, y: 100 } });
    await expect(chartOf(page, "perf/step_time")).toHaveAttribute("data-zoomed", "false");
    await expect(page).not.toHaveURL(/[?&]x=/);

    await drag(page, [p2.left + p2.width * 0.1, p2.top + 40], [p2.left + p2.width * 0.6, p2.top + 42]);
    await expect(page).toHaveURL(/[?&]x=/);
    await page.keyboard.press("Escape");
    await expect(page).not.toHaveURL(/[?&]x=/);
  });

  test("a click on a step opens its Rollouts view; [ ] move the step cursor", async ({ page }) => {
    await page.goto(`${RUN}/metrics?cat=rollout`);
    const chart = chartOf(page, "rollout/rewards_mean");
    await expect(chart).toHaveAttribute("data-points", "3");
    await page.keyboard.press("]");
    await expect(page).toHaveURL(/step=0/);
    await page.keyboard.press("]");
    await expect(page).toHaveURL(/step=1/);
    await expect(page.getByTestId("step-cursor")).toContainText("step 1");
    await expect(card(page, "rollout/rewards_mean")).toContainText("rollout 1: 0.450");

    const p = await plotBox(chart);
    // rewards 0.40 / 0.45 / 0.50 over steps 0..2: step 1 sits in the middle of the plot
    await page.mouse.click(p.left + p.width / 2, p.top + p.height / 2);
    await expect(page).toHaveURL(/\/runs\/miles-demo\/rollout\/1$/);
  });

  test("sglang: one line per engine, legend hides engines everywhere, dp split in the URL", async ({ page }) => {
    await page.goto(`${RUN}/metrics?cat=sglang`);
    const legend = page.getByRole("complementary", { name: "Engines" });
    await expect(legend.getByRole("checkbox")).not.toHaveCount(0);
    const engines = legend.locator(".legend-row");
    await expect(engines.first()).toBeVisible();
    const n = await engines.count();
    expect(n).toBeGreaterThanOrEqual(2);
    const c = card(page, "sglang_num_running_reqs");
    await expect(c).toContainText(`${n} series`);
    await shot(page, "metrics-sglang");

    await engines.first().getByRole("checkbox").click();
    await expect(page).toHaveURL(/hide=/);
    await expect(c).toContainText(`${n - 1} series`);
    await engines.nth(1).getByRole("button", { name: "solo" }).click();
    await expect(c).toContainText("1 series");
    await legend.getByRole("button", { name: "show all" }).click();
    await expect(c).toContainText(`${n} series`);

    // the fixture's engines report no dp_rank label, so the split keeps one series per engine
    await legend.getByLabel("split by dp rank").click();
    await expect(page).toHaveURL(/dp=1/);
    await expect(legend.getByLabel("split by dp rank")).toBeChecked();
    await expect(c).toContainText(`${n} series`);
  });

  test("cards take no pointer events while the page scrolls; hover comes back once it stops", async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 420 }); // the sglang cards run past the fold
    await page.goto(`${RUN}/metrics?cat=sglang`);
    const first = page.getByTestId("metric-card").first();
    await expect(first.locator("canvas[data-painted]").first()).toHaveAttribute("data-painted", "data");
    // the engines' zero line runs along the plot's bottom: a point within reach anywhere there
    const zeroLine = async (at: number) => {
      const p = await plotBox(first.getByTestId("chart"));
      await page.mouse.move(p.left + p.width * at, p.top + p.height - 4);
    };
    await zeroLine(0.5);
    await expect(page.getByRole("tooltip")).toBeVisible();

    // every change of the page's mark, with the cards' pointer events at that moment
    await page.evaluate(() => {
      const w = window as unknown as { marks: [boolean, string][] };
      w.marks = [];
      new MutationObserver(() => {
        const card = document.querySelector('[data-testid="metric-card"]')!;
        w.marks.push([document.documentElement.hasAttribute("data-scrolling"), getComputedStyle(card).pointerEvents]);
      }).observe(document.documentElement, { attributes: true, attributeFilter: ["data-scrolling"] });
    });
    await page.mouse.wheel(0, 60);
    await expect(page.getByRole("tooltip")).toHaveCount(0); // the card under the pointer let go of it
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { marks: [boolean, string][] }).marks))
      .toEqual([
        [true, "none"],
        [false, "auto"],
      ]);

    await zeroLine(0.4);
    await expect(page.getByRole("tooltip")).toBeVisible();
  });

  test("dark theme stays readable", async ({ page }) => {
    await page.goto(`${RUN}/metrics?cat=perf`);
    await expect(chartOf(page, "perf/step_time")).toHaveAttribute("data-points", "3");
    await page.getByRole("button", { name: "Toggle dark theme" }).click();
    await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
    await shot(page, "metrics-dark");
    await page.getByRole("button", { name: "Toggle dark theme" }).click();
  });
});

test.describe("Metrics density", () => {
  test("a dense series is drawn as a min/max envelope with a visible mark; gaps stay gaps", async ({ page }) => {
    const name = `dense-${Date.now()}`;
    const dash = path.join(E2E.runsRoot, name, "dashboard");
    fs.mkdirSync(dash, { recursive: true });
    fs.writeFileSync(path.join(dash, "meta.json"), JSON.stringify({ run_name: name, start_ts: 1000, args: {}, schema_version: 1 }));
    const lines: string[] = [];
    for (let s = 0; s < 6000; s++) {
      // a spike at 4321, a hole of missing values 2000–2299, noise elsewhere
      const v = s === 4321 ? 5 : s >= 2000 && s < 2300 ? null : Math.sin(s / 90) * 0.2 + ((s * 7919) % 100) / 1000;
      lines.push(JSON.stringify({ ts: 1000 + s, step_key: "rollout/step", step: s, metrics: { "rollout/noisy_reward": v } }));
    }
    fs.writeFileSync(path.join(dash, "metrics.jsonl"), `${lines.join("\n")}\n`);
    await page.goto(`/runs/${name}/metrics`);
    const chart = chartOf(page, "rollout/noisy_reward");
    await expect(chart).toHaveAttribute("data-points", "5700");
    await expect(chart).toHaveAttribute("data-reduced", "true");
    await expect(card(page, "rollout/noisy_reward").getByText(/min\/max · 6,000 pts/)).toBeVisible();
    // the spike survives the reduction: it sets the top of the y domain
    await expect.poll(async () => Number(await chart.getAttribute("data-y1"))).toBeGreaterThan(5);
    await shot(page, "metrics-dense");
    // zooming in far enough brings back the raw points
    const p = await plotBox(chart);
    await drag(page, [p.left + p.width * 0.5, p.top + 40], [p.left + p.width * 0.53, p.top + 42]);
    await expect(chart).toHaveAttribute("data-reduced", "false");
    await removeRuns(name);
  });
});

test.describe("Metrics follow mode", () => {
  test("a step appended to the run's files appears without a reload", async ({ page }) => {
    const name = `follow-metrics-${Date.now()}`;
    const dir = path.join(E2E.runsRoot, name);
    fs.cpSync(path.join(E2E.runsRoot, "miles-demo"), dir, { recursive: true });
    await page.goto(`/runs/${name}/metrics?cat=rollout`);
    const chart = chartOf(page, "rollout/rewards_mean");
    await expect(chart).toHaveAttribute("data-points", "3");
    await expect(page.getByTestId("freshness")).toBeVisible();

    const rec = { ts: 1000425.0, step_key: "rollout/step", step: 3, metrics: { "rollout/rewards_mean": 0.55, "rollout/brand_new_metric": 7, "perf/step_time": 92.0, "perf/wait_time_ratio": 0.1 } };
    fs.appendFileSync(path.join(dir, "dashboard", "metrics.jsonl"), `${JSON.stringify(rec)}\n`);

    await expect(chart).toHaveAttribute("data-points", "4", { timeout: 30_000 });
    await expect(chart).toHaveAttribute("data-last-x", "3");
    // a key that did not exist at page load shows up as a new chart
    await expect(card(page, "rollout/brand_new_metric")).toBeVisible({ timeout: 30_000 });
    await shot(page, "metrics-follow");
    await removeRuns(name);
  });
});
