import { expect, test } from "@playwright/test";
import { E2E } from "./env";

/**
 * Login-gated trajectories: an admin restricts a run from the Admin page; a member who is
 * not listed then gets 403 on its conversations/tokens and is told why in the page, while
 * the admin's opens are recorded in the audit table. The restriction is lifted at the end
 * so the other specs are unaffected.
 */
test("a restricted run's trajectories are refused to unlisted members, and views are audited", async ({ page, browser, playwright }) => {
  const run = "miles-demo";
  // The admin opens a sample first: that open is audited.
  await page.goto(`/runs/${run}/rollout/0/sample/0`);
  await expect(page.getByRole("tab", { name: /Conversation/ })).toBeVisible();

  await page.goto("/admin");
  await expect(page.getByTestId("audit-table")).toContainText("e2e-admin");
  await expect(page.getByTestId("audit-table")).toContainText(run);
  const restrict = page.getByRole("form", { name: "Restrict", exact: true });
  await restrict.getByLabel("Run").selectOption(run);
  await restrict.getByRole("button", { name: "Restrict", exact: true }).click();
  await expect(restrict.getByRole("status")).toContainText(`trajectories of '${run}' restricted`);
  await page.screenshot({ path: `${E2E.screenshots}/admin.png`, fullPage: true });

  try {
    const member = await browser.newContext({ storageState: { cookies: [], origins: [] } });
    const mp = await member.newPage();
    await mp.goto("/login");
    await mp.getByLabel("User").fill(E2E.member);
    await mp.getByLabel("Password").fill(E2E.password);
    await mp.getByRole("button", { name: "Sign in" }).click();
    await expect(mp.getByRole("heading", { name: "Runs" })).toBeVisible();
    await expect(mp.getByRole("link", { name: "Admin" })).toHaveCount(0);
    await mp.goto(`/runs/${run}/rollout/0/sample/0`);
    await expect(mp.getByText(/HTTP 403/).first()).toBeVisible();
    await expect(mp.getByText(/trajectories are restricted/).first()).toBeVisible();
    await mp.screenshot({ path: `${E2E.screenshots}/restricted-member.png` });
    // Metrics of the same run stay visible to the member.
    const api = await playwright.request.newContext({ baseURL: E2E.baseURL, storageState: await member.storageState() });
    expect((await api.get(`/api/meta?run=${run}`)).status()).toBe(200);
    const denied = await api.get(`/api/rollout/0/sample/0/messages?run=${run}`);
    expect(denied.status()).toBe(403);
    expect(((await denied.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    await api.dispose();
    await member.close();
  } finally {
    await page.goto("/admin");
    const unrestrict = page.getByRole("form", { name: "Unrestrict" });
    await unrestrict.getByLabel("Run").selectOption(run);
    await unrestrict.getByRole("button", { name: "Unrestrict" }).click();
    await expect(unrestrict.getByRole("status")).toContainText("visible to every member");
  }
});
