import { expect, test, type Page } from "@playwright/test";
import { E2E } from "./env";

const RUN = "/runs/miles-demo";
// RV_SCREENS lets a run keep its screenshots out of the shared test-results folder.
const SCREENS = process.env.RV_SCREENS ?? E2E.screenshots;
const shot = (page: Page, name: string) => page.screenshot({ path: `${SCREENS}/${name}.png`, fullPage: true });

test.describe("Sample view", () => {
  test("a deep link to the tokens tab preloads its data, and each answer is fetched once (one audit entry)", async ({ page }) => {
    const apiCalls: string[] = [];
    page.on("request", (r) => {
      const u = new URL(r.url());
      if (u.pathname.startsWith("/api/rollout/")) apiCalls.push(u.pathname);
    });
    await page.goto(`${RUN}/rollout/0/sample/1?tab=tokens`);
    await expect(page.getByTestId("token-strip").locator(".ts-tok").first()).toBeVisible();
    await expect(page.locator(".sv-tokens canvas")).toHaveAttribute("data-painted", "data");
    const preloaded = await page.locator('link[rel="preload"][as="fetch"]').evaluateAll((ls) => ls.map((l) => new URL((l as HTMLLinkElement).href).pathname));
    for (const p of ["/api/rollout/0/sample/1/tokens", "/api/rollout/0/sample/1/messages", "/api/rollout/0/summary"]) {
      expect(preloaded, p).toContain(p);
      expect(apiCalls.filter((c) => c === p), p).toHaveLength(1);
    }
  });


  test("conversation with a tool-call chip, tokens tab, colour metric, chart zoom, group navigation", async ({ page }) => {
    await page.goto(`${RUN}/rollout/0`);
    await page.getByRole("table", { name: /^Samples of step/ }).getByRole("link", { name: "0", exact: true }).click();
    await expect(page).toHaveURL(/\/rollout\/0\/sample\/0$/);
    await expect(page.getByRole("heading", { name: /Sample 0/ })).toBeVisible();
    await expect(page.getByRole("tab", { name: "Conversation" })).toHaveAttribute("aria-selected", "true");
    await expect(page.getByTestId("message-card")).toHaveCount(5);
    const chip = page.getByTestId("tool-call-chip").first();
    await expect(chip).toContainText("lookup");
    await expect(page.locator(".sv-args").first()).toContainText('"query": "answer"');
    await expect(page.getByRole("heading", { name: /Sample s0 lifecycle/ })).toBeVisible();
    await expect(page.getByTestId("group-position")).toHaveText("Group 0 · sample 1/4");
    await shot(page, "sample-conversation");

    await page.getByRole("tab", { name: "Tokens" }).click();
    await expect(page).toHaveURL(/tab=tokens/);
    await expect(page.getByTestId("token-range")).toHaveText("tokens 0–34 of 34 (prompt 6)");
    await expect(page.getByTestId("token-strip").locator(".ts-tok")).toHaveCount(34);
    await expect(page.getByRole("heading", { name: /Tokens — colored by imp_ratio/ })).toBeVisible();
    await page.getByLabel("Color tokens by").selectOption("entropy");
    await expect(page.getByRole("heading", { name: /Tokens — colored by entropy/ })).toBeVisible();
    await expect(page).toHaveURL(/color=entropy/);
    await page.getByTestId("token-strip").locator(".ts-tok").nth(10).hover();
    await expect(page.getByRole("tooltip")).toContainText("entropy =");

    await page.getByRole("button", { name: "lp_diff", exact: true }).click();
    await expect(page.getByRole("button", { name: "lp_diff", exact: true })).toHaveAttribute("aria-pressed", "true");
    const plot = page.getByTestId("chart-plot");
    await plot.scrollIntoViewIfNeeded();
    const b = (await plot.boundingBox())!;
    await page.mouse.move(b.x + b.width * 0.3, b.y + b.height / 2);
    await page.mouse.down();
    await page.mouse.move(b.x + b.width * 0.7, b.y + b.height / 2 + 3, { steps: 8 });
    await page.mouse.up();
    await expect(page).toHaveURL(/range=/);
    await expect(page.getByRole("button", { name: "reset zoom" })).toBeVisible();
    await expect(page.getByRole("heading", { name: /highlighted:/ })).toBeVisible();
    await expect(page.getByTestId("token-strip").locator(".ts-hl").first()).toBeVisible();
    await shot(page, "sample-tokens-zoomed");
    await plot.dblclick();
    await expect(page).not.toHaveURL(/range=/);

    await page.getByRole("link", { name: "Next in group ▶" }).click();
    await expect(page).toHaveURL(/\/sample\/1\?/);
    await expect(page.getByTestId("group-position")).toHaveText("Group 0 · sample 2/4");
    // tab and colour choice carry over to the sibling
    await expect(page.getByRole("heading", { name: /Tokens — colored by entropy/ })).toBeVisible();
    await page.locator("body").press("[");
    await expect(page).toHaveURL(/\/sample\/0\?/);
  });

  test("per-token metrics line up under the conversation", async ({ page }) => {
    await page.goto(`${RUN}/rollout/1/sample/33`);
    await expect(page.getByTestId("tool-call-chip").first()).toBeVisible();
    await page.getByRole("checkbox", { name: /under each turn/ }).click();
    await expect(page).toHaveURL(/turns=1/);
    await expect(page.locator(".sv-turnmetrics").first()).toBeVisible();
    await expect(page.locator(".sv-turnmetrics").first()).toContainText("mean imp_ratio");
    await shot(page, "sample-turn-metrics");
  });

  test("an eval sample without a conversation goes straight to its tokens", async ({ page }) => {
    await page.goto(`${RUN}/rollout/0/sample/1?eval=1`);
    await expect(page.getByTestId("no-conversation")).toContainText(/^No conversation: /);
    await expect(page.getByTestId("token-range")).toContainText("of 15");
    await expect(page.getByRole("heading", { name: /Tokens — colored by rollout_log_probs/ })).toBeVisible();
    await expect(page.getByRole("heading", { name: /lifecycle/ })).toHaveCount(0);
    await shot(page, "sample-eval-tokens");
  });
});
