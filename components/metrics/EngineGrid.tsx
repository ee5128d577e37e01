"use client";

/**
 * sglang category: one chart per engine metric, one line per engine (or per dp rank),
 * x = wall time as elapsed from the run start (the same origin as Compute Utilization).
 * Engine colours come from one page-wide order so an engine has the same colour in
 * every chart; the legend hides/solos engines in all charts at once (kept in the URL).
 * Chart controls (docs/charts.md §6): smoothing, log y, x = time since start (default, also
 * for `xm=step`: engine series have no steps) or wall clock. Only cards near the viewport
 * fetch and draw (§7).
 */
import { useEffect, useMemo, useRef, useState } from "react";
import { xColumnName, type ChartControls } from "@/lib/charts/chart-controls";
import type { Range, Zoom } from "@/lib/charts/core/range";
import { formatClock, formatElapsed, formatTickUnit, formatValueUnit } from "@/lib/charts/core/format";
import { describeMetric } from "@/lib/charts/metric-catalog";
import { seriesColor } from "@/lib/charts/palette";
import { ticksFrom } from "@/lib/charts/core/ticks";
import { engineLabels, mergeEngineOrder, prepareEngineChart, stripScheme } from "@/lib/charts/prepare-line";
import { errorMessage } from "@/lib/client/fetcher";
import { useEngineSeries } from "@/lib/client/telemetry-queries";
import { useQuietWhileScrolling } from "@/components/charts/scroll-quiet";
import { useNearViewport } from "@/components/charts/use-near-viewport";
import { CanvasChart } from "@/components/charts/CanvasChart";
import { MetricCardFrame } from "@/components/metrics/MetricCardFrame";
import { PanelFreshness } from "@/components/charts/FreshnessBadge";
import { lastPointTs } from "@/lib/charts/freshness";
import { useThemeName } from "@/components/charts/use-chart-theme";

export function EngineGrid(props: {
  runId: string;
  metrics: readonly string[];
  follow: boolean;
  perDpRank: boolean;
  hidden: readonly string[];
  t0: number | null;
  zoomX: Range | null;
  zoomY: Readonly<Record<string, Range>>;
  onZoom: (key: string, z: Zoom) => void;
  onDpRank: (v: boolean) => void;
  onHidden: (h: string[]) => void;
  controls: ChartControls;
}) {
  const theme = useThemeName();
  const [hoverX, setHoverX] = useState<number | null>(null);
  // Page-wide order: every label any drawn chart has shown, numerically sorted. Keyed by
  // the label text so the array (and every chart model) stays the same object between polls.
  const [labelsByMetric, setLabels] = useState<Record<string, string>>({});
  const onLabels = useMemo(() => (metric: string, text: string) => setLabels((p) => (p[metric] === text ? p : { ...p, [metric]: text })), []);
  const labelsKey = props.metrics.map((m) => labelsByMetric[m] ?? "").join("\n");
  const order = useMemo(() => mergeEngineOrder([], labelsKey.split("\n").filter(Boolean)), [labelsKey]);
  const hidden = useMemo(() => new Set(props.hidden), [props.hidden]);
  const origin = props.t0 ?? 0;
  const ticks = useMemo(() => ticksFrom(origin), [origin]);
  const anyLoading = props.metrics.some((m) => labelsByMetric[m] === undefined);

  return (
    <div className="engine-layout">
      <div className="chart-grid">
        {props.metrics.map((metric) => (
          <EngineCard
            key={metric}
            runId={props.runId}
            follow={props.follow}
            perDpRank={props.perDpRank}
            onLabels={onLabels}
            controls={props.controls}
            metric={metric}
            order={order}
            hidden={hidden}
            theme={theme}
            origin={origin}
            ticks={ticks}
            zoom={{ x: props.zoomX, y: props.zoomY[metric] ?? null }}
            onZoom={props.onZoom}
            hoverX={hoverX}
            onHoverX={setHoverX}
          />
        ))}
      </div>
      <aside className="panel engine-legend" aria-label="Engines">
        <h2 className="panel-title">Engines</h2>
        <label className="check">
          <input type="checkbox" checked={props.perDpRank} onChange={(e) => props.onDpRank(e.target.checked)} /> split by dp rank
        </label>
        {order.length === 0 ? <p className="muted small">{anyLoading ? "loading…" : "no engine series"}</p> : null}
        <ul className="legend-list">
          {order.map((label, i) => (
            <li key={label} className="legend-row">
              <label className="check">
                <input
                  type="checkbox"
                  checked={!hidden.has(label)}
                  onChange={(e) => props.onHidden(e.target.checked ? props.hidden.filter((h) => h !== label) : [...props.hidden, label])}
                />
                <span className="swatch-line" style={{ background: seriesColor(i, theme) }} />
                <span className="mono">{stripScheme(label)}</span>
              </label>
              <button type="button" className="link-btn" title="Show only this engine" onClick={() => props.onHidden(order.filter((l) => l !== label))}>
                solo
              </button>
            </li>
          ))}
        </ul>
        {props.hidden.length > 0 ? (
          <button type="button" className="btn btn-small" onClick={() => props.onHidden([])}>
            show all
          </button>
        ) : null}
      </aside>
    </div>
  );
}

