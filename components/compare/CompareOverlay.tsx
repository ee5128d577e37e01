"use client";

/**
 * Compare overlay (`view=metrics`, README "Comparing runs"): every scalar metric any run
 * has, one chart per metric, one colour per run (the colour of the run chips), x = step
 * or wall time since each run's start (`x=step|time`), a shared drag-zoom (`zx`), the
 * Metrics view's categories (`cat`) and filter (`q`). Engine (SGLang) series stay on each
 * run's Metrics view. Runs in follow mode poll like the Metrics view does.
 * Chart controls (docs/charts.md §6): smoothing `sm`, log y `ylog`, x = step | time since
 * each run's start (`x=time`) | wall clock (`x=wall`), CSV/PNG per chart.
 * Only cards near the viewport fetch (one query per run and metric, `enabled` while near)
 * and draw (§7): 40 charts × 10k steps cost what the first screen shows. The queries of
 * the cards that come near together go out as one `/api/metrics?keys=…` per run
 * (components/compare/metrics-batch.ts), and a card draws once every run that has its metric
 * answered, all runs in one paint.
 */
import { keepPreviousData, useQueries } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState } from "react";
import { chartControlsPatch, parseChartControls, xColumnName, type ChartControls as Controls } from "@/lib/charts/chart-controls";
import { ChartControls } from "@/components/charts/ChartControls";
import { useQuietWhileScrolling } from "@/components/charts/scroll-quiet";
import { useNearViewport } from "@/components/charts/use-near-viewport";
import type { Meta } from "@/lib/charts/api-shapes";
import { formatClock, formatDateTime, formatElapsed, formatTickUnit, formatValueUnit, unitForKey } from "@/lib/charts/core/format";
import type { Range, Zoom } from "@/lib/charts/core/range";
import { stepTicks } from "@/lib/charts/core/ticks";
import { buildCategories, filterKeys, groupByAxis } from "@/lib/charts/metric-catalog";
import { prepareOverlay } from "@/lib/compare/overlay";
import type { GetCompareResponse } from "@/lib/contracts/compare";
import { apiJson } from "@/lib/client/fetcher";
import { preloadData } from "@/lib/client/preload";
import { overlayMetrics, type SeriesColumns } from "@/components/compare/metrics-batch";
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
function combineMetrics(rs: { data?: SeriesColumns; isPending: boolean; error: unknown }[]): { data: (SeriesColumns | undefined)[]; pending: boolean } {
  return { data: rs.map((r) => r.data), pending: rs.some((r) => r.isPending && !r.error) };
}

const stepFormat = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(2));

