"use client";

/**
 * Metrics view: category sidebar + filter, one line chart per key of the category
 * (engine metrics: one line per engine, with a legend), live in follow mode.
 * State in the URL: cat, q, x (shared x zoom), y:<key> (per-chart y zoom), dp, hide, step,
 * and the chart controls (docs/charts.md §6): sm (smoothing), ylog, xm (x = step | wall | rel).
 * Keys: `[` / `]` move the step cursor, Enter opens that step's rollouts, Esc resets zoom.
 */
import { Link } from "@/components/shell/Link";
import { useRouter } from "next/navigation";
import { useMemo, useState } from "react";
import type { Meta } from "@/lib/charts/api-shapes";
import type { Range, Zoom } from "@/lib/charts/core/range";
import { chartControlsPatch, parseChartControls, type ChartControls as Controls } from "@/lib/charts/chart-controls";
import { buildCategories, filterKeys, type Category } from "@/lib/charts/metric-catalog";
import { neighbourId, parseMetricsState, writeMetricsState, type MetricsUrlState } from "@/lib/charts/metrics-url";
import { ApiClientError, errorMessage } from "@/lib/client/fetcher";
import { useMeta } from "@/lib/client/telemetry-queries";
import { FreshnessBadge } from "@/components/charts/FreshnessBadge";
import { ChartControls } from "@/components/charts/ChartControls";
import { useShortcuts } from "@/components/charts/use-shortcuts";
import { currentParams, useUrlState, type HistoryMode } from "@/components/charts/use-url-state";
import { EngineGrid } from "@/components/metrics/EngineGrid";
import { ScalarGrid, type MetricsNav } from "@/components/metrics/ScalarGrid";
import { useFilterText } from "@/components/metrics/use-filter-text";
import { noDumpNote } from "@/lib/rollout-view/nav";
import "@/app/views.css";
import { WhyEmpty } from "@/components/health/WhyEmpty";

const METRICS_HINT = "drag = zoom · dbl-click = reset · click a point = open its step · [ ] = step · Esc = reset";

function errorText(err: unknown): string {
  return err instanceof ApiClientError ? `${err.message} (HTTP ${err.status})` : errorMessage(err);
}

