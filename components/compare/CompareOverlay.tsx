"use client";

/**
 * Compare overlay (`view=metrics`, README "Comparing runs"): every scalar metric any run
 * has, one chart per metric, one colour per run (the colour of the run chips), x = step
 * or wall time since each run's start (`x=step|time`), a shared drag-zoom (`zx`), the
 * Metrics view's categories (`cat`) and filter (`q`). Engine (SGLang) series stay on each
 * run's Metrics view. Runs in follow mode poll like the Metrics view does.
 */
import { keepPreviousData, useQueries } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import type { Meta, MetricPoints, MetricsResponse } from "@/lib/charts/api-shapes";
import { formatElapsed, formatTickUnit, formatValueUnit, unitForKey } from "@/lib/charts/core/format";
import type { Range, Zoom } from "@/lib/charts/core/range";
import { stepTicks } from "@/lib/charts/core/ticks";
import { buildCategories, filterKeys, groupByAxis } from "@/lib/charts/metric-catalog";
import { prepareOverlay, type OverlayX } from "@/lib/compare/overlay";
import type { GetCompareResponse } from "@/lib/contracts/compare";
import { apiJson } from "@/lib/client/fetcher";
import { FOLLOW_POLL_MS, telemetryKeys, telemetryUrl } from "@/lib/client/telemetry-queries";
import { CanvasChart } from "@/components/charts/CanvasChart";
import { useUrlState } from "@/components/charts/use-url-state";
import { runColor } from "@/components/compare/RunChips";
import "@/app/views.css";

function parseRange(v: string | null): Range | null {
  if (!v) return null;
  const [a, b] = v.split(",").map(Number);
  return Number.isFinite(a) && Number.isFinite(b) && a! < b! ? [a!, b!] : null;
}

/** Module-level (a stable function), so react-query keeps the combined result while nothing changed. */
function combineMetrics(rs: { data?: MetricsResponse; isPending: boolean }[]): { data: (MetricsResponse | undefined)[]; pending: boolean } {
  return { data: rs.map((r) => r.data), pending: rs.some((r) => r.isPending) };
}

const stepFormat = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(2));

