import fs from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import { E2E } from "./env";

// Chart controls of issue #15 (docs/charts.md §6–7) on the static Qwen demo run:
// train/lr-pg is a constant 1e-6, rollout/rewards straddles 0, perf/* are positive times.
const QWEN = "/runs/qwen3-4b-grpo-demo";
const shot = (page: Page, name: string) => page.screenshot({ path: `${E2E.screenshots}/${name}.png`, fullPage: false });
const card = (page: Page, key: string) => page.locator(`[data-testid="metric-card"][data-key="${key}"]`);
const chartOf = (page: Page, key: string) => card(page, key).getByTestId("chart");
const canvasOf = (page: Page, key: string) => card(page, key).locator("canvas");

/** Pixels of the chart's canvas in the plot box with alpha > 0, split by how opaque they are. */
async function inkOf(page: Page, key: string): Promise<{ faint: number; solid: number }> {
  return canvasOf(page, key).evaluate((c: HTMLCanvasElement) => {
    const ctx = c.getContext("2d")!;
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    let faint = 0;
    let solid = 0;
    // series pixels: the accent hue (green/blue channel over red) — grid lines are grey
    for (let i = 0; i < d.length; i += 4) {
      const [r, g, b, a] = [d[i]!, d[i + 1]!, d[i + 2]!, d[i + 3]!];
      if (a === 0 || Math.max(r, g, b) - Math.min(r, g, b) < 40) continue;
      if (a < 140) faint++;
      else solid++;
    }
    return { faint, solid };
  });
}

