/**
 * The offline report viewer (docs/export.md): bundled into the report's single HTML file
 * at export time. It reads the inlined report JSON (`<script type="application/json"
 * id="report-data">`, the heavy parts in `data-part` blocks parsed on first use) and draws the header, Metrics, Compute Utilization, advisories,
 * rollout steps and samples. No network: the page's CSP forbids every request.
 * `<html data-ready="1">` once the first tab drew (`data-ready-ms`: time since navigation).
 */
import { formatDateTime, formatDuration, formatValue } from "@/lib/charts/core/format";
import { buildCategories, describeMetric } from "@/lib/charts/metric-catalog";
import { prepareScalarChart } from "@/lib/charts/prepare-line";
import { seriesColor } from "@/lib/charts/palette";
import type { Report } from "@/lib/contracts/report";
import { LAZY_PARTS, type PartsIndex } from "@/lib/export/parts";
import { absentLine, h } from "./dom";
import { lineChart } from "./line-chart";
import { sampleSection, stepSection } from "./rollout";
import { fleetChart, lanesChart } from "./util-chart";

function lastValue(s: { x: (number | null)[]; y: unknown[] } | undefined): number | null {
  if (!s) return null;
  let best: number | null = null;
  let bx = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < s.y.length; i++) {
    const x = s.x[i];
    const y = s.y[i];
    const v = typeof y === "boolean" ? Number(y) : y;
    if (typeof x !== "number" || typeof v !== "number" || !Number.isFinite(v)) continue;
    if (x >= bx) {
      bx = x;
      best = v;
    }
  }
  return best;
}

function header(r: Report, ix: PartsIndex): HTMLElement {
  const m = r.meta;
  const range = m.time_range;
  const u = ix.utilization;
  const topo = !u
    ? "no topology"
    : u.kind === "fleet"
      ? `${u.lanes} GPU lanes`
      : `${u.lanes} GPU lanes on ${u.nodes} node${u.nodes === 1 ? "" : "s"}, ${u.engines} rollout engine${u.engines === 1 ? "" : "s"}`;
  const args = r.run.args ? Object.entries(r.run.args) : [];
  return h(
    "header",
    {},
    h("h1", { id: "run-name" }, r.run.name),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "run"),
      h("dd", {}, r.run.id),
      h("dt", {}, "time range"),
      h("dd", { id: "time-range" }, range ? `${formatDateTime(range[0], true)} → ${formatDateTime(range[1], true)} (${formatDuration(range[1] - range[0])})` : "—"),
      h("dt", {}, "topology"),
      h("dd", { id: "topology" }, topo),
      h("dt", {}, "steps"),
      h("dd", {}, `${m.rollout_ids.train.length} train, ${m.rollout_ids.eval.length} eval (exported: ${ix.rollout_steps.join(", ") || "none"})`),
      h("dt", {}, "generated"),
      h("dd", {}, `${r.generated_at} by rlboard ${r.rlboard_version}`),
    ),
    args.length
      ? h(
          "details",
          { class: "args" },
          h("summary", {}, `args (${args.length})`),
          h("table", {}, h("tbody", {}, args.map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, typeof v === "string" ? v : JSON.stringify(v)))))),
        )
      : h("p", { class: "muted" }, "no launch args recorded (meta.json)"),
    r.incomplete.length
      ? h(
          "div",
          { class: "incomplete", id: "incomplete" },
          h("strong", {}, "Incomplete input — left out of this report:"),
          h("ul", {}, r.incomplete.map((i) => h("li", { "data-what": i.what }, `${i.what}: ${i.reason}`))),
        )
      : null,
  );
}

function metricsTab(r: Report): HTMLElement {
  const cats = buildCategories(r.meta.metric_keys, []);
  let color = 0;
  return h(
    "div",
    {},
    cats.map((c) =>
      h(
        "section",
        { class: "category", "data-category": c.name },
        h("h2", {}, `${c.name} (${c.keys.length})`),
        h(
          "div",
          { class: "chart-grid" },
          c.keys.map((key) => {
            const pts = r.metrics[key];
            const model = prepareScalarChart(key, pts, seriesColor(color++ % 8));
            const last = lastValue(pts);
            return h(
              "div",
              { class: "card", "data-key": key },
              h("div", { class: "card-title", title: describeMetric(key) ?? key }, key, h("span", { class: "last", "data-last": last === null ? "" : String(last) }, formatValue(last))),
              lineChart(model),
              h("div", { class: "muted small" }, `x: ${r.metric_axes[key] ?? "rollout/step"} · ${model.points} points`),
            );
          }),
        ),
      ),
    ),
  );
}

