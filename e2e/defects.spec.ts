import { expect, test, type Locator, type Page } from "@playwright/test";
import { E2E } from "./env";

// Issue #15's defects a new user hits, each as a person sees it, over the e2e demo runs
// (lib/demo/generate.ts) and the fixture copy `miles-demo`.
const FLEET = "/runs/llama-70b-gspo-64gpu";
const QWEN = "/runs/qwen3-4b-grpo-demo";
const OFFLINE = "/runs/offline-dumps-only";
const MILES = "/runs/miles-demo";
const shot = (page: Page, name: string) => page.screenshot({ path: `${E2E.screenshots}/${name}.png`, fullPage: true });

async function signIn(page: Page) {
  await page.getByLabel("User").fill(E2E.user);
  await page.getByLabel("Password").fill(E2E.password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

test.describe("a deep link survives the login (#15 defect 1)", () => {
  test.use({ storageState: { cookies: [], origins: [] } });

  for (const query of ["lanes=g:0-31", "lanes=rank:0-7&ov=token_usage"]) {
    test(`?${query}`, async ({ page }) => {
      await page.goto(`${FLEET}/timeline?${query}`);
      await expect(page).toHaveURL(/\/login\?next=/);
      await signIn(page);
      await expect(page).toHaveURL(new RegExp(`/timeline\\?`));
      const lanes = page.getByTestId("lane-canvas");
      await expect(lanes).toHaveAttribute("data-lanes-shown", query.startsWith("lanes=g") ? "32" : "8");
      // the 8-spaced-lanes default must not overwrite the link, not even a moment later
      await page.waitForTimeout(1500);
      const want = new URLSearchParams(query);
      const got = new URL(page.url()).searchParams;
      for (const [k, v] of want) expect(got.get(k), k).toBe(v);
      await expect(page.getByTestId("lane-chip")).toHaveCount(1);
    });
  }
});

test.describe("no hydration errors; dark mode stays dark (#15 defect 2)", () => {
  test("run list, Metrics, Timeline, Rollouts and Sample hydrate cleanly; one click toggles the theme", async ({ page }) => {
    const problems: string[] = [];
    page.on("console", (m) => {
      if ((m.type() === "error" || m.type() === "warning") && /hydrat|#418|#423|#425/i.test(m.text())) problems.push(`${page.url()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => {
      if (/hydrat|#418|#423|#425/i.test(e.message)) problems.push(`${page.url()}: ${e.message}`);
    });
    await page.addInitScript(() => {
      if (!sessionStorage.getItem("theme-set")) {
        localStorage.setItem("rlboard-theme", "dark");
        sessionStorage.setItem("theme-set", "1");
      }
    });
    for (const url of ["/", `${QWEN}/metrics`, `${QWEN}/timeline`, `${QWEN}/rollout/7`, `${QWEN}/rollout/7/sample/454`, `${FLEET}/metrics`]) {
      await page.goto(url);
      await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
      await page.waitForTimeout(3000);
      await expect(page.locator("html"), url).toHaveAttribute("data-theme", "dark");
    }
    expect(problems).toEqual([]);
    await page.getByRole("button", { name: "Toggle dark theme" }).click();
    await expect(page.locator("html")).toHaveAttribute("data-theme", "light");
    await page.getByRole("button", { name: "Toggle dark theme" }).click();
    await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  });
});

test.describe("Rollouts and Sample defects (#15 defects 3, 4, 10)", () => {
  for (const [run, rows, perGroup] of [
    [MILES, 32, 4],
    [QWEN, 64, 8],
  ] as const) {
    test(`a group click filters the samples when the page was opened on the Groups tab (${run})`, async ({ page }) => {
      await page.goto(`${run}/rollout/0?tab=groups`);
      const groups = page.getByRole("table", { name: /^Groups of step/ });
      await expect(groups.locator("tbody tr:not(.dt-pad)").first()).toBeVisible();
      await page.waitForTimeout(1500);
      await groups.locator("tbody tr:not(.dt-pad)").nth(1).click();
      await expect(page).toHaveURL(/f=group_index/);
      await expect(page.getByRole("tab", { name: "Samples" })).toHaveAttribute("aria-selected", "true");
      await expect(page.getByTestId("dt-count").first()).toHaveText(`${perGroup} of ${rows} rows`);
    });
  }

  // The same on a cold page with a 4× slower CPU (CDP throttling), clicked as soon as the
  // first group row shows — while the page may still be hydrating and fetching.
  test("a group click filters the samples on a cold, CPU-throttled page (Groups tab)", async ({ page }) => {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Emulation.setCPUThrottlingRate", { rate: 4 });
    await page.goto(`${QWEN}/rollout/0?tab=groups`);
    const groups = page.getByRole("table", { name: /^Groups of step/ });
    await expect(groups.locator("tbody tr:not(.dt-pad)").first()).toBeVisible({ timeout: 30_000 });
    await groups.locator("tbody tr:not(.dt-pad)").nth(1).click();
    await expect(page).toHaveURL(/f=group_index/);
    await expect(page.getByRole("tab", { name: "Samples" })).toHaveAttribute("aria-selected", "true");
    await expect(page.getByTestId("dt-count").first()).toHaveText("8 of 64 rows", { timeout: 15_000 });
    await cdp.send("Emulation.setCPUThrottlingRate", { rate: 1 });
  });

  test("per-token metrics split by turn along the loss mask (sample 454 of step 7)", async ({ page }) => {
    await page.goto(`${QWEN}/rollout/7/sample/454`);
    await page.getByRole("checkbox", { name: /under each turn/ }).check();
    await expect(page.locator(".sv-turnmetrics").first()).toBeVisible();
    await expect(page.getByText(/turn boundaries are not recoverable/)).toHaveCount(0);
    await expect(page.getByText(/turn ranges from the loss mask/)).toBeVisible();
    // every generated turn and every tool response has its own strip
    await expect.poll(() => page.locator(".sv-turnmetrics").count()).toBeGreaterThanOrEqual(3);
    await shot(page, "defects-turn-metrics");
  });

  test("eval steps: zero-std and staleness say n/a with the reason", async ({ page }) => {
    await page.goto(`${QWEN}/rollout/3?eval=1`);
    const zero = page.getByTestId("stat-zero_std");
    await expect(zero).toContainText("n/a");
    await expect(zero).not.toHaveClass(/rv-stat-alert/);
    await expect(zero).toHaveAttribute("title", /one sample/);
    const table = page.getByRole("table", { name: /^Samples of step/ });
    const header = table.getByRole("columnheader", { name: /staleness/ });
    await expect(header).toBeVisible();
    const names = await table.getByRole("columnheader").allInnerTexts();
    const col = names.findIndex((n) => n.replace(/\s/g, "").startsWith("staleness"));
    expect(col).toBeGreaterThan(0);
    const cell = table.locator("tbody tr:not(.dt-pad)").first().locator("td").nth(col);
    await expect(cell).toHaveText("n/a");
    await expect(cell.locator("[title]")).toHaveAttribute("title", /eval/);
    await page.getByRole("tab", { name: "Groups" }).click();
    const groups = page.getByRole("table", { name: /^Groups of step/ });
    await expect(groups.locator("tbody tr:not(.dt-pad)").first()).toBeVisible();
    await expect(groups.locator("tbody tr.dt-bad")).toHaveCount(0);
    // zero_std of a group of one: n/a with the reason, not a ✓
    await expect(groups.locator("tbody tr:not(.dt-pad)").first().locator("td").last()).toHaveText("n/a");
    await expect(groups.locator("tbody tr:not(.dt-pad)").first().locator("td").last().locator("[title]")).toHaveAttribute("title", /one sample/);
    await shot(page, "defects-eval-step");
  });
});

test.describe("silent no-ops say why in place (#15 defect 9)", () => {
  test("a metrics point of a step without a dump", async ({ page }) => {
    await page.goto(`${FLEET}/metrics?cat=rollout`);
    const chart = page.locator('[data-testid="metric-card"][data-key="rollout/raw_reward"]').getByTestId("chart");
    await expect(chart).toHaveAttribute("data-points", /^[1-9]/);
    const b = (await chart.boundingBox())!;
    await page.mouse.click(b.x + 56 + (b.width - 70) / 2, b.y + 10 + (b.height - 34) / 2);
    await expect(page.getByTestId("no-dump-note")).toContainText(/step \d+ has no rollout dump/);
    await expect(page).toHaveURL(/\/metrics/);
    await shot(page, "defects-no-dump");
  });

  test("typing a step that does not exist", async ({ page }) => {
    await page.goto(`${QWEN}/rollout/3`);
    const input = page.getByLabel("Go to step");
    await input.fill("99");
    await input.press("Enter");
    // not opened silently: the note says why and offers the nearest step
    await expect(page.getByTestId("step-snap-note")).toContainText("no train step 99 (dumps: 0–7) — nearest is 7");
    await expect(page).toHaveURL(/\/rollout\/3$/);
    await expect(input).toHaveValue("7");
    await shot(page, "defects-step-snap");
    await input.press("Enter");
    await expect(page).toHaveURL(/\/rollout\/7$/);
  });

  test("a reversed lane range", async ({ page }) => {
    await page.goto(`${FLEET}/timeline`);
    await expect(page.getByTestId("lane-canvas")).toHaveAttribute("data-lanes-shown", "8");
    await page.getByLabel("Add lanes").fill("g:5-2");
    await page.getByLabel("Add lanes").press("Enter");
    await expect(page.getByTestId("lane-error")).toContainText("g:2-5");
    await expect(page.getByLabel("Add lanes")).toHaveValue("g:5-2");
    // a deep link with one says so too
    await page.goto(`${FLEET}/timeline?lanes=g:5-2`);
    await expect(page.getByTestId("lane-warning")).toContainText("g:5-2 matches no lane");
    await shot(page, "defects-lane-range");
  });
});

async function within(inner: Locator, outer: Locator) {
  const i = (await inner.boundingBox())!;
  const o = (await outer.boundingBox())!;
  expect(i.x, "left").toBeGreaterThanOrEqual(o.x - 1);
  expect(i.x + i.width, "right").toBeLessThanOrEqual(o.x + o.width + 1);
}

test.describe("layout defects (#15 defect 11)", () => {
  test("batch-anatomy labels of 64 rows do not overprint", async ({ page }) => {
    await page.goto(`${QWEN}/rollout/7`);
    const canvas = page.getByTestId("anatomy-canvas");
    await expect(canvas).toHaveAttribute("data-rows", "64");
    const gap = Number(await canvas.getAttribute("data-label-gap"));
    expect(gap).toBeGreaterThanOrEqual(12);
    await canvas.scrollIntoViewIfNeeded();
    await canvas.screenshot({ path: `${E2E.screenshots}/defects-anatomy-64.png` });
  });

  test("the carpet's top label is inside the canvas", async ({ page }) => {
    await page.goto(`${FLEET}/timeline`);
    const canvas = page.getByTestId("carpet").locator("canvas").first();
    await expect(canvas).toHaveAttribute("data-label-top", /\d/);
    expect(Number(await canvas.getAttribute("data-label-top"))).toBeGreaterThanOrEqual(0);
    await page.getByTestId("carpet").screenshot({ path: `${E2E.screenshots}/defects-carpet.png` });
  });

  test("the admin audit table stays inside its card", async ({ page }) => {
    // one audited trajectory read, so the table has a row
    await page.goto(`${QWEN}/rollout/7/sample/454`);
    await expect(page.getByRole("heading", { name: /Conversation/ })).toBeVisible();
    await page.goto("/admin");
    const table = page.getByTestId("audit-table");
    await expect(table.locator("tbody tr").first()).toBeVisible();
    await within(table, page.locator("section.panel", { has: table }));
    await shot(page, "defects-admin");
  });

  test("the favicon is an image", async ({ page }) => {
    const res = await page.request.get("/favicon.ico");
    expect(res.status()).toBe(200);
    expect(res.headers()["content-type"]).toMatch(/^image\//);
    await page.goto("/");
    const href = await page.locator('link[rel~="icon"]').first().getAttribute("href");
    expect(href).toBeTruthy();
    expect((await page.request.get(href!)).status()).toBe(200);
  });

  test("an unknown run's 404 is a styled page in the app shell", async ({ page }) => {
    const res = await page.goto("/runs/no-such-run/metrics");
    expect(res!.status()).toBe(404);
    await expect(page.getByRole("heading", { name: /Run not found/ })).toBeVisible();
    await expect(page.getByText("no-such-run")).toBeVisible();
    await expect(page.getByRole("button", { name: "Toggle dark theme" })).toBeVisible();
    await page.getByRole("link", { name: /All runs/ }).click();
    await expect(page.getByRole("heading", { name: "Runs" })).toBeVisible();
    await page.goBack();
    await shot(page, "defects-run-404");
  });

  test("a dump-only sample says what is known, not that it aborted", async ({ page }) => {
    await page.goto(`${OFFLINE}/rollout/0/sample/0`);
    await expect(page.getByTestId("no-conversation")).toBeVisible();
    await expect(page.getByTestId("no-conversation")).not.toContainText("aborted before any model call");
    await expect(page.getByTestId("no-conversation")).toContainText(/no trajectory sidecar/i);
    await shot(page, "defects-dump-only-sample");
  });
});

test.describe("the run list at 1440 × 900 (#15)", () => {
  test.use({ viewport: { width: 1440, height: 900 } });

  test("every column, Open included, stays inside the card; the page does not scroll sideways", async ({ page }) => {
    await page.goto("/");
    const table = page.locator("table.runs-table");
    await expect(table.locator('[data-testid="run-row"]').first()).toBeVisible();
    await expect(page.getByTestId("run-state-cell").first()).toBeVisible();
    await expect
      .poll(() =>
        page.evaluate(() => {
          const t = document.querySelector("table.runs-table")!;
          const card = t.closest(".panel")!.getBoundingClientRect();
          const open = [...t.querySelectorAll("thead th")].at(-1)!.getBoundingClientRect();
          const links = [...t.querySelectorAll(".run-links a")].map((a) => a.getBoundingClientRect().right);
          return { openInside: open.right <= card.right + 0.5, linksInside: links.every((r) => r <= card.right + 0.5), sideways: document.documentElement.scrollWidth > document.documentElement.clientWidth };
        }),
      )
      .toEqual({ openInside: true, linksInside: true, sideways: false });
    await expect(table.locator("thead th").last()).toHaveText("Open");
    await shot(page, "runs-list-1440");
  });

  test("a dump-only run whose files just stopped reads 'ended', not 'killed'", async ({ page }) => {
    await page.goto("/");
    const row = page.locator('[data-testid="run-row"]', { has: page.locator(".run-name", { hasText: /^offline-dumps-only$/ }) });
    const cell = row.getByTestId("run-state-cell");
    await expect(cell).toHaveAttribute("data-state", "ended");
    await expect(cell.locator(".badge-state")).toHaveText("ended");
    await expect(cell.locator(".badge-state")).toHaveAttribute("title", /no exit record/);
    await expect(page.locator(".badge-state", { hasText: "killed" })).toHaveCount(0);
  });
});