test.describe("chart controls", () => {
  test("a drawn chart is shown as an image of its canvas, and a repaint replaces it", async ({ page }) => {
    // docs/charts.md §7: a canvas is a compositor layer re-sent on every commit; the image is not
    const key = "perf/actor_train_time";
    const img = card(page, key).locator("img.chart-img");
    /** the shown image against the canvas it was made from, pixel by pixel */
    const compare = () =>
      card(page, key).evaluate(async (el) => {
        const im = el.querySelector<HTMLImageElement>("img.chart-img")!;
        const c = el.querySelector("canvas")!;
        await im.decode();
        const t = document.createElement("canvas");
        t.width = c.width;
        t.height = c.height;
        const tx = t.getContext("2d")!;
        tx.drawImage(im, 0, 0);
        const a = tx.getImageData(0, 0, t.width, t.height).data;
        const b = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
        let differ = 0;
        let ink = 0;
        for (let i = 0; i < b.length; i += 4) {
          if (b[i + 3]! > 0) ink++;
          // alpha everywhere; colour where it is opaque enough to survive premultiplication exactly
          const rgb = b[i + 3]! >= 200 ? Math.max(Math.abs(a[i]! - b[i]!), Math.abs(a[i + 1]! - b[i + 1]!), Math.abs(a[i + 2]! - b[i + 2]!)) : 0;
          if (Math.abs(a[i + 3]! - b[i + 3]!) > 1 || rgb > 2) differ++;
        }
        return { natural: [im.naturalWidth, im.naturalHeight], bitmap: [c.width, c.height], differ, ink, canvasShown: getComputedStyle(c).display !== "none" };
      });

    await page.goto(`${QWEN}/metrics?cat=perf`);
    await expect(img).toHaveAttribute("data-painted", "data");
    await expect(img).toBeVisible();
    await expect(canvasOf(page, key)).toBeHidden();
    const first = await compare();
    expect(first.natural).toEqual(first.bitmap);
    expect(first.ink).toBeGreaterThan(1000);
    expect(first.differ).toBe(0);
    expect(first.canvasShown).toBe(false);
    const before = await img.getAttribute("src");
    expect(before).toMatch(/^blob:/);

    // a repaint (log y) is shown, then becomes a new image of the new drawing
    await page.getByLabel("Log-scale y").check();
    await expect(chartOf(page, key)).toHaveAttribute("data-y-scale", "log");
    await expect.poll(() => img.getAttribute("src")).not.toBe(before);
    await expect(img).toHaveAttribute("data-painted", "data");
    const second = await compare();
    expect(second.differ).toBe(0);
    expect(second.canvasShown).toBe(false);
    // the old image's blob is released
    expect(await page.evaluate((u) => fetch(u).then(() => "kept", () => "revoked"), before!)).toBe("revoked");
  });

  test("smoothing draws an EMA over the faint raw line; the URL reproduces it", async ({ page }) => {
    await page.goto(`${QWEN}/metrics?cat=perf`);
    await expect(canvasOf(page, "perf/actor_train_time")).toHaveAttribute("data-painted", "data");
    await expect(canvasOf(page, "perf/actor_train_time")).toHaveAttribute("data-layers", "raw");
    const before = await inkOf(page, "perf/actor_train_time");
    expect(before.solid).toBeGreaterThan(50);

    await page.getByLabel("Smoothing").selectOption("ema");
    await expect.poll(() => decodeURIComponent(page.url())).toMatch(/sm=ema:0\.6/);
    const slider = page.getByLabel("EMA weight");
    await slider.fill("0.9");
    await expect.poll(() => decodeURIComponent(page.url())).toMatch(/sm=ema:0\.9/);
    await expect(chartOf(page, "perf/actor_train_time")).toHaveAttribute("data-smoothing", "ema:0.9");
    await expect(canvasOf(page, "perf/actor_train_time")).toHaveAttribute("data-layers", "raw,smooth");
    const after = await inkOf(page, "perf/actor_train_time");
    // the raw line is still drawn (faint) and the smoothed one on top (solid)
    expect(after.faint).toBeGreaterThan(50);
    expect(after.solid).toBeGreaterThan(50);
    await shot(page, "chart-controls-smoothing");

    // running mean, then the link reproduces the view
    await page.getByLabel("Smoothing").selectOption("mean");
    await expect.poll(() => decodeURIComponent(page.url())).toMatch(/sm=mean:10/);
    const url = page.url();
    const other = await page.context().newPage();
    await other.goto(url);
    await expect(other.getByLabel("Smoothing")).toHaveValue("mean");
    await expect(other.getByLabel("Running mean window")).toHaveValue("10");
    await expect(other.locator('[data-testid="metric-card"][data-key="perf/actor_train_time"] [data-testid="chart"]')).toHaveAttribute("data-smoothing", "mean:10");
    await other.close();
  });

  test("log y labels ticks with values and says how many values ≤ 0 it hides", async ({ page }) => {
    await page.goto(`${QWEN}/metrics?cat=rollout&ylog=1`);
    await expect(page.getByLabel("Log-scale y")).toBeChecked();
    const rewards = chartOf(page, "rollout/rewards");
    await expect(rewards).toHaveAttribute("data-y-scale", "log");
    await expect(card(page, "rollout/rewards").getByTestId("chart-log-hidden")).toContainText(/\d+ values? ≤ 0 hidden \(log scale\)/);
    const ticks = (await chartOf(page, "rollout/response_lengths").getAttribute("data-y-ticks"))!.split("|");
    expect(ticks.length).toBeGreaterThanOrEqual(2);
    // labels are values (e.g. 2000, 5000), not their logarithms (3.3, 3.7)
    for (const t of ticks) expect(Number(t)).toBeGreaterThan(10);
    await expect(card(page, "rollout/response_lengths").locator(".chart-axes")).toContainText(ticks[0]!);
    await shot(page, "chart-controls-log");
    await page.getByLabel("Log-scale y").uncheck();
    await expect(page).not.toHaveURL(/ylog=/);
    await expect(rewards).toHaveAttribute("data-y-scale", "linear");
  });

  test("x = step, wall time or time since the run start changes the axis labels", async ({ page }) => {
    await page.goto(`${QWEN}/metrics?cat=perf`);
    const axis = card(page, "perf/actor_train_time").locator(".chart-axes");
    await expect(canvasOf(page, "perf/actor_train_time")).toHaveAttribute("data-painted", "data");
    await expect(axis).not.toContainText(":");
    await page.getByLabel("x axis").selectOption("rel");
    await expect(page).toHaveURL(/xm=rel/);
    await expect(axis).toContainText(/\+\d+:\d\d/); // elapsed time labels, +m:ss
    await page.getByLabel("x axis").selectOption("wall");
    await expect(page).toHaveURL(/xm=wall/);
    await expect(axis).toContainText(/\d\d:\d\d:\d\d/); // wall clock HH:MM:SS
    await expect(axis).not.toContainText("+");
    await shot(page, "chart-controls-wall");
  });

  test("a constant series says so and is drawn centred on its one gridline", async ({ page }) => {
    await page.goto(`${QWEN}/metrics?cat=train`);
    const lr = chartOf(page, "train/lr-pg");
    await expect(card(page, "train/lr-pg").getByTestId("chart-constant")).toHaveText("constant 1e-6 over the run");
    await expect(lr).toHaveAttribute("data-y-ticks", "1.0e-6");
    const y0 = Number(await lr.getAttribute("data-y0"));
    const y1 = Number(await lr.getAttribute("data-y1"));
    expect(y0).toBeGreaterThan(0);
    expect((y0 + y1) / 2).toBeCloseTo(1e-6, 12);
    await expect(card(page, "train/lr-pg").locator(".chart-axes")).not.toContainText("0.0");
    await card(page, "train/lr-pg").scrollIntoViewIfNeeded();
    await shot(page, "chart-controls-constant");
  });

  test("a chart downloads its series as CSV and itself as PNG", async ({ page }) => {
    await page.goto(`${QWEN}/metrics?cat=perf&sm=ema:0.5`);
    await expect(canvasOf(page, "perf/actor_train_time")).toHaveAttribute("data-painted", "data");
    const points = Number(await chartOf(page, "perf/actor_train_time").getAttribute("data-points"));
    const [csv] = await Promise.all([page.waitForEvent("download"), card(page, "perf/actor_train_time").getByRole("button", { name: "Download perf/actor_train_time as CSV" }).click()]);
    expect(csv.suggestedFilename()).toBe("perf_actor_train_time.csv");
    const text = fs.readFileSync(await csv.path(), "utf8");
    const lines = text.trim().split("\n");
    expect(lines[0]).toBe("series,step,value,smoothed");
    expect(lines.length - 1).toBe(points);
    expect(lines[1]).toMatch(/^perf\/actor_train_time,\d+,[\d.]+,[\d.]+$/);

    const [png] = await Promise.all([page.waitForEvent("download"), card(page, "perf/actor_train_time").getByRole("button", { name: "Download perf/actor_train_time as PNG" }).click()]);
    expect(png.suggestedFilename()).toBe("perf_actor_train_time.png");
    const bytes = fs.readFileSync(await png.path());
    expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(bytes.length).toBeGreaterThan(2000);
  });

  test("the rollouts table downloads the rows and columns shown as CSV", async ({ page }) => {
    await page.goto(`${QWEN}/rollout/0`);
    const count = page.getByTestId("dt-count").first();
    await expect(count).toContainText(/^\d+ rows/);
    await page.getByLabel("Filter response_length").first().fill(">200");
    await expect(count).toContainText(/of \d+ rows/);
    const shown = Number(/^(\d+) of/.exec((await count.textContent())!)![1]);
    const [dl] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download Samples of step 0 as CSV" }).click()]);
    const lines = fs.readFileSync(await dl.path(), "utf8").trim().split("\n");
    expect(lines.length - 1).toBe(shown);
    const header = lines[0]!.split(",");
    const len = header.indexOf("response_length");
    expect(len).toBeGreaterThanOrEqual(0);
    expect(header).toContain("raw_reward"); // the visible columns, not only the filtered one
    for (const l of lines.slice(1)) expect(Number(l.split(",")[len])).toBeGreaterThan(200);
  });

  test("off-screen cards are deferred until scrolled near, then drawn", async ({ page }) => {
    await page.setViewportSize({ width: 800, height: 400 }); // one card per row: the last ones are far below
    await page.goto(`${QWEN}/metrics?cat=train`);
    const cards = page.getByTestId("metric-card");
    await expect(cards.first().locator("canvas")).toHaveAttribute("data-painted", "data");
    const n = await cards.count();
    expect(n).toBeGreaterThan(6);
    const last = cards.nth(n - 1);
    await expect(last.locator("canvas")).toHaveAttribute("data-painted", "deferred");
    await last.scrollIntoViewIfNeeded();
    await expect(last.locator("canvas")).toHaveAttribute("data-painted", /^(data|empty)$/);
  });
});

