import { expect, test, type Page } from "@playwright/test";
import { E2E } from "./env";

// Issue #16: the drift explorer, staleness, search and find-in-conversation, on the
// generated demo run (lib/demo/qwen.ts: train dumps, sidecar, tokenizer) and on the
// shipped fixture run `miles-demo` (train steps 0–2).
const DEMO = "/runs/qwen3-4b-grpo-demo";
const FIXTURE = "/runs/miles-demo";
const shot = (page: Page, name: string) => page.screenshot({ path: `${E2E.screenshots}/${name}.png`, fullPage: true });
const panel = (page: Page) => page.getByRole("tabpanel", { name: "Drift" });

test.describe("Drift explorer", () => {
  test("demo run: histogram, bins, clip count, and a bin's top sample opens its worst token", async ({ page }) => {
    await page.goto(`${DEMO}/rollout`);
    await page.getByRole("tab", { name: "Drift" }).click();
    await expect(page).toHaveURL(/tab=drift/);
    await expect(panel(page)).toHaveAttribute("data-state", "ready", { timeout: 60_000 });
    const summary = page.getByLabel("Drift summary");
    await expect(summary).toContainText("tokens");
    await expect(page.getByTestId("clip-count")).toContainText("outside [0.8, 1.25]");
    await expect(page.getByRole("img", { name: "lp_diff histogram" }).locator("rect").first()).toBeAttached();
    const rows = page.getByRole("table", { name: "Drift bins" }).locator("tbody tr");
    await expect.poll(() => rows.count()).toBeGreaterThan(1);
    await rows.first().click();
    await expect(page).toHaveURL(/dbin=0/);
    const top = page.getByLabel("Top samples of the bin").getByRole("link").first();
    await expect(top).toBeVisible();
    await shot(page, "drift-demo-position");
    const href = (await top.getAttribute("href")) ?? "";
    expect(href).toMatch(/tab=tokens/);
    expect(href).toMatch(/range=\d+-\d+/);
    await top.click();
    await expect(page).toHaveURL(/\/sample\/\d+\?.*tab=tokens/);
    await expect(page.getByRole("tab", { name: "Tokens" })).toHaveAttribute("aria-selected", "true");
    await expect(page.getByText(/highlighted: \d+/)).toBeVisible({ timeout: 30_000 });
    await shot(page, "drift-worst-token");
  });

  test("demo run: by segment and by weight version; the staleness panel", async ({ page }) => {
    await page.goto(`${DEMO}/rollout/2?tab=drift&dby=segment`);
    await expect(panel(page)).toHaveAttribute("data-state", "ready", { timeout: 60_000 });
    const table = page.getByRole("table", { name: "Drift bins" });
    await expect(table.locator("tbody tr td:first-child")).toHaveText(["text", /first 32 after a tool result/, "thinking", "final answer"]);
    await page.getByLabel("Drift breakdown").selectOption("version");
    await expect(page).toHaveURL(/dby=version/);
    await expect(table.locator("tbody tr td:first-child").first()).toHaveText(/^v\d+|no version/);
    const st = page.getByLabel("Staleness summary");
    await expect(st).toContainText("token-weighted mean");
    await expect(page.getByRole("img", { name: "Staleness vs response length" }).locator("circle").first()).toBeAttached();
    await shot(page, "drift-demo-version-staleness");
  });

  test("fixture run: drift by position with a narrower clip counts more tokens outside it", async ({ page }) => {
    await page.goto(`${FIXTURE}/rollout/1?tab=drift`);
    await expect(panel(page)).toHaveAttribute("data-state", "ready", { timeout: 60_000 });
    const clip = page.getByTestId("clip-count");
    const wide = Number((await clip.locator("b").textContent()) ?? "NaN");
    await page.goto(`${FIXTURE}/rollout/1?tab=drift&dlo=0.99&dhi=1.01`);
    await expect(panel(page)).toHaveAttribute("data-state", "ready", { timeout: 60_000 });
    await expect(clip).toContainText("outside [0.99, 1.01]");
    const narrow = Number((await clip.locator("b").textContent()) ?? "NaN");
    expect(narrow).toBeGreaterThanOrEqual(wide);
    await shot(page, "drift-fixture");
  });

  test("eval steps say why there is no drift or staleness", async ({ page }) => {
    await page.goto(`${FIXTURE}/rollout/0?eval=1&tab=drift`);
    await expect(panel(page)).toHaveAttribute("data-state", "ready", { timeout: 60_000 });
    await expect(panel(page)).toContainText("eval step");
    await expect(page.getByTestId("staleness-reason")).toContainText("eval step");
  });

  test("the Metrics view lists the drift and staleness categories", async ({ page }) => {
    await page.goto(`${FIXTURE}/metrics?cat=drift`);
    const cats = page.getByRole("navigation", { name: "Categories" });
    await expect(cats.getByRole("button", { name: /^drift/ })).toHaveAttribute("aria-pressed", "true");
    await expect(cats.getByRole("button", { name: /^staleness/ })).toBeVisible();
    await expect(page.locator('[data-testid="metric-card"][data-key="drift/abs_lp_diff/p99"] [data-testid="chart"]')).toHaveAttribute("data-points", "3", {
      timeout: 60_000,
    });
    await shot(page, "metrics-drift");
  });
});

test.describe("Rollout search and find in conversation", () => {
  test("search a step range, open a hit, the conversation finds it in place", async ({ page }) => {
    await page.goto(`${DEMO}/rollout/2?tab=search`);
    await page.getByLabel("Search text").fill("the");
    await page.getByLabel("Search steps").fill("0-2");
    await page.getByRole("button", { name: "Search" }).click();
    await expect(page).toHaveURL(/sq=the/);
    await expect(page.getByTestId("search-count")).toContainText(/\d+\+? hits? in steps 0–2/, { timeout: 60_000 });
    const results = page.getByRole("list", { name: "Search results" });
    await expect(results.locator("mark").first()).toHaveText(/the/i);
    await shot(page, "search-results");
    await results.getByRole("link").first().click();
    await expect(page).toHaveURL(/find=the/);
    const find = page.getByRole("searchbox", { name: "Find in conversation" });
    await expect(find).toHaveValue("the");
    await expect(page.getByTestId("find-count")).toHaveText(/^1 \/ \d+$/);
    await find.press("Enter");
    await expect(page.getByTestId("find-count")).toHaveText(/^2 \/ \d+$/);
    await shot(page, "find-in-conversation");
  });

  test("an invalid regex is refused with the reason", async ({ page }) => {
    await page.goto(`${DEMO}/rollout/2?tab=search&sq=(unclosed&sre=1`);
    await expect(page.getByRole("tabpanel", { name: "Search" })).toContainText(/invalid regular expression/i, { timeout: 30_000 });
  });
});
