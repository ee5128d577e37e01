/**
 * Offline export (#17, docs/export.md): every demo run of the e2e runs root is exported by
 * the real CLI (`npm run export`), each HTML opened from file:// in a context where every
 * request is aborted and recorded — none may be attempted but the document itself — the
 * charts must have drawn and show the JSON's values, and the JSON must equal the API's
 * answers for the same run (fetched with the signed-in context). Then the report is
 * downloaded once through the UI's "Download offline report".
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test, type Browser, type APIRequestContext } from "@playwright/test";
import { formatValue } from "../lib/charts/core/format";
import { E2E } from "./env";

interface Series {
  x: (number | null)[];
  y: unknown[];
  ts: number[];
}
interface ReportLike {
  schema: string;
  run: { id: string; name: string };
  meta: Record<string, unknown> & { metric_keys: string[]; rollout_ids: { train: number[] } };
  metrics: Record<string, Series>;
  metric_axes: Record<string, string>;
  phases: { phases: unknown[] } | null;
  utilization: { kind: "lanes" | "fleet"; lanes?: number; topology?: { lanes: unknown[] } } | null;
  advisory: unknown;
  rollout: Record<string, { summary: { rows: Record<string, unknown>[] }; groups: unknown }>;
  samples: Record<string, { sample_index: number; tokens: unknown; messages: unknown }[]>;
  absent: Record<string, string>;
  incomplete: { what: string; reason: string }[];
}

const OUT = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-e2e-export-"));
const APP_ROOT = path.resolve(import.meta.dirname, "..");

function exportRun(dir: string, name: string): { html: string; report: ReportLike } {
  const html = path.join(OUT, `${name}.html`);
  const json = path.join(OUT, `${name}.json`);
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", path.join(APP_ROOT, "cli", "export.ts"), "--dump-details", dir, "--out", html, "--json", json, "--samples-per-step", "2"],
    { cwd: APP_ROOT, encoding: "utf8", timeout: 240_000 },
  );
  expect(r.status, r.stderr).toBe(0);
  expect(r.stderr).toContain(`rlboard: exported `);
  return { html, report: JSON.parse(fs.readFileSync(json, "utf8")) as ReportLike };
}

function lastValue(s: Series): number | null {
  let best: number | null = null;
  let bx = Number.NEGATIVE_INFINITY;
  s.y.forEach((y, i) => {
    const x = s.x[i];
    const v = typeof y === "boolean" ? Number(y) : y;
    if (typeof x === "number" && typeof v === "number" && Number.isFinite(v) && x >= bx) {
      bx = x;
      best = v;
    }
  });
  return best;
}

/** Open a report from file:// with every request aborted; returns what was attempted. */
async function openOffline(browser: Browser, file: string) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const attempted: string[] = [];
  const doc = `file://${file}`;
  await ctx.route("**/*", (route) => {
    const url = route.request().url();
    if (url === doc) return route.continue();
    attempted.push(url);
    return route.abort();
  });
  const page = await ctx.newPage();
  page.on("request", (req) => {
    if (req.url() !== doc) attempted.push(req.url());
  });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(doc);
  await expect(page.locator("html")).toHaveAttribute("data-ready", "1", { timeout: 30_000 });
  return { ctx, page, attempted, errors };
}

async function api<T>(request: APIRequestContext, url: string): Promise<T> {
  const res = await request.get(url);
  expect(res.status(), url).toBe(200);
  return (await res.json()) as T;
}

test.describe.configure({ mode: "serial" });

