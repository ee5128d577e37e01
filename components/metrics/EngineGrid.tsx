"use client";

/**
 * sglang category: one chart per engine metric, one line per engine (or per dp rank),
 * x = wall time as elapsed from the run start (the same origin as Compute Utilization).
 * Engine colours come from one page-wide order so an engine has the same colour in
 * every chart; the legend hides/solos engines in all charts at once (kept in the URL).
 */
import { useMemo, useState } from "react";
import type { Range, Zoom } from "@/lib/charts/core/range";
import { formatClock, formatElapsed, formatTickUnit, formatValueUnit } from "@/lib/charts/core/format";
import { describeMetric } from "@/lib/charts/metric-catalog";
import { seriesColor } from "@/lib/charts/palette";
import { ticksFrom } from "@/lib/charts/core/ticks";
import { engineLabels, mergeEngineOrder, prepareEngineChart, stripScheme } from "@/lib/charts/prepare-line";
import { errorMessage } from "@/lib/client/fetcher";
import { useEngineCharts } from "@/lib/client/telemetry-queries";
import { CanvasChart } from "@/components/charts/CanvasChart";
import { MetricCardFrame } from "@/components/metrics/MetricCardFrame";
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
}) {
  const theme = useThemeName();
  const results = useEngineCharts(props.runId, props.metrics, props.perDpRank, props.follow);
  const [hoverX, setHoverX] = useState<number | null>(null);
  // Page-wide order: every label any chart has shown, numerically sorted. Keyed by the
  // label text so the array (and every chart model) stays the same object between polls.
  const labelsKey = results.map((r) => engineLabels(r.data).join("\n")).join("\n");
  const order = useMemo(() => mergeEngineOrder([], labelsKey.split("\n").filter(Boolean)), [labelsKey]);
  const hidden = useMemo(() => new Set(props.hidden), [props.hidden]);
  const origin = props.t0 ?? 0;
  const ticks = useMemo(() => ticksFrom(origin), [origin]);
  const anyLoading = results.some((r) => r.isPending);

  return (
    <div className="engine-layout">
      <div className="chart-grid">
        {props.metrics.map((metric, i) => (
          <EngineCard
            key={metric}
            metric={metric}
            data={results[i]?.data}
            loading={results[i]?.isPending ?? true}
            error={results[i]?.error ? errorMessage(results[i]?.error) : null}
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
  metric: string;
  data: Parameters<typeof prepareEngineChart>[1];
  loading: boolean;
  error: string | null;
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
  const { metric, data, order, hidden, theme, origin } = props;
  const model = useMemo(() => prepareEngineChart(metric, data, order, hidden, theme), [metric, data, order, hidden, theme]);
  const onZoom = props.onZoom;
  const zoomCb = useMemo(() => (z: Zoom) => onZoom(metric, z), [onZoom, metric]);
  const desc = describeMetric(`sglang/${metric.replace(/^sglang_/, "")}`);
  const unit = model.unit;
  const allZero = model.points > 0 && model.series.every((s) => s.y.every((v) => Number.isNaN(v) || v === 0));
  return (
    <MetricCardFrame metricKey={metric} desc={desc} side={`${model.series.length} series${allZero ? " · all zero" : ""}`} error={props.error} hasData={!!data}>
      <CanvasChart
        model={model}
        zoom={props.zoom}
        onZoom={zoomCb}
        xFormat={(v) => formatElapsed(v - origin)}
        xTitle={(v) => `${formatElapsed(v - origin)}  (${formatClock(v)})`}
        yFormat={(v, step) => formatTickUnit(v, unit, step)}
        valueFormat={(v) => formatValueUnit(v, unit)}
        xTicks={props.ticks}
        hoverX={props.hoverX}
        onHoverX={props.onHoverX}
        label={metric}
        lineWidth={1.25}
        pending={props.loading && !data}
      />
    </MetricCardFrame>
  );
}