export function MetricsView({ runId, initialMeta }: { runId: string; initialMeta: Meta | null }) {
  const router = useRouter();
  const meta = useMeta(runId, initialMeta);
  const { params, write, replace } = useUrlState();
  const state = parseMetricsState(params);
  const controls = parseChartControls(params, "xm");
  // a new y scale or x axis makes the zooms meaningless: they go with the change
  const setControls = (c: Partial<Controls>) =>
    replace({
      ...chartControlsPatch(c, "xm"),
      ...("xMode" in c ? { x: null } : {}),
      ...("xMode" in c || "logY" in c ? Object.fromEntries([...currentParams().keys()].filter((k) => k.startsWith("y:")).map((k) => [k, null])) : {}),
    });
  const m = meta.data;

  // derived per-step keys (drift/*, staleness/*, perf/*: /api/meta.derived_metric_keys) join the logged ones
  const categories = useMemo(() => (m ? buildCategories([...new Set([...m.metric_keys, ...(m.derived_metric_keys ?? [])])], m.engine_metric_keys) : []), [m]);
  const active: Category | undefined = categories.find((c) => c.name === state.category) ?? categories[0];
  const follow = m?.mode === "follow";

  const update = (patch: Partial<MetricsUrlState>, mode: HistoryMode = "replace") => write(writeMetricsState(currentParams(), patch), mode);

  const [filterText, onFilter] = useFilterText(state.filter, (v) => write(writeMetricsState(currentParams(), { filter: v }), "replace"));

  const keys = useMemo(() => (active ? filterKeys(active.keys, state.filter) : []), [active, state.filter]);

  const trainIds = useMemo(() => new Set(m?.rollout_ids.train ?? []), [m]);
  const evalIds = useMemo(() => new Set(m?.rollout_ids.eval ?? []), [m]);
  const base = `/runs/${encodeURIComponent(runId)}`;
  const nav: MetricsNav = useMemo(
    () => ({
      stepHref: (axis, step) => {
        if (axis === "rollout/step" && trainIds.has(step)) return `${base}/rollout/${step}`;
        if (axis === "eval/step" && evalIds.has(step)) return `${base}/rollout/${step}?eval=1`;
        return null;
      },
      noDump: (axis, step) => setNoDump(noDumpNote(axis === "eval/step", step, axis === "eval/step" ? m?.rollout_ids.eval ?? [] : m?.rollout_ids.train ?? [])),
    }),
    [base, trainIds, evalIds, m],
  );
  const [noDump, setNoDump] = useState<string | null>(null);

  const setZoom = (key: string, z: Zoom) => {
    const y: Record<string, Range> = { ...state.y };
    if (z.y) y[key] = z.y;
    else delete y[key];
    update({ x: z.x, y });
  };

  // `[`/`]` step cursor, Enter opens it, Esc resets zoom.
  const sortedTrainIds = useMemo(() => [...trainIds].sort((a, b) => a - b), [trainIds]);
  useShortcuts((e) => {
    // the address bar, not the last render: two quick key presses must both count
    const s = parseMetricsState(currentParams());
    if (e.key === "Escape") update({ x: null, y: {}, step: null });
    else if ((e.key === "[" || e.key === "]") && sortedTrainIds.length > 0) {
      const next = neighbourId(sortedTrainIds, s.step, e.key === "]" ? 1 : -1);
      if (next !== undefined) update({ step: next });
    } else if (e.key === "Enter" && s.step !== null) {
      const href = nav.stepHref("rollout/step", s.step);
      if (href) router.push(href);
    } else return false;
    return true;
  });

  if (meta.isPending) return <p className="muted">loading metrics…</p>;
  if (!m) {
    return (
      <div className="error-box" role="alert">
        Could not load this run&apos;s metrics: {errorText(meta.error)}{" "}
        <button type="button" className="btn" onClick={() => void meta.refetch()}>
          Retry
        </button>
      </div>
    );
  }

  const t1 = m.time_range ? m.time_range[1] : null;
  const t0 = m.time_range ? m.time_range[0] : null;
  const zoomText = state.x ? `${state.x[0].toPrecision(4)} – ${state.x[1].toPrecision(4)}` : null;
  const stepHref = state.step !== null ? nav.stepHref("rollout/step", state.step) : null;

  return (
    <div className="metrics-layout" data-testid="metrics-view" data-category={active?.name ?? ""}>
      <aside className="panel metrics-side" aria-label="Metric categories">
        <h2 className="panel-title">Metrics</h2>
        <input
          className="input"
          type="search"
          placeholder="filter…"
          aria-label="Filter metrics"
          value={filterText}
          onChange={(e) => onFilter(e.target.value)}
        />
        <nav className="cat-list" aria-label="Categories">
          {categories.map((c) => {
            const n = filterKeys(c.keys, state.filter).length;
            return (
              <button
                key={c.name}
                type="button"
                className="cat-btn"
                aria-pressed={c.name === active?.name}
                onClick={() => {
                  const crossing = (c.kind === "engine") !== (active?.kind === "engine");
                  update({ category: c.name, ...(crossing ? { x: null, y: {} } : {}) }, "push");
                }}
              >
                <span>{c.name}</span>
                <span className="cat-count">{state.filter ? `${n}/${c.keys.length}` : c.keys.length}</span>
              </button>
            );
          })}
        </nav>
        {m.metric_keys.some((k) => k.startsWith("dump/")) && !m.capabilities.has_metrics ? (
          <p className="muted small">No metrics stream: values are aggregated from the rollout dumps.</p>
        ) : null}
      </aside>

      <section className="metrics-main">
        <div className="view-toolbar">
          <FreshnessBadge mode={m.mode} t1={t1} failing={meta.isError} error={meta.error ? errorText(meta.error) : null} />
          {zoomText || Object.keys(state.y).length > 0 ? (
            <span className="zoom-pill">
              zoom {zoomText ? `x ${zoomText}` : ""}
              {Object.keys(state.y).length > 0 ? ` · y on ${Object.keys(state.y).length} chart(s)` : ""}
              <button type="button" className="link-btn" onClick={() => update({ x: null, y: {} })} title="Reset zoom (Esc)">
                reset
              </button>
            </span>
          ) : null}
          {state.step !== null ? (
            <span className="zoom-pill" data-testid="step-cursor">
              step {state.step}
              {stepHref ? (
                <Link href={stepHref} className="link-btn">
                  open rollouts →
                </Link>
              ) : null}
              <button type="button" className="link-btn" onClick={() => update({ step: null })} aria-label="Clear step cursor">
                ×
              </button>
            </span>
          ) : null}
          {noDump ? (
            <span className="zoom-pill warn-text" role="status" data-testid="no-dump-note">
              {noDump}
              <button type="button" className="link-btn" onClick={() => setNoDump(null)} aria-label="Dismiss">
                ×
              </button>
            </span>
          ) : null}
          <ChartControls
            value={controls}
            onChange={setControls}
            xModes={active?.kind === "engine" ? ["wall", "rel"] : ["step", "wall", "rel"]}
          />
          <span className="hint muted" title={METRICS_HINT}>
            {METRICS_HINT}
          </span>
        </div>

        {categories.length === 0 ? (
          <div className="empty panel">
            No metrics logged for this run yet{follow ? " — waiting for the first step" : ""}.
            <WhyEmpty runId={runId} inputs={["dashboard", "metrics"]} />
            {m.capabilities.has_timeline ? (
              <>
                {" "}
                GPU telemetry is available under <Link href={`${base}/timeline`}>Compute Utilization</Link>.
              </>
            ) : null}
          </div>
        ) : keys.length === 0 ? (
          <div className="empty panel">No metrics here match “{state.filter}”.</div>
        ) : active?.kind === "engine" ? (
          <EngineGrid
            runId={runId}
            metrics={keys}
            follow={follow}
            perDpRank={state.perDpRank}
            hidden={state.hidden}
            t0={t0 ?? m.start_ts}
            zoomX={state.x}
            zoomY={state.y}
            onZoom={setZoom}
            onDpRank={(v) => update({ perDpRank: v, hidden: [] })}
            onHidden={(h) => update({ hidden: h })}
            controls={controls}
          />
        ) : (
          <ScalarGrid
            runId={runId}
            keys={keys}
            follow={follow}
            zoomX={state.x}
            zoomY={state.y}
            onZoom={setZoom}
            step={state.step}
            nav={nav}
            controls={controls}
            t0={m.start_ts ?? t0 ?? 0}
          />
        )}
      </section>
    </div>
  );
}
