import { expect, test, type Page } from "@playwright/test";
import { E2E } from "./env";
import { formatDuration } from "../lib/charts/core/format";

// Issue #16 part 4: links in both directions, each a URL — a step → its window on the
// Compute Utilization view, a sample → its generation spans on the lanes, a timeline
// window → the steps and samples generated in it, a drift bin → the sample's token and the
// sample → its step's drift, and the Metrics step cursor from step and sample views. On
// the generated demo run (lib/demo/qwen.ts: phases, step timing, trajectories) and the
// shipped fixture run `miles-demo` (train steps 0–2); `offline-dumps-only` and `slime-pd`
// have no compute telemetry and say so in place.
const DEMO = "qwen3-4b-grpo-demo";
const FIXTURE = "miles-demo";
const shot = (page: Page, name: string) => page.screenshot({ path: `${E2E.screenshots}/${name}.png`, fullPage: true });

interface Bubble {
  step: number | null;
  ts: number;
  step_time: number | null;
}
interface Lane {
  sample_index: number;
  segments: { kind: string; t0: number | null; t1: number | null }[];
}

async function api<T>(page: Page, path: string): Promise<T> {
  const res = await page.request.get(path);
  expect(res.status(), path).toBe(200);
  return (await res.json()) as T;
}

/** The padded window the links promise (lib/rollout-view/links.ts padWindow), computed here from the raw spans. */
function padded(t0: number, t1: number): [number, number] {
  const pad = Math.max(1, (t1 - t0) * 0.05);
  return [t0 - pad, t1 + pad];
}

function vOf(url: string): [number, number] {
  const v = new URL(url, "http://x").searchParams.get("v") ?? "";
  const [a, b] = v.split("~").map(Number);
  return [a!, b!];
}

async function stepSpan(page: Page, run: string, step: number): Promise<[number, number]> {
  const { bubbles } = await api<{ bubbles: Bubble[] }>(page, `/api/timeline/bubbles?run=${run}`);
  const b = bubbles.find((x) => x.step === step)!;
  expect(b.step_time).toBeGreaterThan(0);
  return [b.ts - b.step_time!, b.ts];
}

