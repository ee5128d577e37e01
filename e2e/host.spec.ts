/**
 * Host telemetry on the Compute Utilization view (#19 §3, docs/views.md §3): the Qwen demo
 * run carries `dashboard/host/` records (lib/demo/host.ts: trainer ranks, SGLang
 * schedulers and the rollout manager, registered with roles). The view shows one host
 * panel per node — node name, CPU, memory — with a row per busy process and its fd
 * headroom, for the visible window: a window over the run's first minutes shows the
 * rollout manager's fd table as it was then.
 */
import fs from "node:fs";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { E2E } from "./env";

const RUN_NAME = "qwen3-4b-grpo-demo";
const RUN = `/runs/${RUN_NAME}`;
const shot = (page: Page, name: string) => page.screenshot({ path: `${E2E.screenshots}/${name}.png`, fullPage: true });

interface Rec {
  ts: number;
  procs: { pid: number; fds: number }[];
}
function hostRecords(): Rec[] {
  const dir = path.join(E2E.runsRoot, RUN_NAME, "dashboard", "host");
  return fs
    .readdirSync(dir)
    .sort()
    .flatMap((f) => fs.readFileSync(path.join(dir, f), "utf8").trim().split("\n"))
    .map((l) => JSON.parse(l) as Rec);
}

test.describe("host panel on the Compute Utilization view", () => {
  test("per node: name, CPU, memory and the processes with their fd headroom; it follows the window", async ({ page }) => {
    await page.goto(`${RUN}/timeline`);
    const panel = page.getByTestId("host-window-panel");
    await expect(panel).toBeVisible();
    const node = panel.locator('[data-node="10.8.0.11"]');
    await expect(node.locator("p").first()).toHaveText(/^10\.8\.0\.11 · 96 cores · CPU \d+% mean, \d+% peak · memory \d+% of 1024 GiB \(\d+ samples\)$/);
    // 4 trainer ranks, 2 schedulers and the rollout manager
    await expect(node.locator("tbody tr")).toHaveCount(7);
    const rm = node.locator('tr[data-pid="4000"]');
    await expect(rm.locator("td").nth(0)).toHaveText("ray::RolloutManager (4000)");
    await expect(rm.locator("td").nth(1)).toHaveText("rollout_manager");
    await expect(rm.locator("td").nth(2)).toHaveText(/^\d+% · \d+%$/);
    // the newest window (the whole run): its fullest fd table, the newest record's, ~80 % of RLIMIT_NOFILE
    const recs = hostRecords();
    const rmFds = (r: Rec) => r.procs.find((p) => p.pid === 4000)!.fds;
    const last = rmFds(recs.at(-1)!);
    expect(last).toBeGreaterThan(3000);
    await expect(rm.locator("td").nth(5)).toHaveText(`${last} / 4096 (${Math.round((1 - last / 4096) * 100)}% free)`);
    const trainer = node.locator('tr[data-pid="4101"]');
    await expect(trainer.locator("td").nth(0)).toHaveText("python3 (4101)");
    await expect(trainer.locator("td").nth(1)).toHaveText("trainer");
    await expect(trainer.locator("td").nth(5)).toHaveText("410 / 1048576 (100% free)");
    await shot(page, "host-panel");

    // a 2-minute window early in the run (inside its time range, so the viewport is not
    // clamped): the fullest fd table in it is the one at its end
    const t0 = recs[0]!.ts + 30;
    const inWindow = recs.filter((r) => r.ts >= t0 && r.ts <= t0 + 120);
    const fds = Math.max(...inWindow.map(rmFds));
    expect(fds).toBeLessThan(last);
    await page.goto(`${RUN}/timeline?v=${t0}~${t0 + 120}`);
    const early = page.getByTestId("host-window-panel");
    await expect(early.locator('[data-node="10.8.0.11"] p').first()).toContainText(`(${inWindow.length} samples)`);
    await expect(early.locator('tr[data-pid="4000"] td').nth(5)).toHaveText(`${fds} / 4096 (${Math.round((1 - fds / 4096) * 100)}% free)`);
    await shot(page, "host-panel-early");
  });
});