export function CompareOverlay({ report }: { report: GetCompareResponse; live: boolean }) {
  const { params, replace } = useUrlState();
  const controls = parseChartControls(params, "x");
  const setControls = (c: Partial<Controls>) => {
    replace({ ...chartControlsPatch(c, "x"), ...("xMode" in c ? { zx: null } : {}) });
    if ("xMode" in c || "logY" in c) setZoomY({});
  };
  const zoomX = parseRange(params.get("zx"));
  const filter = params.get("q") ?? "";
  const runs = report.runs;

  // the server render asks the browser to fetch the runs' metas while it loads the scripts
  preloadData(runs.map((r) => telemetryUrl(r.id, "meta")));
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

  // the step axis of each key (rollout/step, eval/step, …)
  const axisOf = useMemo(() => {
    const out = new Map<string, string>();
    for (const [axis, ks] of groupByAxis(keys)) for (const k of ks) out.set(k, axis);
    return out;
  }, [keys]);
  const follows = useMemo(() => runs.map((_, i) => metas[i]?.data?.mode === "follow"), [runs, metas]);
  const loading = metas.some((m) => m.isPending);
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
          <ChartControls value={controls} onChange={setControls} xKey="x" xLabels={{ rel: "wall time since run start", wall: "wall clock" }} />
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
              axis={axisOf.get(key) ?? "rollout/step"}
              runs={runs}
              has={keyLists.map((l) => l.includes(key))}
              follows={follows}
              metasPending={loading}
              controls={controls}
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
  axis: string;
  runs: GetCompareResponse["runs"];
  /** per run: whether it has this metric */
  has: readonly boolean[];
  follows: readonly boolean[];
  metasPending: boolean;
  controls: Controls;
  zoom: Zoom;
  onZoom: (key: string, z: Zoom) => void;
  hoverX: number | null;
  onHoverX: (x: number | null) => void;
}) {
  const { metricKey: key, controls, axis, runs: runList } = props;
  // by value: the parent hands a new array on every render (hover, zoom), the chart must not re-prepare
  const hasSig = props.has.map((h) => (h ? "1" : "0")).join("");
  const has = useMemo(() => [...hasSig].map((c) => c === "1"), [hasSig]);
  const xMode = controls.xMode;
  const ref = useRef<HTMLElement>(null);
  const { near, seen } = useNearViewport(ref);
  useQuietWhileScrolling();
  // The render in which the card comes near only starts its queries (a light placeholder);
  // the empty chart is built in a render after they went out (the batcher sends at the end
  // of this effect flush), while the server answers.
  const [armed, setArmed] = useState(false);
  useEffect(() => {
    if (!seen) return;
    let live = true;
    queueMicrotask(() => {
      if (live) setArmed(true);
    });
    return () => {
      live = false;
    };
  }, [seen]);
  // one query per run that has the metric, only while the card is near the viewport
  const asked = useMemo(() => runList.map((r, i) => ({ r, i })).filter(({ i }) => has[i]), [runList, has]);
  const results = useQueries({
    combine: combineMetrics,
    queries: asked.map(({ r, i }) => ({
      // typed columns, not the JSON answer the Metrics view caches under telemetryKeys.metrics
      queryKey: ["compare", "series", r.id, axis, key] as const,
      queryFn: () => overlayMetrics.load(r.id, axis, key),
      enabled: near,
      refetchInterval: props.follows[i] && near ? FOLLOW_POLL_MS : (false as const),
      placeholderData: keepPreviousData,
    })),
  });
  // the runs' inputs: stable while no answer changed, so the card does not re-prepare on hover;
  // no points until every asked run answered (or failed): the runs appear together, and the
  // empty chart is not rebuilt when the first of them answers
  const answers = results.pending ? null : results.data;
  const runs = useMemo(() => {
    const pointsOf = (i: number): SeriesColumns | undefined => {
      const j = asked.findIndex((a) => a.i === i);
      return j >= 0 ? answers?.[j] : undefined;
    };
    // wall clock: each run's own unix time (start 0), else time since each run's start
    return runList.map((r, i) => ({ id: r.id, name: r.name, color: runColor(i), startTs: xMode === "wall" ? 0 : r.start_ts, points: has[i] ? pointsOf(i) : undefined }));
  }, [runList, asked, answers, has, xMode]);
  const pending = props.metasPending || !seen || results.pending;
  const o = useMemo(() => prepareOverlay(runs, xMode === "step" ? "step" : "time"), [runs, xMode]);
  const unit = unitForKey(key);
  const onZoom = props.onZoom;
  const zoomCb = useMemo(() => (z: Zoom) => onZoom(key, z), [onZoom, key]);
  const xFormat = xMode === "rel" ? (v: number) => formatElapsed(v) : xMode === "wall" ? (v: number) => formatClock(v) : stepFormat;
  const xTitle = xMode === "rel" ? (v: number) => `${formatElapsed(v)} since start` : xMode === "wall" ? (v: number) => formatDateTime(v) : (v: number) => `step ${stepFormat(v)}`;
  const csv = useMemo(() => ({ xName: xColumnName(xMode) }), [xMode]);
  return (
    <article ref={ref} className="panel chart-card" data-testid="overlay-card" data-key={key} aria-label={key}>
      <header className="chart-head">
        <h3 className="chart-title mono">{key}</h3>
        <span className="chart-side mono muted">{o.present.map((p) => p.n).join(" / ")} pts</span>
      </header>
      {o.missing.length && !pending ? (
        <p className="cmp-missing" data-testid="overlay-missing">
          {xMode !== "step" ? "no wall-time points in " : "not in "}
          {o.missing.join(", ")}
        </p>
      ) : (
        <p className="cmp-missing">{"\u00a0"}</p>
      )}
      <CanvasChart
        deferred={!seen || !armed}
        smoothing={controls.smoothing}
        logY={controls.logY}
        exportName={key}
        csv={csv}
        model={o.model}
        zoom={props.zoom}
        onZoom={zoomCb}
        xFormat={xFormat}
        xTitle={xTitle}
        yFormat={(v, step) => formatTickUnit(v, unit, step)}
        valueFormat={(v) => formatValueUnit(v, unit)}
        xTicks={xMode === "step" ? stepTicks : undefined}
        hoverX={props.hoverX}
        onHoverX={props.onHoverX}
        label={`${key}: ${runs.map((r) => r.name).join(" vs ")}`}
        pending={pending && o.model.points === 0}
      />
    </article>
  );
}
