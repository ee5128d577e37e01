"use client";

/**
 * Scalar metric charts of one category: one request per step axis (in parallel), one card
 * per key. Each card memoises its model on the identity of its own points, which
 * react-query keeps stable when a poll brings nothing new, so only changed charts repaint.
 */
import { useRouter } from "next/navigation";
import { useMemo, useState } from "react";
import type { MetricPoints } from "@/lib/charts/api-shapes";
import type { Range, Zoom } from "@/lib/charts/core/range";
import { formatTickUnit, formatValueUnit } from "@/lib/charts/core/format";
import { describeMetric, groupByAxis } from "@/lib/charts/metric-catalog";
import { stepTicks } from "@/lib/charts/core/ticks";
import { prepareScalarChart } from "@/lib/charts/prepare-line";
import { errorMessage } from "@/lib/client/fetcher";
import { useMetricGroups } from "@/lib/client/telemetry-queries";
import { CanvasChart } from "@/components/charts/CanvasChart";
import { MetricCardFrame } from "@/components/metrics/MetricCardFrame";
import { useChartTheme } from "@/components/charts/use-chart-theme";

export interface MetricsNav {
  /** href of a step's Rollouts view, or null when that step has no dump */
  stepHref: (axis: string, step: number) => string | null;
}

const stepFormat = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(2));

export function ScalarGrid(props: {
  runId: string;
  keys: readonly string[];
  follow: boolean;
  zoomX: Range | null;
  zoomY: Readonly<Record<string, Range>>;
  onZoom: (key: string, z: Zoom) => void;
  step: number | null;
  nav: MetricsNav;
}) {
  const groups = useMemo(() => [...groupByAxis(props.keys).entries()], [props.keys]);
  const results = useMetricGroups(props.runId, groups, props.follow);
  const [hoverX, setHoverX] = useState<number | null>(null);
  return (
    <div className="chart-grid">
      {groups.flatMap(([axis, keys], gi) => {
        const r = results[gi];
        return keys.map((key) => (
          <MetricCard
            key={key}
            metricKey={key}
            axis={axis}
            points={r?.data?.[key]}
            loading={r?.isPending ?? true}
            error={r?.error ? errorMessage(r.error) : null}
            zoom={{ x: props.zoomX, y: props.zoomY[key] ?? null }}
            onZoom={props.onZoom}
            hoverX={hoverX}
            onHoverX={setHoverX}
            step={axis === "rollout/step" ? props.step : null}
            nav={props.nav}
          />
        ));
      })}
    </div>
  );
}

function MetricCard(props: {
  metricKey: string;
  axis: string;
  points: MetricPoints | undefined;
  loading: boolean;
  error: string | null;
  zoom: Zoom;
  onZoom: (key: string, z: Zoom) => void;
  hoverX: number | null;
  onHoverX: (x: number | null) => void;
  step: number | null;
  nav: MetricsNav;
}) {
  const { metricKey: key, axis, points, nav } = props;
  const router = useRouter();
  const theme = useChartTheme();
  const model = useMemo(() => prepareScalarChart(key, points, theme.accent), [key, points, theme.accent]);
  const desc = describeMetric(key);
  const unit = model.unit;
  const s = model.series[0]!;
  const n = s.x.length;
  let last: { x: number; y: number } | null = null;
  for (let i = n - 1; i >= 0; i--) {
    if (Number.isFinite(s.y[i]!)) {
      last = { x: s.x[i]!, y: s.y[i]! };
      break;
    }
  }
  const focusX = props.hoverX ?? props.step;
  let focus: string | null = null;
  if (focusX !== null) {
    const i = s.x.indexOf(focusX);
    if (i >= 0) focus = `${axis.replace("/step", "")} ${focusX}: ${formatValueUnit(s.y[i], unit)}`;
  }
  const onZoom = props.onZoom;
  const zoomCb = useMemo(() => (z: Zoom) => onZoom(key, z), [onZoom, key]);
  const clickable = axis === "rollout/step" || axis === "eval/step";
  return (
    <MetricCardFrame metricKey={key} desc={desc} side={focus ?? (last ? `last ${formatValueUnit(last.y, unit)} @ ${last.x}` : "")} error={props.error} hasData={!!points}>
      {model.nonNumeric > 0 ? <p className="chart-status muted">{model.nonNumeric} non-numeric value(s) shown as gaps</p> : null}
      <CanvasChart
        model={model}
        zoom={props.zoom}
        onZoom={zoomCb}
        xFormat={stepFormat}
        xTitle={(v) => (axis === "rollout/step" ? `step ${stepFormat(v)}` : `${axis} ${stepFormat(v)}`)}
        yFormat={(v, step) => formatTickUnit(v, unit, step)}
        valueFormat={(v) => formatValueUnit(v, unit)}
        xTicks={stepTicks}
        hoverX={props.hoverX}
        onHoverX={props.onHoverX}
        markX={props.step}
        isClickable={clickable ? (h) => nav.stepHref(axis, h.x) !== null : () => false}
        onPointClick={
          clickable
            ? (h) => {
                const href = nav.stepHref(axis, h.x);
                if (href) router.push(href);
              }
            : undefined
        }
        clickHint="click: open this step's rollouts"
        label={key}
        pending={props.loading && !points}
      />
    </MetricCardFrame>
  );
}
