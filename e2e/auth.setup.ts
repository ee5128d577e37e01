import { expect, test as setup } from "@playwright/test";
import { E2E } from "./env";

// Signs in once through the real login form and saves the session for the other specs.
setup("sign in", async ({ page }) => {
  await page.goto("/login");
  await page.getByLabel("User").fill(E2E.user);
  await page.getByLabel("Password").fill(E2E.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Runs" })).toBeVisible();
  await page.context().storageState({ path: "test-results/.auth/user.json" });
});
