import fs from "node:fs";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { E2E } from "./env";
import { removeRuns } from "./runs";

// The fixture copy `miles-demo`: 4 GPU lanes on one node, 3 steps over ~330 s, MFU data,
// 3 sglang engines.
const RUN = "/runs/miles-demo";
const shot = (page: Page, name: string) => page.screenshot({ path: `${E2E.screenshots}/${name}.png`, fullPage: true });
const lanes = (page: Page) => page.getByTestId("lane-canvas");
const laneInput = (page: Page) => page.getByLabel("Add lanes");
/** The MFU/advisory panels sit above the carpet: wait for them before measuring positions. */
const settled = (page: Page) => expect(page.getByTestId("timeline-view")).toHaveAttribute("data-advisory", "done");

function lanesParam(page: Page): string | null {
  return new URL(page.url()).searchParams.get("lanes");
}

test.describe("Compute Utilization view", () => {
  test("draws every panel for a small run", async ({ page }) => {
    await page.goto(`${RUN}/timeline`);
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "4");
    await expect(lanes(page)).toHaveAttribute("data-lanes-total", "4");
    await expect(page.getByTestId("lane-count")).toHaveText("4 lanes shown");
    await expect(page.getByTestId("lane-paging")).toHaveCount(0);
    await expect(page.getByTestId("carpet")).toHaveAttribute("data-rows", "4");
    await expect(page.getByTestId("step-strip")).toHaveAttribute("data-steps", "3");
    await expect(page.getByTestId("mfu")).toContainText("34.0%");
    await expect(page.getByTestId("mfu")).toContainText("989 TFLOP/s");
    await expect(page.getByTestId("legend")).toContainText("actor_train");
    await expect(page.getByTestId("legend")).toContainText("train_wait");
    await expect(page.getByRole("button", { name: "num_running_reqs" })).toHaveAttribute("aria-pressed", "true");
    await expect(page.getByTestId("freshness")).toBeVisible();
    // 4 lanes ≤ 8: no default selection, the URL stays clean
    expect(lanesParam(page)).toBeNull();
    await shot(page, "timeline");
  });

  test("the lanes' first data is preloaded by the server render and fetched exactly once", async ({ page }) => {
    const apiCalls: string[] = [];
    page.on("request", (r) => {
      const u = new URL(r.url());
      if (u.pathname.startsWith("/api/")) apiCalls.push(`${u.pathname}?${u.searchParams.toString()}`);
    });
    await page.goto(`${RUN}/timeline`);
    await settled(page);
    await expect(lanes(page)).toHaveAttribute("data-lanes-with-util", "4");
    await expect(page.getByTestId("carpet").locator("canvas")).toHaveAttribute("data-painted", "data");
    const preloaded = await page.locator('link[rel="preload"][as="fetch"]').evaluateAll((ls) => ls.map((l) => (l as HTMLLinkElement).href));
    for (const p of ["/api/timeline/phases", "/api/timeline/gpu", "/api/timeline/engine_series"]) {
      expect(preloaded.filter((h) => new URL(h).pathname === p), p).toHaveLength(1);
      // a fetch that did not match its preload would show up as a second request
      expect(apiCalls.filter((c) => c.startsWith(`${p}?`)), p).toHaveLength(1);
    }
    expect(apiCalls.find((c) => c.startsWith("/api/timeline/gpu?"))).toContain("format=bin");
    // every canvas of the view shows its data
    for (const c of await lanes(page).locator("canvas").all()) await expect(c).toHaveAttribute("data-painted", (await lanes(page).getAttribute("data-model"))!);
  });

  test("a typed lane selection goes to the URL and sets the drawn lanes; chips remove terms", async ({ page }) => {
    await page.goto(`${RUN}/timeline`);
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "4");
    await laneInput(page).fill("g:0-1");
    await laneInput(page).press("Enter");
    await expect.poll(() => lanesParam(page)).toBe("g:0-1");
    await expect(page).toHaveURL(/lanes=g:0-1/);
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "2");
    await expect(lanes(page).locator("canvas[data-lane]")).toHaveCount(2);
    await expect(page.getByTestId("lane-chip")).toHaveCount(1);
    await laneInput(page).fill("every:3");
    await laneInput(page).press("Enter");
    await expect.poll(() => lanesParam(page)).toBe("g:0-1,every:3");
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "3");
    await shot(page, "timeline-selection");
    await page.getByRole("button", { name: "Remove g:0-1" }).click();
    await expect.poll(() => lanesParam(page)).toBe("every:3");
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "2");
    await page.getByRole("button", { name: "Clear" }).click();
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "4");
    // Back undoes the last deliberate change
    await page.goBack();
    await expect.poll(() => lanesParam(page)).toBe("every:3");
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "2");
    await expect(page.getByTestId("lane-chip")).toHaveCount(1);
  });

  test("a ?lanes= deep link opens exactly that selection", async ({ page }) => {
    await page.goto(`${RUN}/timeline?lanes=${encodeURIComponent("g:2,gpu:10.0.0.1:3")}`);
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "2");
    await expect(lanes(page).locator("canvas[data-lane]")).toHaveCount(2);
    await expect(lanes(page).locator('canvas[data-lane="2"]')).toHaveCount(1);
    await expect(lanes(page).locator('canvas[data-lane="3"]')).toHaveCount(1);
    await expect(page.getByTestId("lane-chip")).toHaveCount(2);
    // a quick pick replaces the selection with the outlier lanes (lowest mean util first)
    await page.getByRole("button", { name: "pick: lowest util" }).click();
    await expect.poll(() => lanesParam(page)).toMatch(/^gpu:10\.0\.0\.1:2,gpu:10\.0\.0\.1:3,/);
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "4");
    await expect(page.getByText(/picked 4 lane/)).toBeVisible();
  });

  test("grammar errors are shown inline and keep what was typed", async ({ page }) => {
    await page.goto(`${RUN}/timeline`);
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "4");
    await laneInput(page).fill("bogus:1");
    await laneInput(page).press("Enter");
    await expect(page.getByTestId("lane-error")).toContainText("unknown lane selector kind 'bogus'");
    await expect(laneInput(page)).toHaveValue("bogus:1");
    await expect(laneInput(page)).toHaveAttribute("aria-invalid", "true");
    expect(lanesParam(page)).toBeNull();
    await shot(page, "timeline-lane-error");
    // the server's message for a deep link the client cannot pre-check
    await page.goto(`${RUN}/timeline?lanes=${encodeURIComponent("every:0")}`);
    await expect(page.getByTestId("lane-error")).toContainText("stride must be positive");
  });

  test("a step click zooms the lanes; drag pans; Esc returns to the latest window", async ({ page }) => {
    await page.goto(`${RUN}/timeline`);
    await expect(page.getByTestId("step-strip")).toHaveAttribute("data-steps", "3");
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "4");
    await settled(page);
    const axisBefore = await page.locator(".time-axis").textContent();
    // step 1 spans [1000131, 1000225] of the 329 s run: the middle of the strip
    const strip = (await page.locator(".steps-box").boundingBox())!;
    const plotW = strip.width - 96 - 14;
    await page.mouse.click(strip.x + 96 + plotW * (178 / 329), strip.y + strip.height / 2);
    await expect(page).toHaveURL(/step=1/);
    await expect(page).toHaveURL(/[?&]v=/, { timeout: 5000 });
    await expect(page.getByTestId("step-strip")).toHaveAttribute("data-steps-in-view", /^[123]$/);
    const axisZoomed = await page.locator(".time-axis").textContent();
    expect(axisZoomed).not.toBe(axisBefore);
    const v1 = new URL(page.url()).searchParams.get("v");

    const box = (await lanes(page).boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.6, box.y + 30);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.3, box.y + 30, { steps: 10 });
    await page.mouse.up();
    await expect.poll(() => new URL(page.url()).searchParams.get("v")).not.toBe(v1);
    await shot(page, "timeline-zoomed");

    await page.keyboard.press("Escape");
    await expect(page).not.toHaveURL(/[?&]v=/);
    await expect(page).not.toHaveURL(/step=/);

    // Ctrl + wheel zooms around the cursor (a plain wheel scrolls the page)
    const axisLatest = await page.locator(".time-axis").textContent();
    await page.mouse.move(box.x + box.width * 0.5, box.y + 40);
    await page.keyboard.down("Control");
    await page.mouse.wheel(0, -400);
    await page.keyboard.up("Control");
    await expect(page).toHaveURL(/[?&]v=/);
    await expect(page.locator(".time-axis")).not.toHaveText(axisLatest ?? "");
    await page.keyboard.press("-");
    await page.keyboard.press("-");
    await expect(page).not.toHaveURL(/[?&]v=/);
  });

  test("carpet click removes a GPU from the selection; overlay and toggles live in the URL", async ({ page }) => {
    await page.goto(`${RUN}/timeline`);
    const carpet = page.getByTestId("carpet");
    await expect(carpet).toHaveAttribute("data-rows", "4");
    await settled(page);
    await expect(carpet).toHaveAttribute("data-selected", "0,1,2,3");
    // rows are 14 px tall: row 1 = g1. The box is measured right before each click: a
    // panel that lands late above the carpet would move it.
    const clickRow1 = async () => {
      const b = (await carpet.locator(".carpet-box").boundingBox())!;
      await page.mouse.click(b.x + b.width / 2, b.y + 14 + 7);
    };
    await clickRow1();
    await expect.poll(() => lanesParam(page)).toBe("g:0,g:2-3");
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "3");
    // the carpet has drawn the new selection (its click handler sees it) before the next click
    await expect(carpet).toHaveAttribute("data-selected", "0,2,3");
    await clickRow1();
    await expect.poll(() => lanesParam(page)).toBe("g:0,g:2-3,g:1");
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "4");
    await expect(carpet).toHaveAttribute("data-selected", "0,1,2,3");

    await page.getByRole("button", { name: "num_running_reqs" }).click();
    await expect(page).toHaveURL(/ov=off/);
    await page.getByRole("button", { name: "mem", exact: true }).click();
    await expect(page).toHaveURL(/mem=1/);
    await carpet.getByRole("button", { name: "phase" }).click();
    await expect(page).toHaveURL(/carpet=phase/);
    await expect(carpet).toHaveAttribute("data-metric", "phase");
    await page.getByRole("button", { name: "Toggle dark theme" }).click();
    await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
    await shot(page, "timeline-dark");
    await page.getByRole("button", { name: "Toggle dark theme" }).click();
  });

  test("a run without telemetry says why the view is absent", async ({ page }) => {
    const name = `no-telemetry-${Date.now()}`;
    const dash = path.join(E2E.runsRoot, name, "dashboard");
    fs.mkdirSync(dash, { recursive: true });
    fs.writeFileSync(path.join(dash, "meta.json"), JSON.stringify({ run_name: name, start_ts: 1000, args: {}, schema_version: 1 }));
    fs.writeFileSync(path.join(dash, "metrics.jsonl"), `${JSON.stringify({ ts: 1001, step_key: "rollout/step", step: 0, metrics: { "rollout/rewards_mean": 0.5 } })}\n`);
    await page.goto(`/runs/${name}/timeline`);
    await expect(page.getByTestId("timeline-absent")).toContainText("No compute telemetry");
    await shot(page, "timeline-absent");
    await removeRuns(name);
  });
});