for (const [run, step] of [
  [DEMO, 2],
  [FIXTURE, 1],
] as const) {
  test.describe(`links on ${run}`, () => {
    test(`step ${step} → its window on Compute Utilization, the step picked, the window lists it`, async ({ page }) => {
      const [s0, s1] = await stepSpan(page, run, step);
      const [v0, v1] = padded(s0, s1);
      await page.goto(`/runs/${run}/rollout/${step}`);
      const link = page.getByTestId("step-timeline-link");
      await expect(link).toHaveText(`step ${step} on Compute Utilization →`);
      const href = (await link.getAttribute("href")) ?? "";
      expect(href).toMatch(new RegExp(`/runs/${run}/timeline\\?v=[\\d.]+~[\\d.]+&step=${step}$`));
      expect(vOf(href)[0]).toBeCloseTo(v0, 1);
      expect(vOf(href)[1]).toBeCloseTo(v1, 1);
      await link.click();
      await expect(page).toHaveURL(new RegExp(`/timeline\\?.*step=${step}`));
      // the step strip highlights the step; the window is the step's span
      await expect(page.getByTestId("step-strip")).toContainText(`step ${step}: wait`);
      const inView = page.getByTestId("steps-in-view");
      await expect.poll(async () => Number(await inView.getAttribute("data-v0"))).toBeCloseTo(v0, 1);
      await expect.poll(async () => Number(await inView.getAttribute("data-v1"))).toBeCloseTo(v1, 1);
      await expect(page.getByTestId("window-range")).toContainText(`(${formatDuration(v1 - v0)})`);
      await expect(inView.locator(`li[data-step="${step}"]`)).toContainText(`step ${step}`);
      // the lanes show that window's phases and utilization
      await expect.poll(async () => Number(await page.getByTestId("lane-canvas").getAttribute("data-lanes-with-util")), { timeout: 30_000 }).toBeGreaterThan(0);
      await expect(page.getByTestId("carpet").locator("canvas")).toHaveAttribute("data-painted", "data", { timeout: 30_000 });
      await shot(page, `links-${run}-step-window`);
      // and back: the window's step opens its Rollouts view
      await inView.locator(`li[data-step="${step}"]`).getByRole("link", { name: "rollouts →" }).click();
      await expect(page).toHaveURL(new RegExp(`/runs/${run}/rollout/${step}$`));
      await expect(page.locator(".rv")).toHaveAttribute("data-state", "ready", { timeout: 60_000 });
    });

    test(`a sample of step ${step} → its generation on the lanes; the window lists that sample, which opens`, async ({ page }) => {
      const { lanes } = await api<{ lanes: Lane[] }>(page, `/api/rollout/${step}/trajectories?run=${run}`);
      const lane = lanes.find((l) => l.segments.some((s) => s.kind === "gen" && s.t0 !== null && s.t1 !== null))!;
      const gens = lane.segments.filter((s) => s.kind === "gen" && s.t0 !== null && s.t1 !== null);
      const [v0, v1] = padded(Math.min(...gens.map((s) => s.t0!)), Math.max(...gens.map((s) => s.t1!)));
      const idx = lane.sample_index;
      await page.goto(`/runs/${run}/rollout/${step}/sample/${idx}`);
      await expect(page.getByTestId("sample-gen-spans")).toContainText(`${gens.length} generation span${gens.length === 1 ? "" : "s"}`);
      const link = page.getByTestId("sample-timeline-link");
      const href = (await link.getAttribute("href")) ?? "";
      expect(vOf(href)[0]).toBeCloseTo(v0, 1);
      expect(vOf(href)[1]).toBeCloseTo(v1, 1);
      await shot(page, `links-${run}-sample`);
      await link.click();
      await expect(page).toHaveURL(/\/timeline\?/);
      const inView = page.getByTestId("steps-in-view");
      await expect.poll(async () => Number(await inView.getAttribute("data-v0"))).toBeCloseTo(v0, 1);
      await expect(page.getByTestId("window-range")).toContainText(`(${formatDuration(v1 - v0)})`);
      await inView.getByRole("button", { name: "samples generated in this window" }).click();
      const samples = page.getByLabel(`Samples of step ${step} generating in this window`);
      await expect(samples.getByRole("link", { name: `s${idx}`, exact: true })).toBeVisible({ timeout: 30_000 });
      await expect.poll(async () => Number(await page.getByTestId("lane-canvas").getAttribute("data-lanes-with-util")), { timeout: 30_000 }).toBeGreaterThan(0);
      await shot(page, `links-${run}-window-samples`);
      await samples.getByRole("link", { name: `s${idx}`, exact: true }).click();
      await expect(page).toHaveURL(new RegExp(`/rollout/${step}/sample/${idx}$`));
      await expect(page.getByRole("heading", { name: `Sample ${idx}` })).toBeVisible();
    });

    test(`the Metrics step cursor follows step ${step} from the step and the sample views`, async ({ page }) => {
      await page.goto(`/runs/${run}/rollout/${step}`);
      await page.getByTestId("step-metrics-link").click();
      await expect(page).toHaveURL(new RegExp(`/runs/${run}/metrics\\?step=${step}$`));
      await expect(page.getByTestId("step-cursor")).toContainText(`step ${step}`);
      await page.goto(`/runs/${run}/rollout/${step}/sample/0`);
      await page.getByTestId("sample-metrics-link").click();
      await expect(page).toHaveURL(new RegExp(`/metrics\\?step=${step}$`));
      await expect(page.getByTestId("step-cursor")).toContainText(`step ${step}`);
      await shot(page, `links-${run}-metrics-cursor`);
    });
  });
}

test("a drift bin → its top sample's worst token; the sample → its step's drift", async ({ page }) => {
  await page.goto(`/runs/${FIXTURE}/rollout/1?tab=drift`);
  const panel = page.getByRole("tabpanel", { name: "Drift" });
  await expect(panel).toHaveAttribute("data-state", "ready", { timeout: 60_000 });
  await page.getByRole("table", { name: "Drift bins" }).locator("tbody tr").first().click();
  const top = page.getByLabel("Top samples of the bin").getByRole("link").first();
  const href = (await top.getAttribute("href")) ?? "";
  const m = /\/sample\/(\d+)\?.*range=(\d+)-(\d+)/.exec(href);
  expect(m).not.toBeNull();
  await top.click();
  await expect(page.getByRole("heading", { name: `Sample ${m![1]}` })).toBeVisible();
  // (the fixture's samples have no conversation: the token pane is the view, without tabs)
  await expect(page).toHaveURL(/tab=tokens/);
  await expect(page.getByText(/highlighted: \d+/)).toBeVisible({ timeout: 30_000 });
  await page.getByTestId("sample-drift-link").click();
  await expect(page).toHaveURL(/\/rollout\/1\?tab=drift$/);
  await expect(panel).toHaveAttribute("data-state", "ready", { timeout: 60_000 });
});

test("runs without compute telemetry say why there is no window", async ({ page }) => {
  await page.goto(`/runs/offline-dumps-only/rollout`);
  await expect(page.getByLabel("Links of this step")).toContainText("no compute telemetry in this run");
  await expect(page.getByTestId("step-metrics-link")).toBeVisible();
  await page.goto(`/runs/slime-pd/rollout/0/sample/0`);
  await expect(page.getByLabel("Links of this sample")).toContainText("no compute telemetry in this run");
  await shot(page, "links-slime-no-telemetry");
});