function utilizationTab(r: Report): HTMLElement {
  const u = r.utilization!;
  const t0 = r.meta.start_ts ?? r.meta.time_range?.[0] ?? 0;
  return h("div", {}, r.absent.lanes ? h("p", { class: "muted" }, r.absent.lanes) : null, u.kind === "lanes" ? lanesChart(u, r.phases, t0) : fleetChart(u, t0));
}

function advisoryTab(r: Report): HTMLElement {
  const a = r.advisory!;
  return h(
    "div",
    {},
    a.advisories.length
      ? h("ul", { class: "advisories" }, a.advisories.map((x) => h("li", { class: `adv adv-${x.level}` }, h("strong", {}, x.level), " ", x.message)))
      : h("p", {}, "No advisories."),
    a.mfu ? h("p", { class: "muted" }, `MFU latest ${formatValue(a.mfu.latest)}, mean ${formatValue(a.mfu.mean)}, peak ${formatValue(a.mfu.peak)} over ${a.mfu.steps} steps`) : null,
  );
}

function rolloutsTab(r: Report): HTMLElement {
  return h("div", {}, Object.entries(r.rollout).map(([step, d]) => stepSection(step, d)));
}

function samplesTab(r: Report): HTMLElement {
  const out = h("div", {});
  for (const [step, list] of Object.entries(r.samples)) {
    const rows = new Map(r.rollout[step]?.summary.rows.map((x) => [x.sample_index, x]) ?? []);
    out.append(h("h3", {}, `Step ${step}`));
    if (!list.length) out.append(h("p", { class: "muted" }, "no samples exported for this step"));
    for (const s of list) out.append(sampleSection(step, s, rows.get(s.sample_index)));
  }
  return out;
}

interface Tab {
  id: string;
  label: string;
  absent: string | null;
  render: () => HTMLElement;
}

function main(): void {
  const r = JSON.parse(document.getElementById("report-data")!.textContent) as Report;
  // The heavy parts are parsed on first read (lib/export/parts.ts).
  for (const k of LAZY_PARTS) {
    let value: unknown;
    let parsed = false;
    Object.defineProperty(r, k, {
      get() {
        if (!parsed) {
          value = JSON.parse(document.querySelector(`script[data-part="${k}"]`)!.textContent);
          parsed = true;
        }
        return value;
      },
    });
  }
  document.title = `${r.run.name} — rlboard offline report`;
  const root = document.getElementById("app")!;
  const ix = JSON.parse(document.getElementById("report-index")!.textContent) as PartsIndex;
  root.replaceChildren(header(r, ix));
  const tabs: Tab[] = [
    { id: "metrics", label: "Metrics", absent: r.absent.metrics ?? null, render: () => metricsTab(r) },
    {
      id: "utilization",
      label: "Compute Utilization",
      absent: r.absent.utilization ?? (ix.utilization ? null : "compute utilization could not be read (see incomplete)"),
      render: () => utilizationTab(r),
    },
    { id: "advisories", label: "Advisories", absent: r.advisory ? null : "advisories could not be computed (see incomplete)", render: () => advisoryTab(r) },
    { id: "rollouts", label: "Rollouts", absent: r.absent.rollout ?? (ix.rollout_steps.length ? null : "no rollout step could be read"), render: () => rolloutsTab(r) },
    {
      id: "samples",
      label: "Samples",
      absent: r.absent.rollout ?? (r.options.samples_per_step === 0 ? "no samples exported (--samples-per-step 0)" : ix.sample_steps.length ? null : "no sample could be read"),
      render: () => samplesTab(r),
    },
  ];
  const present = tabs.filter((t) => !t.absent);
  const bar = h("nav", { class: "tabs" });
  const panels = h("main", {});
  const rendered = new Map<string, HTMLElement>();
  const show = (id: string) => {
    for (const b of bar.querySelectorAll("button")) b.classList.toggle("active", b.dataset.tab === id);
    for (const t of present) {
      let p = rendered.get(t.id);
      if (t.id === id && !p) {
        p = h("div", { class: "panel", id: `panel-${t.id}`, "data-panel": t.id }, t.render());
        rendered.set(t.id, p);
        panels.append(p);
      }
      if (p) p.hidden = t.id !== id;
    }
  };
  for (const t of present) {
    const b = h("button", { type: "button", "data-tab": t.id }, t.label);
    b.addEventListener("click", () => show(t.id));
    bar.append(b);
  }
  const missing = tabs.filter((t) => t.absent);
  root.append(bar, missing.length ? h("div", { class: "absent-tabs" }, missing.map((t) => absentLine(`${t.label}: ${t.absent}`))) : "", panels);
  if (present.length) show(present[0]!.id);
  document.documentElement.dataset.readyMs = String(Math.round(performance.now()));
  document.documentElement.dataset.ready = "1";
}

main();