test.describe("Compute Utilization follow mode", () => {
  test("a new step and new GPU samples appear without a reload; typing survives refreshes", async ({ page }) => {
    const name = `follow-timeline-${Date.now()}`;
    const dir = path.join(E2E.runsRoot, name);
    fs.cpSync(path.join(E2E.runsRoot, "miles-demo"), dir, { recursive: true });
    await page.goto(`/runs/${name}/timeline`);
    await expect(page.getByTestId("step-strip")).toHaveAttribute("data-steps", "3");
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "4");
    await laneInput(page).fill("g:0-");

    const rec = { ts: 1000425.0, step_key: "rollout/step", step: 3, metrics: { "perf/step_time": 92.0, "perf/wait_time_ratio": 0.1 } };
    fs.appendFileSync(path.join(dir, "dashboard", "metrics.jsonl"), `${JSON.stringify(rec)}\n`);
    const gpuFile = fs.readdirSync(path.join(dir, "dashboard", "gpu_util"))[0]!;
    const rows = [0, 1, 2, 3].map((g) => JSON.stringify({ ts: 1000420.0, node: "10.0.0.1", gpu: g, util: 90, mem_mb: 40000, power_w: 500 }));
    fs.appendFileSync(path.join(dir, "dashboard", "gpu_util", gpuFile), `${rows.join("\n")}\n`);

    await expect(page.getByTestId("step-strip")).toHaveAttribute("data-steps", "4", { timeout: 30_000 });
    // what was being typed is still there after the refreshes
    await expect(laneInput(page)).toHaveValue("g:0-");
    await shot(page, "timeline-follow");
    await removeRuns(name);
  });
});

