import { expect, test } from "@playwright/test";
import { E2E } from "./env";

test.describe("login", () => {
  test.use({ storageState: { cookies: [], origins: [] } });

  test("a wrong password is refused, the right one opens the run list, logout returns to login", async ({ page }) => {
    await page.goto("/");
    await expect(page).toHaveURL(/\/login/);
    await page.screenshot({ path: `${E2E.screenshots}/login.png` });
    await page.getByLabel("User").fill(E2E.user);
    await page.getByLabel("Password").fill("definitely-wrong");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByText("Wrong user name or password.")).toBeVisible();
    // The user name survives the failed attempt; only the password is typed again.
    await expect(page.getByLabel("User")).toHaveValue(E2E.user);
    await page.getByLabel("Password").fill(E2E.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("heading", { name: "Runs" })).toBeVisible();
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(/\/login/);
    await page.goto("/admin");
    await expect(page).toHaveURL(/\/login\?next=%2Fadmin/);
  });

  test("a deep link survives the login", async ({ page }) => {
    await page.goto("/admin");
    await expect(page).toHaveURL(/\/login\?next=%2Fadmin/);
    await page.getByLabel("User").fill(E2E.user);
    await page.getByLabel("Password").fill(E2E.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("heading", { name: "Admin" })).toBeVisible();
  });
});

test("the run list shows the demo runs and search filters them", async ({ page }) => {
  await page.goto("/");
  const rows = page.getByTestId("run-row");
  await expect(rows.first()).toBeVisible();
  const total = await rows.count();
  expect(total).toBeGreaterThanOrEqual(2);
  // The fixture run is named by its meta.json ("dummy-telemetry"); its path is the folder.
  await expect(page.getByRole("link", { name: "dummy-telemetry" }).first()).toBeVisible();
  await expect(page.getByText("miles-demo", { exact: true })).toBeVisible();
  await page.screenshot({ path: `${E2E.screenshots}/run-list.png`, fullPage: true });
  await page.getByLabel("Search runs").fill("miles");
  await expect(page).toHaveURL(/q=miles/);
  await expect(rows).toHaveCount(1);
  await page.getByLabel("Search runs").fill("no-such-run-xyz");
  await expect(page.getByText("No run matches")).toBeVisible();
});

test.describe("API auth", () => {
  test("no token → 401 JSON; a token → 200", async ({ playwright }) => {
    const anon = await playwright.request.newContext({ baseURL: E2E.baseURL, storageState: { cookies: [], origins: [] } });
    const denied = await anon.get("/api/runs");
    expect(denied.status()).toBe(401);
    expect((await denied.json()) as unknown).toMatchObject({ error: { code: "unauthorized" } });
    const health = await anon.get("/api/health");
    expect(await health.json()).toEqual({ ok: true });
    const authed = await playwright.request.newContext({
      baseURL: E2E.baseURL,
      storageState: { cookies: [], origins: [] },
      extraHTTPHeaders: { authorization: `Bearer ${E2E.token}` },
    });
    const ok = await authed.get("/api/runs");
    expect(ok.status()).toBe(200);
    const body = (await ok.json()) as { runs: { id: string }[] };
    expect(body.runs.length).toBeGreaterThanOrEqual(2);
    await anon.dispose();
    await authed.dispose();
  });
});