export function CompareOverlay({ report }: { report: GetCompareResponse; live: boolean }) {
  const { params, replace } = useUrlState();
  const xMode: OverlayX = params.get("x") === "time" ? "time" : "step";
  const zoomX = parseRange(params.get("zx"));
  const filter = params.get("q") ?? "";
  const runs = report.runs;

  const metas = useQueries({
    queries: runs.map((r) => ({
      queryKey: telemetryKeys.meta(r.id),
      queryFn: () => apiJson<Meta>(telemetryUrl(r.id, "meta")),
      refetchInterval: (q: { state: { data?: Meta } }) => (q.state.data?.mode === "follow" ? FOLLOW_POLL_MS : false),
    })),
  });
  // stable across polls that bring the same keys (react-query hands out new arrays only on change)
  const keySig = JSON.stringify(metas.map((m) => m.data?.metric_keys ?? []));
  const keyLists = useMemo(() => JSON.parse(keySig) as string[][], [keySig]);
  const union = useMemo(() => [...new Set(keyLists.flat())].sort(), [keyLists]);
  const categories = useMemo(() => buildCategories(union, []), [union]);
  const active = categories.find((c) => c.name === params.get("cat")) ?? categories[0];
  const keys = useMemo(() => (active ? filterKeys(active.keys, filter) : []), [active, filter]);

  // one /api/metrics request per (run, step axis), only for the keys that run has
  const plan = useMemo(
    () =>
      runs.flatMap((r, ri) => {
        const has = new Set(keyLists[ri]);
        return [...groupByAxis(keys.filter((k) => has.has(k))).entries()].map(([axis, ks]) => ({ ri, runId: r.id, axis, keys: ks }));
      }),
    [runs, keys, keyLists],
  );
  const results = useQueries({
    combine: combineMetrics,
    queries: plan.map((p) => ({
      queryKey: telemetryKeys.metrics(p.runId, p.axis, p.keys),
      queryFn: () => apiJson<MetricsResponse>(telemetryUrl(p.runId, "metrics", { keys: p.keys.join(","), x: p.axis })),
      refetchInterval: metas[p.ri]?.data?.mode === "follow" ? FOLLOW_POLL_MS : (false as const),
      placeholderData: keepPreviousData,
    })),
  });
  // per chart, the runs' inputs: stable while no answer changed, so cards do not re-prepare on hover
  const inputs = useMemo(() => {
    const pointsOf = (ri: number, key: string): MetricPoints | undefined => {
      for (let i = 0; i < plan.length; i++) if (plan[i]!.ri === ri && plan[i]!.keys.includes(key)) return results.data[i]?.[key];
      return undefined;
    };
    return new Map(
      keys.map((key) => [
        key,
        runs.map((r, i) => ({ id: r.id, name: r.name, color: runColor(i), startTs: r.start_ts, points: keyLists[i]!.includes(key) ? pointsOf(i, key) : undefined })),
      ]),
    );
  }, [keys, runs, keyLists, plan, results.data]);
  const loading = metas.some((m) => m.isPending) || results.pending;
  const [hoverX, setHoverX] = useState<number | null>(null);
  const [zoomY, setZoomY] = useState<Record<string, Range>>({});
  const setZoom = (key: string, z: Zoom) => {
    replace({ zx: z.x ? `${z.x[0]},${z.x[1]}` : null });
    setZoomY((y) => {
      const next = { ...y };
      if (z.y) next[key] = z.y;
      else delete next[key];
      return next;
    });
  };

  return (
    <div className="metrics-layout" data-testid="compare-overlay" data-category={active?.name ?? ""}>
      <aside className="panel metrics-side" aria-label="Metric categories">
        <h2 className="panel-title">Metrics</h2>
        <input className="input" type="search" placeholder="filter…" aria-label="Filter metrics" defaultValue={filter} onChange={(e) => replace({ q: e.target.value || null })} />
        <nav className="cat-list" aria-label="Categories">
          {categories.map((c) => (
            <button key={c.name} type="button" className="cat-btn" aria-pressed={c.name === active?.name} onClick={() => replace({ cat: c.name, zx: null })}>
              <span>{c.name}</span>
              <span className="cat-count">{c.keys.length}</span>
            </button>
          ))}
        </nav>
        <p className="muted small">Engine (SGLang) series: on each run&apos;s Metrics view.</p>
      </aside>
      <section className="metrics-main">
        <div className="view-toolbar">
          <div className="cmp-legend" aria-label="Legend">
            {runs.map((r, i) => (
              <span key={r.id}>
                <span className="cmp-swatch" style={{ background: runColor(i) }} aria-hidden />
                {r.name}
              </span>
            ))}
          </div>
          <label className="muted">
            x{" "}
            <select className="input" aria-label="x axis" value={xMode} onChange={(e) => replace({ x: e.target.value === "time" ? "time" : null, zx: null })}>
              <option value="step">step</option>
              <option value="time">wall time since run start</option>
            </select>
          </label>
          {zoomX ? (
            <button type="button" className="btn" onClick={() => replace({ zx: null })}>
              reset zoom
            </button>
          ) : null}
          <span className="muted hint">drag to zoom every chart · double-click resets</span>
        </div>
        {categories.length === 0 && !loading ? <p className="muted">None of these runs has scalar metrics.</p> : null}
        <div className="chart-grid">
          {keys.map((key) => (
            <OverlayCard
              key={key}
              metricKey={key}
              runs={inputs.get(key)!}
              pending={loading}
              xMode={xMode}
              zoom={{ x: zoomX, y: zoomY[key] ?? null }}
              onZoom={setZoom}
              hoverX={hoverX}
              onHoverX={setHoverX}
            />
          ))}
        </div>
      </section>
    </div>
  );
}

function OverlayCard(props: {
  metricKey: string;
  runs: Parameters<typeof prepareOverlay>[0];
  pending: boolean;
  xMode: OverlayX;
  zoom: Zoom;
  onZoom: (key: string, z: Zoom) => void;
  hoverX: number | null;
  onHoverX: (x: number | null) => void;
}) {
  const { metricKey: key, runs, xMode } = props;
  const o = useMemo(() => prepareOverlay(runs, xMode), [runs, xMode]);
  const unit = unitForKey(key);
  const onZoom = props.onZoom;
  const zoomCb = useMemo(() => (z: Zoom) => onZoom(key, z), [onZoom, key]);
  const xFormat = xMode === "time" ? (v: number) => formatElapsed(v) : stepFormat;
  return (
    <article className="panel chart-card" data-testid="overlay-card" data-key={key} aria-label={key}>
      <header className="chart-head">
        <h3 className="chart-title mono">{key}</h3>
        <span className="chart-side mono muted">{o.present.map((p) => p.n).join(" / ")} pts</span>
      </header>
      {o.missing.length && !props.pending ? (
        <p className="cmp-missing" data-testid="overlay-missing">
          {xMode === "time" ? "no wall-time points in " : "not in "}
          {o.missing.join(", ")}
        </p>
      ) : (
        <p className="cmp-missing">{"\u00a0"}</p>
      )}
      <CanvasChart
        model={o.model}
        zoom={props.zoom}
        onZoom={zoomCb}
        xFormat={xFormat}
        xTitle={(v) => (xMode === "time" ? `${formatElapsed(v)} since start` : `step ${stepFormat(v)}`)}
        yFormat={(v, step) => formatTickUnit(v, unit, step)}
        valueFormat={(v) => formatValueUnit(v, unit)}
        xTicks={xMode === "step" ? stepTicks : undefined}
        hoverX={props.hoverX}
        onHoverX={props.onHoverX}
        label={`${key}: ${runs.map((r) => r.name).join(" vs ")}`}
        pending={props.pending && o.model.points === 0}
      />
    </article>
  );
}