test.describe("a page of cards loads as few requests as the API allows (#15)", () => {
  test("the first screen's cards come in one /api/metrics request per step axis (two here), not one per card; every card on screen is drawn", async ({ page }) => {
    const reqs: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/api/metrics?")) reqs.push(decodeURIComponent(new URL(r.url()).searchParams.get("keys") ?? ""));
    });
    await page.goto(`${QWEN}/metrics?cat=train`);
    const cards = page.getByTestId("metric-card");
    await expect(cards.first().locator("canvas")).toHaveAttribute("data-painted", "data");
    const undrawnOnScreen = () =>
      page.evaluate(() => {
        let n = 0;
        let onScreen = 0;
        for (const c of document.querySelectorAll('[data-testid="metric-card"]')) {
          const r = c.getBoundingClientRect();
          if (r.bottom <= 0 || r.top >= window.innerHeight) continue;
          onScreen++;
          if (!/^(data|empty)$/.test(c.querySelector("canvas")?.getAttribute("data-painted") ?? "")) n++;
        }
        return { undrawn: n, onScreen };
      });
    await expect.poll(async () => (await undrawnOnScreen()).undrawn).toBe(0);
    const { onScreen } = await undrawnOnScreen();
    expect(onScreen).toBeGreaterThan(2);
    // the train category: rollout/log_probs on rollout/step, the train/* keys on train/step
    expect(reqs.length, `requests: ${JSON.stringify(reqs)}`).toBe(2);
    expect(reqs.reduce((a, r) => a + r.split(",").length, 0)).toBeGreaterThanOrEqual(onScreen);
    expect(Math.max(...reqs.map((r) => r.split(",").length))).toBeGreaterThanOrEqual(onScreen - 1);
  });
});
