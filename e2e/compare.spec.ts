import { expect, test } from "@playwright/test";
import { E2E } from "./env";

const BASE = "qwen3-4b-grpo-demo";
const ABLATION = "qwen3-4b-grpo-ablation";
const KEY = "sglang_mem_fraction_static";
const compareUrl = `/compare?runs=${BASE},${ABLATION}&view=diff`;

test("select two runs, Compare, read the single-variable verdict; the overlay draws both runs", async ({ page }) => {
  await page.goto("/");
  const compare = page.getByRole("button", { name: /^Compare/ });
  await expect(compare).toBeDisabled();
  await page.getByLabel(`Select ${BASE} for compare`).check();
  await page.getByLabel(`Select ${ABLATION} for compare`).check();
  await expect(page.getByText(`baseline: ${BASE}`)).toBeVisible();
  await compare.click();
  await expect(page).toHaveURL(new RegExp(`/compare\\?runs=${BASE}%2C${ABLATION}&view=diff`));
  const verdict = page.getByTestId("compare-verdict");
  await expect(verdict).toHaveAttribute("data-kind", "single");
  await expect(verdict).toContainText(`only ${KEY} differs`);
  await expect(page.getByTestId("config-delta")).toContainText("0.85");
  await expect(page.getByTestId("config-delta")).toContainText("0.9");
  const stepTime = page.getByTestId("kpi-table").locator('tr[data-key="perf/step_time"]');
  await expect(stepTime).toContainText("median");
  await expect(stepTime.locator("td.cmp-delta").first()).not.toHaveText("—");
  await expect(page.getByTestId("movers").locator("tbody tr").first()).toBeVisible();
  await expect(page.getByTestId("availability")).toContainText("Rollout dumps");
  await page.screenshot({ path: `${E2E.screenshots}/compare-diff.png`, fullPage: true });

  const metricRequests: URL[] = [];
  page.on("request", (r) => {
    if (r.url().includes("/api/metrics?")) metricRequests.push(new URL(r.url()));
  });
  await page.getByRole("link", { name: "Metrics overlay" }).click();
  await expect(page).toHaveURL(/view=metrics/);
  // the first category (rollout) by default: one chart per metric, both runs drawn
  await expect(page.locator('[data-testid="overlay-card"][data-key="rollout/raw_reward"] img.chart-img[data-painted="data"]')).toBeVisible({ timeout: 20_000 });
  await expect(page.getByLabel("Legend")).toContainText(ABLATION);
  await expect(page.locator('[data-testid="overlay-card"][data-key="rollout/raw_reward"]')).toContainText(/\d+ \/ 16 pts/);
  // what the card draws is both runs' own single-key JSON answers (it fetched them batched, as binary frames)
  const series = async (run: string) =>
    ((await (await page.request.get(`/api/metrics?run=${run}&keys=rollout%2Fraw_reward`)).json()) as Record<string, { x: (number | null)[]; y: unknown[] }>)["rollout/raw_reward"]!;
  const [sa, sb] = [await series(BASE), await series(ABLATION)];
  const xs = (s: { x: (number | null)[] }) => s.x.filter((v): v is number => typeof v === "number" && Number.isFinite(v));
  const finiteY = (s: { x: (number | null)[]; y: unknown[] }) => s.y.filter((v, i) => typeof v === "number" && Number.isFinite(v) && typeof s.x[i] === "number").length;
  const rewardCard = page.locator('[data-testid="overlay-card"][data-key="rollout/raw_reward"]');
  await expect(rewardCard).toContainText(`${xs(sa).length} / ${xs(sb).length} pts`);
  await expect(rewardCard.getByTestId("chart")).toHaveAttribute("data-points", String(finiteY(sa) + finiteY(sb)));
  await expect(rewardCard.getByTestId("chart")).toHaveAttribute("data-last-x", String(Math.max(...xs(sa), ...xs(sb))));
  // one request per run for the cards that came near together, several keys each
  expect(metricRequests.length).toBeGreaterThan(0);
  expect(metricRequests.every((u) => u.searchParams.get("format") === "bin")).toBe(true);
  expect(Math.max(...metricRequests.map((u) => (u.searchParams.get("keys") ?? "").split(",").length))).toBeGreaterThan(1);
  // a metric only the baseline logs names the run that lacks it
  await expect(page.locator('[data-testid="overlay-card"][data-key="rollout/turns"]').getByTestId("overlay-missing")).toContainText(`not in ${ABLATION}`);
  await page.getByRole("button", { name: /^perf/ }).click();
  await expect(page).toHaveURL(/cat=perf/);
  // cards draw once near the viewport (docs/charts.md §7): scroll to it as a person would
  await page.locator('[data-testid="overlay-card"][data-key="perf/step_time"]').scrollIntoViewIfNeeded();
  await expect(page.locator('[data-testid="overlay-card"][data-key="perf/step_time"] img.chart-img[data-painted="data"]')).toBeVisible();
  await page.getByRole("button", { name: /^rollout/ }).click();
  await page.getByLabel("x axis").selectOption("time");
  await expect(page).toHaveURL(/x=time/);
  await expect(page.locator('[data-testid="overlay-card"][data-key="rollout/raw_reward"] img.chart-img[data-painted="data"]')).toBeVisible();
  await page.screenshot({ path: `${E2E.screenshots}/compare-overlay.png`, fullPage: true });
});

test("the run list: config columns sticky in the URL, tags edited in place, args in the run header", async ({ page }) => {
  await page.goto("/");
  await page.getByText("Config columns").click();
  await page.getByRole("group", { name: "Config columns" }).getByLabel(KEY).check();
  await expect(page).toHaveURL(new RegExp(`cols=${KEY}`));
  const row = page.getByTestId("run-row").filter({ hasText: ABLATION });
  await expect(row).toContainText("0.9");
  await page.reload();
  await expect(page.getByRole("columnheader", { name: KEY })).toBeVisible();
  await row.getByRole("button", { name: `Edit tags and notes of ${ABLATION}` }).click();
  await row.getByRole("textbox", { name: "Tags", exact: true }).fill("ablation, kv-cache");
  await row.getByRole("textbox", { name: "Notes", exact: true }).fill("mem fraction 0.9");
  await row.getByRole("button", { name: "Save" }).click();
  await expect(row.locator(".run-tag")).toHaveText(["ablation", "kv-cache"]);
  await page.reload();
  await expect(page.getByTestId("run-row").filter({ hasText: ABLATION }).locator(".run-tag")).toHaveText(["ablation", "kv-cache"]);
  await page.goto(`/runs/${ABLATION}/metrics`);
  await page.getByText(/config \(\d+ args\)/).click();
  await expect(page.getByTestId("run-args")).toContainText(KEY);
});

test.describe("deep link", () => {
  test.use({ storageState: { cookies: [], origins: [] } });
  test("a /compare deep link survives the login", async ({ page }) => {
    await page.goto(compareUrl);
    await expect(page).toHaveURL(/\/login\?next=/);
    await page.getByLabel("User").fill(E2E.user);
    await page.getByLabel("Password").fill(E2E.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page).toHaveURL(new RegExp(`/compare\\?runs=${BASE}(,|%2C)${ABLATION}`));
    await expect(page.getByTestId("compare-verdict")).toHaveAttribute("data-kind", "single");
  });
});
