import { expect, test, type Page } from "@playwright/test";

/**
 * Nothing moves once a view is on screen: once its main content is drawn (each view's ready
 * condition below, what a person starts reading or dragging), panels, strips and labels that
 * arrive later take their place without pushing it somewhere else. Measured with the
 * browser's Layout Instability API: the layout shifts not caused by an input, from the ready
 * moment over the next seconds (past the run header's idle-time requests), sum under 0.02
 * ("good" on the web's own scale is under 0.1).
 */
const LIMIT = 0.02;
/** long enough for the requests made once the browser is first idle (lib/client/idle.ts: ≤ 1.5 s) */
const WATCH_MS = 3_500;

const VIEWS: { name: string; url: string; ready: (p: Page) => Promise<void> }[] = [
  { name: "run list", url: "/", ready: (p) => expect(p.getByRole("heading", { name: "Runs" })).toBeVisible() },
  {
    name: "metrics",
    url: "/runs/qwen3-4b-grpo-demo/metrics",
    ready: (p) => expect(p.getByTestId("metric-card").first().locator("canvas")).toHaveAttribute("data-painted", "data"),
  },
  // ready: the lanes have their GPU data (what a person starts to read and drag), which may
  // come before the advisory, the MFU and the carpet
  { name: "compute utilization", url: "/runs/miles-demo/timeline", ready: (p) => expect(p.getByTestId("lane-canvas")).toHaveAttribute("data-lanes-with-util", /^[1-9]/) },
  {
    name: "compute utilization, 64 GPUs",
    url: "/runs/llama-70b-gspo-64gpu/timeline",
    ready: (p) => expect(p.getByTestId("lane-canvas")).toHaveAttribute("data-lanes-with-util", /^[1-9]/),
  },
  { name: "rollouts", url: "/runs/miles-demo/rollout/1", ready: (p) => expect(p.locator(".rv")).toHaveAttribute("data-state", "ready") },
  { name: "rollouts, dump-only run", url: "/runs/offline-dumps-only/rollout", ready: (p) => expect(p.locator(".rv")).toHaveAttribute("data-state", "ready") },
  {
    name: "sample, tokens",
    url: "/runs/miles-demo/rollout/0/sample/1?tab=tokens",
    ready: (p) => expect(p.locator(".sv-tokens canvas")).toHaveAttribute("data-painted", "data"),
  },
  { name: "sample, conversation", url: "/runs/miles-demo/rollout/0/sample/1", ready: (p) => expect(p.locator(".rv-tabs")).toBeVisible() },
];

interface Shift {
  value: number;
  at: number;
  sources: string[];
}

const OBSERVE = `(() => {
  window.__shifts = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.hadRecentInput) continue;
      window.__shifts.push({
        value: e.value,
        at: Math.round(e.startTime),
        sources: (e.sources || []).map((s) => {
          const n = s.node;
          if (!n || n.nodeType !== 1) return "(text)";
          const name = n.tagName.toLowerCase() + (n.id ? "#" + n.id : "") + (n.className && typeof n.className === "string" ? "." + n.className.trim().split(/\\s+/).join(".") : "") + (n.dataset && n.dataset.testid ? "[" + n.dataset.testid + "]" : "");
          return name + " y " + Math.round(s.previousRect.y) + "→" + Math.round(s.currentRect.y) + " h " + Math.round(s.previousRect.height) + "→" + Math.round(s.currentRect.height);
        }),
      });
    }
  }).observe({ type: "layout-shift", buffered: true });
})()`;

test.describe("layout stability", () => {
  for (const v of VIEWS) {
    test(`${v.name}: nothing moves while its data arrives`, async ({ page }) => {
      await page.addInitScript(OBSERVE);
      await page.goto(v.url);
      await v.ready(page);
      const readyAt = await page.evaluate(() => performance.now());
      await page.waitForTimeout(WATCH_MS);
      const shifts = (await page.evaluate(() => (window as unknown as { __shifts: Shift[] }).__shifts)).filter((s) => s.at >= readyAt);
      const total = shifts.reduce((a, s) => a + s.value, 0);
      const worst = [...shifts].sort((a, b) => b.value - a.value).slice(0, 3);
      expect(total, `layout shifts on ${v.url}: ${JSON.stringify(worst)}`).toBeLessThan(LIMIT);
    });
  }
});