/** UTC hour partition name of a unix time (docs/formats.md §3). */
function hourKey(ts: number): string {
  const d = new Date(ts * 1000);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}_${p(d.getUTCHours())}`;
}

/** A synthetic run: `nodeCount` nodes × 8 GPUs, 1 Hz util for `hours`, a 300 s step cycle of phases. */
function writeBigRun(dir: string, hours: number, nodeCount = 4): void {
  const dash = path.join(dir, "dashboard");
  const T0 = 1_700_000_000;
  const T1 = T0 + hours * 3600;
  fs.mkdirSync(path.join(dash, "gpu_util"), { recursive: true });
  fs.mkdirSync(path.join(dash, "phases"), { recursive: true });
  fs.writeFileSync(path.join(dash, "meta.json"), JSON.stringify({ run_name: path.basename(dir), start_ts: T0, args: {}, schema_version: 1 }));
  const nodes = Array.from({ length: nodeCount }, (_, i) => `10.0.1.${i + 1}`);
  const gpuParts = new Map<string, string[]>();
  for (let t = T0; t < T1; t++) {
    const phase = (t - T0) % 300;
    const k = hourKey(t);
    let part = gpuParts.get(k);
    if (!part) gpuParts.set(k, (part = []));
    nodes.forEach((node, ni) => {
      for (let g = 0; g < 8; g++) {
        const util = phase < 120 ? 60 + ((t + g) % 30) : phase < 220 ? 95 : phase < 230 ? 40 : 5 + ((t * 7 + ni) % 9);
        part.push(`{"ts":${t},"node":"${node}","gpu":${g},"util":${util},"mem_mb":${40000 + g * 100},"power_w":${200 + util * 4}}`);
      }
    });
  }
  for (const [k, lines] of gpuParts) fs.writeFileSync(path.join(dash, "gpu_util", `${k}.jsonl`), `${lines.join("\n")}\n`);
  const phaseParts = new Map<string, string[]>();
  const metrics: string[] = [];
  const cycle = [
    ["data_preprocess", 0, 10],
    ["actor_train", 10, 210],
    ["log_probs", 20, 60],
    ["update_weights", 210, 230],
    ["train_wait", 230, 300],
  ] as const;
  for (let s = 0; T0 + (s + 1) * 300 <= T1; s++) {
    const base = T0 + s * 300;
    nodes.forEach((node, ni) => {
      for (let g = 0; g < 8; g++) {
        for (const [name, a, b] of cycle) {
          const k = hourKey(base + b);
          let part = phaseParts.get(k);
          if (!part) phaseParts.set(k, (part = []));
          part.push(JSON.stringify({ name, t0: base + a, t1: base + b, node, gpus: [g], rank: ni * 8 + g, role: "train" }));
        }
      }
    });
    metrics.push(JSON.stringify({ ts: base + 300, step_key: "rollout/step", step: s, metrics: { "perf/step_time": 300, "perf/wait_time_ratio": 70 / 300, "rollout/rewards_mean": 0.3 + s / 100 } }));
  }
  for (const [k, lines] of phaseParts) fs.writeFileSync(path.join(dash, "phases", `${k}.jsonl`), `${lines.join("\n")}\n`);
  fs.writeFileSync(path.join(dash, "metrics.jsonl"), `${metrics.join("\n")}\n`);
}

test.describe("Compute Utilization at scale", () => {
  test("the 64-GPU demo run opens on 8 evenly spaced lanes over a 64-row carpet", async ({ page }) => {
    await page.goto("/runs/llama-70b-gspo-64gpu/timeline");
    await expect.poll(() => lanesParam(page), { timeout: 20_000 }).toBe("g:0,g:8,g:16,g:24,g:32,g:40,g:48,g:56");
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "8");
    await expect(lanes(page)).toHaveAttribute("data-lanes-with-util", "8", { timeout: 20_000 });
    await expect(page.getByTestId("carpet")).toHaveAttribute("data-rows", "64", { timeout: 20_000 });
    await settled(page);
    // the demo fleet has a stalled engine: the advisory raises it
    await expect(page.getByTestId("advisory")).toBeVisible();
    await shot(page, "timeline-demo-64gpu");
    await page.goto("/runs/llama-70b-gspo-64gpu/metrics");
    // drawn with data, not only laid out (data-points is set before the answer arrives)
    await expect(page.getByTestId("metric-card").first().locator("canvas")).toHaveAttribute("data-painted", "data", { timeout: 20_000 });
    await shot(page, "metrics-demo-64gpu");
  });

  test("above 64 lanes: fleet overview and a default of 8 evenly spaced lanes in the URL", async ({ page }) => {
    const name = `fleet-${Date.now()}`;
    const dir = path.join(E2E.runsRoot, name);
    writeBigRun(dir, 1 / 6, 9); // 72 lanes × 10 min
    const gpuAsked: string[] = [];
    page.on("request", (r) => {
      const u = new URL(r.url());
      if (u.pathname === "/api/timeline/gpu") gpuAsked.push(u.searchParams.get("lanes") ?? "");
    });
    await page.goto(`/runs/${name}/timeline`);
    await expect.poll(() => lanesParam(page)).toBe("g:0,g:9,g:18,g:27,g:36,g:45,g:54,g:63");
    await expect(page.getByTestId("lane-chip")).toHaveCount(8);
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "8");
    await expect(page.getByTestId("fleet")).toContainText("fleet overview · 72 lanes");
    await expect(page.getByTestId("carpet")).toHaveCount(0);
    // Clear = every lane: a row for each of the 72, the page of 32 in sight drawn
    await page.getByRole("button", { name: "Clear" }).click();
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "32");
    await expect(lanes(page)).toHaveAttribute("data-lanes-total", "72");
    await expect(lanes(page)).toHaveAttribute("data-lanes-offset", "0");
    await expect(page.getByTestId("lane-count")).toHaveText("72 lanes shown");
    await expect(page.getByTestId("lane-paging")).toContainText("rows are drawn 32 at a time as you scroll");
    const box = await lanes(page).boundingBox();
    expect(box!.height).toBe(72 * 66);
    // rows below the page carry their lane's name until their page is drawn
    await expect(lanes(page).locator("[data-pending-lane]")).toHaveCount(40);
    await expect(lanes(page).locator('[data-pending-lane="40"]')).toHaveText(/^g40\s*10\.0\.1\.\d+:\d$/);
    await expect(lanes(page)).toHaveAttribute("data-lanes-with-util", "32", { timeout: 20_000 });
    const rowsBy = (k: number) =>
      page.evaluate((k) => {
        const rows = document.querySelector('[data-testid="lane-canvas"]')!;
        const first = 32 - (Math.ceil(window.innerHeight / 66) + 1) + k;
        window.scrollTo(0, rows.getBoundingClientRect().top + window.scrollY + first * 66);
      }, k);
    // the page a scroll down reaches next is asked once this one has its data and the rows
    // in sight near its edge…
    await rowsBy(-12);
    await page.waitForTimeout(500);
    expect(gpuAsked.filter((l) => /^g:[1-9]/.test(l))).toHaveLength(0);
    await rowsBy(-4);
    await expect.poll(() => gpuAsked.filter((l) => /^g:([1-9]\d*)-\d+$/.test(l))).toHaveLength(1);
    const ahead = gpuAsked.find((l) => /^g:[1-9]/.test(l))!;
    const aheadStart = Number(/^g:(\d+)/.exec(ahead)![1]);
    // …so scrolling until the rows in sight step out of the first page draws it from the cache
    await rowsBy(1);
    await expect(lanes(page)).toHaveAttribute("data-lanes-offset", String(aheadStart));
    await expect(lanes(page)).toHaveAttribute("data-lanes-with-util", "32");
    expect(gpuAsked.filter((l) => l === ahead)).toHaveLength(1);
    // scrolled to the last rows: their page is asked and drawn with data
    await page.evaluate(() => {
      const rows = document.querySelector('[data-testid="lane-canvas"]')!;
      window.scrollTo(0, rows.getBoundingClientRect().bottom + window.scrollY - window.innerHeight + 10);
    });
    await expect(lanes(page)).toHaveAttribute("data-lanes-offset", "40");
    await expect(lanes(page)).toHaveAttribute("data-lanes-with-util", "32", { timeout: 20_000 });
    await expect(lanes(page).locator('canvas[data-lane="71"]')).toBeInViewport();
    await expect(lanes(page).locator('canvas[data-lane="0"]')).toHaveCount(0);
    await expect(lanes(page).locator('[data-pending-lane="0"] b')).toHaveText("g0");
    await expect(lanes(page).locator('[data-pending-lane="71"]')).toHaveCount(0);
    await expect(lanes(page)).toHaveAttribute("aria-label", /GPU lanes 41–72 of 72/);
    await shot(page, "timeline-fleet-scrolled");
    await page.goBack();
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "8");
    await shot(page, "timeline-fleet");
    await removeRuns(name);
  });

  test("32 lanes × 1 h: time to draw and the slowest frame of a 2 s drag-pan", async ({ page }) => {
    const name = `big-${Date.now()}`;
    const dir = path.join(E2E.runsRoot, name);
    writeBigRun(dir, 1);
    const t0 = Date.now();
    await page.goto(`/runs/${name}/timeline?lanes=g:0-31`);
    await expect(lanes(page)).toHaveAttribute("data-lanes-shown", "32", { timeout: 30_000 });
    await expect(lanes(page)).toHaveAttribute("data-lanes-with-util", "32", { timeout: 30_000 });
    const drawMs = Date.now() - t0;
    await expect(page.getByTestId("carpet")).toHaveAttribute("data-rows", "32");

    // zoom to 15 min so there is room to pan, let the strips build, then pan for 2 s
    await page.goto(`/runs/${name}/timeline?lanes=g:0-31&v=1700001200~1700002100`);
    await expect(lanes(page)).toHaveAttribute("data-lanes-with-util", "32", { timeout: 30_000 });
    await settled(page);
    const box = (await lanes(page).boundingBox())!;
    await page.evaluate(() => {
      const w = window as unknown as { __frames: number[]; __stop: boolean };
      w.__frames = [];
      w.__stop = false;
      let last = performance.now();
      const tick = (now: number) => {
        w.__frames.push(now - last);
        last = now;
        if (!w.__stop) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    // E2E_PROFILE=1: sample the renderer's JS during the pan and print the top self times.
    const cdp = process.env.E2E_PROFILE ? await page.context().newCDPSession(page) : null;
    if (cdp) {
      await cdp.send("Profiler.enable");
      await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
      await cdp.send("Profiler.start");
    }
    await page.mouse.move(box.x + box.width * 0.8, box.y + 100);
    await page.mouse.down();
    const start = Date.now();
    let i = 0;
    while (Date.now() - start < 2000) {
      i++;
      const f = (i % 120) / 120;
      await page.mouse.move(box.x + box.width * (0.8 - 0.6 * (f < 0.5 ? f * 2 : 2 - f * 2)), box.y + 100);
    }
    // The back-and-forth ends wherever the 2 s ran out: when that was a whole number of
    // sweeps the pan came back to its start and the view did not move. End 0.3 of the
    // width away from the start, so the pan always moves the view.
    await page.mouse.move(box.x + box.width * 0.5, box.y + 100, { steps: 4 });
    await page.mouse.up();
    if (cdp) {
      const { profile } = await cdp.send("Profiler.stop");
      const self = new Map<string, number>();
      const dt = profile.timeDeltas ?? [];
      const byId = new Map(profile.nodes.map((n) => [n.id, n]));
      (profile.samples ?? []).forEach((id, i) => {
        const n = byId.get(id);
        const key = n ? `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.split("/").pop()}:${n.callFrame.lineNumber}` : "?";
        self.set(key, (self.get(key) ?? 0) + (dt[i] ?? 0) / 1000);
      });
      const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25);
      console.log(`[profile] total ${[...self.values()].reduce((a, b) => a + b, 0).toFixed(0)} ms\n${top.map(([k, v]) => `  ${v.toFixed(1)} ms  ${k}`).join("\n")}`);
    }
    await expect(page).not.toHaveURL(/v=1700001200~1700002100/);
    const frames = await page.evaluate(() => {
      const w = window as unknown as { __frames: number[]; __stop: boolean };
      w.__stop = true;
      return w.__frames.slice(2);
    });
    const sorted = [...frames].sort((a, b) => a - b);
    const p95 = sorted[Math.floor(sorted.length * 0.95)] ?? 0;
    const worst = sorted[sorted.length - 1] ?? 0;
    console.log(`[perf] 32 lanes × 1 h: drawn in ${drawMs} ms; pan: ${frames.length} frames, p95 ${p95.toFixed(1)} ms, worst ${worst.toFixed(1)} ms, ${i} moves`);
    await shot(page, "timeline-32-lanes");
    expect(drawMs).toBeLessThan(15_000);
    await removeRuns(name);
  });
});
