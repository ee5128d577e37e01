import { expect, test, type Page } from "@playwright/test";
import { E2E } from "./env";

// The fixture copy `miles-demo`: train steps 0–2 and eval step 0, 8 prompts × 4 samples.
const RUN = "/runs/miles-demo";
// RV_SCREENS lets a run keep its screenshots out of the shared test-results folder.
const SCREENS = process.env.RV_SCREENS ?? E2E.screenshots;
const shot = (page: Page, name: string) => page.screenshot({ path: `${SCREENS}/${name}.png`, fullPage: true });
const count = (page: Page) => page.getByTestId("dt-count").first();
const samplesTable = (page: Page) => page.getByRole("table", { name: /^Samples of step/ });

test.describe("Rollouts step view", () => {
  test("the server render preloads the step's data; each answer is fetched once; the view says when it is drawn", async ({ page }) => {
    const apiCalls: string[] = [];
    page.on("request", (r) => {
      const u = new URL(r.url());
      if (u.pathname.startsWith("/api/rollout/")) apiCalls.push(u.pathname);
    });
    await page.goto(`${RUN}/rollout/1`);
    await expect(page.locator(".rv")).toHaveAttribute("data-state", "ready");
    for (const c of await page.locator(".rv canvas").all()) await expect(c).toHaveAttribute("data-painted", "data");
    const preloaded = await page.locator('link[rel="preload"][as="fetch"]').evaluateAll((ls) => ls.map((l) => new URL((l as HTMLLinkElement).href).pathname));
    for (const p of ["/api/rollout/1/summary", "/api/rollout/1/groups", "/api/rollout/1/trajectories"]) {
      expect(preloaded, p).toContain(p);
      expect(apiCalls.filter((c) => c === p), p).toHaveLength(1);
    }
  });


  test("opens the newest train step with stats, anatomy, scatter and the sample table", async ({ page }) => {
    await page.goto(`${RUN}/rollout`);
    await expect(page).toHaveURL(/\/rollout\/2$/);
    await expect(page.getByTestId("stat-samples")).toContainText("32");
    await expect(page.getByTestId("stat-zero_std")).toContainText("2/8");
    await expect(page.getByTestId("step-position")).toHaveText("(3/3)");
    await expect(page.getByRole("heading", { name: /Batch anatomy/ })).toBeVisible();
    await expect(page.getByTestId("anatomy-canvas")).toBeVisible();
    await expect(page.getByRole("heading", { name: /raw_reward vs response_length/ })).toBeVisible();
    await expect(count(page)).toHaveText("32 rows");
    await expect(samplesTable(page).getByRole("columnheader", { name: /versions/ })).toBeVisible();
    await shot(page, "rollout-step2");
  });

  test("sorts and filters the table with the state in the URL", async ({ page }) => {
    await page.goto(`${RUN}/rollout/0`);
    const table = samplesTable(page);
    await expect(count(page)).toHaveText("32 rows");
    await table.getByRole("button", { name: /^raw_reward/ }).click();
    await expect(page).toHaveURL(/sort=raw_reward%3Adesc/);
    await expect(table.getByRole("columnheader", { name: /raw_reward/ })).toHaveAttribute("aria-sort", "descending");
    // descending: a reward-1 sample first
    const firstReward = table.locator("tbody tr:not(.dt-pad)").first().locator("td").nth(2);
    await expect(firstReward).toHaveText("1");
    await page.getByLabel("Filter group_index").fill("3");
    await expect(count(page)).toHaveText("4 of 32 rows");
    await expect(page).toHaveURL(/f=group_index%3A3/);
    await page.getByLabel("Filter response_length").fill(">10");
    await expect(count(page)).toContainText("of 32 rows");
    await shot(page, "rollout-sorted-filtered");
    // reload: sort and filters come back from the URL
    await page.reload();
    await expect(page.getByLabel("Filter group_index")).toHaveValue("3");
    await expect(samplesTable(page).getByRole("columnheader", { name: /raw_reward/ })).toHaveAttribute("aria-sort", "descending");
    await page.getByRole("button", { name: /clear filters/ }).click();
    await expect(count(page)).toHaveText("32 rows");
  });

  test("column chooser adds a column; groups tab flags zero-std groups and filters samples", async ({ page }) => {
    await page.goto(`${RUN}/rollout/0`);
    await page.getByText(/^Columns \d+\/\d+$/).click();
    // the checkbox is driven by the URL, so it turns checked once the URL has changed
    await page.getByRole("checkbox", { name: "status" }).click();
    await expect(page).toHaveURL(/cols=/);
    await expect(page.getByRole("checkbox", { name: "status" })).toBeChecked();
    await expect(samplesTable(page).getByRole("columnheader", { name: /status/ })).toBeVisible();
    await page.getByRole("tab", { name: "Groups" }).click();
    const groups = page.getByRole("table", { name: /^Groups of step/ });
    await expect(groups.locator("tbody tr.dt-bad")).toHaveCount(1);
    await shot(page, "rollout-groups");
    await groups.locator("tbody tr.dt-bad").first().click();
    await expect(page.getByRole("tab", { name: "Samples" })).toHaveAttribute("aria-selected", "true");
    await expect(count(page)).toHaveText("4 of 32 rows");
  });

  test("steps with buttons, the step input and [ ], sorts the anatomy and opens a sample from it", async ({ page }) => {
    await page.goto(`${RUN}/rollout/1`);
    await expect(page.getByTestId("step-position")).toHaveText("(2/3)");
    await page.getByRole("link", { name: "Next ▶" }).click();
    await expect(page).toHaveURL(/\/rollout\/2/);
    await page.locator("body").press("[");
    await expect(page).toHaveURL(/\/rollout\/1/);
    await expect(page.getByTestId("step-position")).toHaveText("(2/3)");
    const input = page.getByLabel("Go to step");
    await input.fill("0");
    await input.press("Enter");
    await expect(page).toHaveURL(/\/rollout\/0/);
    await page.getByRole("button", { name: "wall span" }).click();
    await expect(page).toHaveURL(/anat=span/);
    const canvas = page.getByTestId("anatomy-canvas");
    const box = (await canvas.boundingBox())!;
    await page.mouse.click(box.x + 150, box.y + 18 + 6);
    await expect(page).toHaveURL(/\/rollout\/0\/sample\/\d+/);
  });

  test("opens the eval step: eval label, no staleness, eval reward column", async ({ page }) => {
    await page.goto(`${RUN}/rollout/0`);
    await page.getByRole("link", { name: "Eval view" }).click();
    await expect(page).toHaveURL(/\/rollout\/0\?eval=1/);
    await expect(page.getByText("Eval step")).toBeVisible();
    await expect(page.getByTestId("stat-staleness")).toContainText("n/a");
    await expect(page.getByRole("heading", { name: /^reward vs response_length/ })).toBeVisible();
    await expect(page.getByRole("heading", { name: /Batch anatomy/ })).toHaveCount(0);
    await expect(count(page)).toHaveText("16 rows");
    await shot(page, "rollout-eval0");
    await page.getByRole("link", { name: "Train view" }).click();
    await expect(page).toHaveURL(/\/rollout\/0$/);
  });

  test("a step without a dump explains itself and links the newest step", async ({ page }) => {
    await page.goto(`${RUN}/rollout/99`);
    await expect(page.getByRole("heading", { name: "No train dump for step 99" })).toBeVisible();
    await page.getByRole("link", { name: /newest step \(2\)/ }).click();
    await expect(page).toHaveURL(/\/rollout\/2$/);
  });

  test("scatter drag-zoom turns into table filters", async ({ page }) => {
    await page.goto(`${RUN}/rollout/2`);
    // wait for everything above the scatter, so the layout no longer moves
    await expect(page.getByTestId("anatomy-canvas")).toBeVisible();
    await expect(count(page)).toHaveText("32 rows");
    const plot = page.getByTestId("chart-plot").first();
    await plot.scrollIntoViewIfNeeded();
    const b = (await plot.boundingBox())!;
    await page.mouse.move(b.x + 2, b.y + 2);
    await page.mouse.down();
    await page.mouse.move(b.x + b.width * 0.6, b.y + b.height - 2, { steps: 6 });
    await page.mouse.up();
    await page.getByRole("button", { name: "filter table to box" }).click();
    await expect(page).toHaveURL(/f=response_length/);
    await expect(count(page)).toContainText("of 32 rows");
  });
});