function EngineCard(props: {
  runId: string;
  follow: boolean;
  perDpRank: boolean;
  onLabels: (metric: string, labels: string) => void;
  controls: ChartControls;
  metric: string;
  order: readonly string[];
  hidden: ReadonlySet<string>;
  theme: ReturnType<typeof useThemeName>;
  origin: number;
  ticks: (d: Range, c: number) => number[];
  zoom: Zoom;
  onZoom: (key: string, z: Zoom) => void;
  hoverX: number | null;
  onHoverX: (x: number | null) => void;
}) {
  const { metric, order, hidden, theme, origin, controls, onLabels } = props;
  const ref = useRef<HTMLElement>(null);
  const { near, seen } = useNearViewport(ref);
  useQuietWhileScrolling();
  const q = useEngineSeries(props.runId, metric, { perDpRank: props.perDpRank, win: null, maxPoints: 1000, follow: props.follow && near, enabled: near });
  const data = q.data;
  const labelText = data ? engineLabels(data).join("\n") : undefined;
  useEffect(() => {
    if (labelText !== undefined) onLabels(metric, labelText);
  }, [labelText, metric, onLabels]);
  const wall = controls.xMode === "wall";
  // engine series are on unix time in both modes (the rel axis only labels them from the start)
  const csv = useMemo(() => ({ xName: xColumnName("wall") }), []);
  const model = useMemo(() => prepareEngineChart(metric, data, order, hidden, theme), [metric, data, order, hidden, theme]);
  const onZoom = props.onZoom;
  const zoomCb = useMemo(() => (z: Zoom) => onZoom(metric, z), [onZoom, metric]);
  const desc = describeMetric(`sglang/${metric.replace(/^sglang_/, "")}`);
  const unit = model.unit;
  const allZero = model.points > 0 && model.series.every((s) => s.y.every((v) => Number.isNaN(v) || v === 0));
  return (
    <MetricCardFrame
      cardRef={ref}
      metricKey={metric}
      desc={desc}
      side={
        <>
          {`${model.series.length} series${allZero ? " · all zero" : ""}`} <PanelFreshness runId={props.runId} t1={lastPointTs(data?.series)} />
        </>
      }
      error={q.error ? errorMessage(q.error) : null}
      hasData={!!data}
    >
      <CanvasChart
        deferred={!seen}
        smoothing={controls.smoothing}
        logY={controls.logY}
        exportName={metric}
        csv={csv}
        model={model}
        zoom={props.zoom}
        onZoom={zoomCb}
        xFormat={wall ? (v) => formatClock(v) : (v) => formatElapsed(v - origin)}
        xTitle={(v) => `${formatElapsed(v - origin)}  (${formatClock(v)})`}
        yFormat={(v, step) => formatTickUnit(v, unit, step)}
        valueFormat={(v) => formatValueUnit(v, unit)}
        xTicks={wall ? undefined : props.ticks}
        hoverX={props.hoverX}
        onHoverX={props.onHoverX}
        label={metric}
        lineWidth={1.25}
        pending={(q.isPending || !seen) && !data}
      />
    </MetricCardFrame>
  );
}