test("every demo run exports; the HTML opens from file:// with no request attempted, draws, and the JSON is the API's answers", async ({ browser, request }) => {
  test.setTimeout(900_000);
  const { runs } = await api<{ runs: { id: string }[] }>(request, "/api/runs");
  const ids = runs.map((r) => r.id).filter((id) => fs.existsSync(path.join(E2E.runsRoot, id)));
  expect(ids.length).toBeGreaterThanOrEqual(5);
  const seen = { lanes: 0, fleet: 0, noTimeline: 0, samples: 0 };
  for (const id of ids) {
    const { html, report } = exportRun(path.join(E2E.runsRoot, id), id);
    expect(report.schema).toBe("rlboard.report/1");
    expect(fs.statSync(html).size).toBeLessThan(25e6);

    // ---- the page, offline
    const { ctx, page, attempted, errors } = await openOffline(browser, html);
    try {
      expect(errors, id).toEqual([]);
      await expect(page.locator("#run-name")).toHaveText(report.run.name);
      const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute("content");
      expect(csp).toMatch(/^default-src 'none';/);
      if (report.meta.metric_keys.length) {
        const key = report.meta.metric_keys.find((k) => lastValue(report.metrics[k]!) !== null)!;
        const card = page.locator(`.card[data-key="${key}"]`);
        await expect(card.locator("canvas")).toHaveAttribute("data-drawn", /^[1-9]\d*$/);
        await expect(card.locator(".last")).toHaveText(formatValue(lastValue(report.metrics[key]!)));
        expect(await page.locator(".card[data-key]").count()).toBe(report.meta.metric_keys.length);
      } else {
        await expect(page.locator("[data-absent]").first()).toContainText("Metrics: no scalar metrics");
      }
      if (report.utilization) {
        await page.click("button[data-tab='utilization']");
        const canvas = page.locator("#panel-utilization canvas");
        await expect(canvas).toHaveAttribute("data-drawn", /^[1-9]\d*$/);
        if (report.utilization.kind === "lanes") {
          seen.lanes++;
          await expect(canvas).toHaveAttribute("data-lanes", String(report.utilization.topology!.lanes.length));
        } else {
          seen.fleet++;
          await expect(canvas).toHaveAttribute("data-lanes", String(report.utilization.lanes));
          await expect(page.locator("#panel-utilization")).toContainText("is more than --max-lanes 64");
        }
        if (id === "llama-70b-gspo-64gpu" || id === "llama-70b-gspo-128gpu")
          await page.screenshot({ path: `${E2E.screenshots}/export-${id}-utilization.png`, fullPage: false });
      } else {
        seen.noTimeline++;
        await expect(page.locator(".absent-tabs")).toContainText("Compute Utilization: no compute timeline");
      }
      const steps = Object.keys(report.rollout);
      if (steps.length) {
        await page.click("button[data-tab='rollouts']");
        const first = page.locator(`section.step[data-step="${steps[0]}"]`);
        await expect(first.locator('[data-tile="samples"] .tile-value')).toHaveText(String(report.rollout[steps[0]!]!.summary.rows.length));
        const withSamples = steps.filter((s) => (report.samples[s] ?? []).length);
        if (withSamples.length) {
          seen.samples++;
          await page.click("button[data-tab='samples']");
          const s = report.samples[withSamples[0]!]![0]!;
          const el = page.locator(`details.sample[data-step="${withSamples[0]}"][data-sample="${s.sample_index}"]`);
          await el.locator(":scope > summary").click();
          if (s.tokens) await expect(el.locator(".tokens")).toHaveAttribute("data-tokens", String((s.tokens as { token_ids: unknown[] }).token_ids.length));
          if (id === "qwen3-4b-grpo-demo") await page.screenshot({ path: `${E2E.screenshots}/export-sample.png`, fullPage: false });
        }
      }
      await page.click("button[data-tab='metrics']", { timeout: 2000 }).catch(() => undefined);
      if (id === "qwen3-4b-grpo-demo") await page.screenshot({ path: `${E2E.screenshots}/export-metrics.png`, fullPage: false });
      expect(attempted, `${id}: requests attempted from the offline report`).toEqual([]);
    } finally {
      await ctx.close();
    }

    // ---- the JSON is the API's answers (signed-in context, same run)
    const q = `run=${encodeURIComponent(id)}`;
    const meta = await api<Record<string, unknown>>(request, `/api/meta?${q}`);
    expect({ ...report.meta, mode: meta.mode, skipped_dumps: meta.skipped_dumps }).toEqual(meta); // the server runs in follow mode
    for (const key of report.meta.metric_keys.slice(0, 6)) {
      const body = await api<Record<string, Series>>(request, `/api/metrics?${q}&keys=${encodeURIComponent(key)}&x=${encodeURIComponent(report.metric_axes[key]!)}`);
      expect(report.metrics[key], `${id} ${key}`).toEqual(body[key]);
    }
    expect(report.advisory).toEqual(await api(request, `/api/advisory?${q}`));
    if (report.utilization?.kind === "lanes") expect(report.utilization.topology).toEqual(await api(request, `/api/timeline/topology?${q}`));
    if (report.utilization?.kind === "fleet") expect((report.utilization as unknown as { fleet: unknown }).fleet).toEqual(await api(request, `/api/timeline/fleet?${q}&x_buckets=800`));
    for (const step of Object.keys(report.rollout).slice(0, 2)) {
      expect(report.rollout[step]!.summary).toEqual(await api(request, `/api/rollout/${step}/summary?${q}`));
      expect(report.rollout[step]!.groups).toEqual(await api(request, `/api/rollout/${step}/groups?${q}`));
      const s = report.samples[step]?.[0];
      if (s?.tokens) expect(s.tokens).toEqual(await api(request, `/api/rollout/${step}/sample/${s.sample_index}/tokens?${q}`));
      if (s?.messages) expect(s.messages).toEqual(await api(request, `/api/rollout/${step}/sample/${s.sample_index}/messages?${q}`));
    }
  }
  // the demo runs cover the lanes view, the fleet overview, a run without telemetry and samples
  expect(seen.lanes).toBeGreaterThan(0);
  expect(seen.fleet).toBeGreaterThan(0);
  expect(seen.noTimeline).toBeGreaterThan(0);
  expect(seen.samples).toBeGreaterThan(0);
});

test("Download offline report from the run header: the attachment is the same self-contained page", async ({ page, browser }) => {
  test.setTimeout(180_000);
  await page.goto("/runs/qwen3-4b-grpo-demo");
  await page.getByText("Download offline report").click();
  await page.locator('input[name="samples_per_step"]').fill("1");
  await page.screenshot({ path: `${E2E.screenshots}/export-button.png`, fullPage: false });
  const [download] = await Promise.all([page.waitForEvent("download", { timeout: 120_000 }), page.getByTestId("export-download").click()]);
  expect(download.suggestedFilename()).toBe("qwen3-4b-grpo-demo-report.html");
  const file = path.join(OUT, "downloaded.html");
  await download.saveAs(file);
  const text = fs.readFileSync(file, "utf8");
  expect(text.startsWith("<!doctype html>")).toBe(true);
  const { ctx, page: offline, attempted } = await openOffline(browser, file);
  try {
    await expect(offline.locator("#run-name")).toHaveText("qwen3-4b-grpo-demo");
    await expect(offline.locator(".card[data-key] canvas").first()).toHaveAttribute("data-drawn", /^[1-9]\d*$/);
    expect(attempted).toEqual([]);
  } finally {
    await ctx.close();
  }
});
