"use client";

/**
 * Scalar metric charts of one category, one card per key. Only the cards near the
 * viewport fetch and draw (docs/charts.md §7): each card has its own query, `enabled`
 * while the card is within NEAR_MARGIN_PX of the viewport (so a far-away live chart stops
 * polling), and a card that was never near renders a placeholder. The keys asked for
 * together go out as one `/api/metrics` request (metric-batch.ts), and a card whose data
 * has arrived is built (model, axes, canvas) at its turn in the per-frame build queue
 * (use-build-slot.ts): on-screen cards first, a few per frame, so cards entering the
 * viewport together never make one long frame (issue #15).
 * Each card memoises its model on the identity of its own points, which react-query keeps
 * stable when a poll brings nothing new, so only changed charts repaint.
 */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useLayoutEffect, useMemo, useRef, useState } from "react";
import type { MetricPoints, MetricsResponse } from "@/lib/charts/api-shapes";
import { xColumnName, type ChartControls } from "@/lib/charts/chart-controls";
import type { Range, Zoom } from "@/lib/charts/core/range";
import { formatClock, formatDateTime, formatElapsed, formatTickUnit, formatValueUnit } from "@/lib/charts/core/format";
import { describeMetric, groupByAxis } from "@/lib/charts/metric-catalog";
import { stepTicks } from "@/lib/charts/core/ticks";
import { prepareScalarChart } from "@/lib/charts/prepare-line";
import { errorMessage } from "@/lib/client/fetcher";
import { FOLLOW_POLL_MS, telemetryKeys } from "@/lib/client/telemetry-queries";
import { CanvasChart } from "@/components/charts/CanvasChart";
import { useQuietWhileScrolling } from "@/components/charts/scroll-quiet";
import { useNearViewport } from "@/components/charts/use-near-viewport";
import { useBuildSlot } from "@/components/charts/use-build-slot";
import { FIRST_SCREEN_KEYS, loadMetric, primeMetrics } from "@/components/metrics/metric-batch";
import { MetricCardFrame } from "@/components/metrics/MetricCardFrame";
import { useChartTheme } from "@/components/charts/use-chart-theme";

export interface MetricsNav {
  /** href of a step's Rollouts view, or null when that step has no dump */
  stepHref: (axis: string, step: number) => string | null;
  /** a click on a step without a dump: the view says so in place (#15 defect 9) */
  noDump?: (axis: string, step: number) => void;
}

/** The first `n` cards of the grid (in its order), grouped by their step axis. */
function firstScreen(groups: readonly (readonly [string, readonly string[]])[], n: number): [string, string[]][] {
  const out: [string, string[]][] = [];
  let left = n;
  for (const [axis, keys] of groups) {
    if (left <= 0) break;
    out.push([axis, keys.slice(0, left)]);
    left -= Math.min(left, keys.length);
  }
  return out;
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
  controls: ChartControls;
  /** the run's start (unix s) for x = time since start */
  t0: number;
}) {
  const groups = useMemo(() => [...groupByAxis(props.keys).entries()], [props.keys]);
  const [hoverX, setHoverX] = useState<number | null>(null);
  // The first cards' data, asked for at mount (one request per step axis among them), before
  // the cards know they are on screen: left to the cards, a busy browser reports them near
  // over several ticks and the first screen took three requests instead of two.
  // A layout effect: it runs in the commit, before the viewport observer can report a card
  // near (its first report comes in a later task), so the cards' own asks join these
  // requests instead of racing them. Keyed by the keys' text, so a new array of the same
  // keys (a meta refetch) does not ask again for what is already loaded.
  const firstText = useMemo(() => JSON.stringify(firstScreen(groups, FIRST_SCREEN_KEYS)), [groups]);
  const runId = props.runId;
  useLayoutEffect(() => {
    for (const [axis, keys] of JSON.parse(firstText) as [string, string[]][]) primeMetrics(runId, axis, keys);
  }, [runId, firstText]);
  return (
    <div className="chart-grid">
      {groups.flatMap(([axis, keys]) =>
        keys.map((key) => (
          <MetricCard
            key={key}
            runId={props.runId}
            follow={props.follow}
            metricKey={key}
            axis={axis}
            zoom={{ x: props.zoomX, y: props.zoomY[key] ?? null }}
            onZoom={props.onZoom}
            hoverX={hoverX}
            onHoverX={setHoverX}
            step={axis === "rollout/step" ? props.step : null}
            nav={props.nav}
            controls={props.controls}
            t0={props.t0}
          />
        )),
      )}
    </div>
  );
}

function MetricCard(props: {
  runId: string;
  follow: boolean;
  metricKey: string;
  axis: string;
  zoom: Zoom;
  onZoom: (key: string, z: Zoom) => void;
  hoverX: number | null;
  onHoverX: (x: number | null) => void;
  step: number | null;
  nav: MetricsNav;
  controls: ChartControls;
  t0: number;
}) {
  const { metricKey: key, axis, nav, controls, runId } = props;
  const ref = useRef<HTMLElement>(null);
  const { near, seen } = useNearViewport(ref);
  useQuietWhileScrolling();
  const q = useQuery({
    queryKey: telemetryKeys.metrics(runId, axis, [key]),
    queryFn: (): Promise<MetricsResponse> => loadMetric(runId, axis, key),
    enabled: near,
    refetchInterval: props.follow && near ? FOLLOW_POLL_MS : false,
    placeholderData: keepPreviousData,
  });
  const points: MetricPoints | undefined = q.data?.[key];
  // built at its turn once its answer (data or error) is here
  const built = useBuildSlot(ref, seen && (q.data !== undefined || q.isError));
  const router = useRouter();
  const theme = useChartTheme();
  const xMode = controls.xMode;
  const shown = built !== false ? points : undefined;
  const model = useMemo(() => prepareScalarChart(key, shown, theme.accent, xMode, props.t0), [key, shown, theme.accent, xMode, props.t0]);
  const desc = describeMetric(key);
  const unit = model.unit;
  const s = model.series[0]!;
  const n = s.x.length;
  let last: { step: number; y: number } | null = null;
  for (let i = n - 1; i >= 0; i--) {
    if (Number.isFinite(s.y[i]!)) {
      last = { step: model.steps[i]!, y: s.y[i]! };
      break;
    }
  }
  const timeAxis = xMode !== "step";
  // the step cursor and the shared crosshair are in x units: a time on a time axis
  const stepToX = (st: number | null): number | null => {
    if (st === null || !timeAxis) return st;
    const i = model.steps.indexOf(st);
    return i >= 0 ? s.x[i]! : null;
  };
  const focusX = props.hoverX ?? stepToX(props.step);
  let focus: string | null = null;
  if (focusX !== null) {
    const i = s.x.indexOf(focusX);
    if (i >= 0) focus = `${axis.replace("/step", "")} ${model.steps[i]}: ${formatValueUnit(s.y[i], unit)}`;
  }
  const onZoom = props.onZoom;
  const zoomCb = useMemo(() => (z: Zoom) => onZoom(key, z), [onZoom, key]);
  const clickable = axis === "rollout/step" || axis === "eval/step";
  const stepOf = (i: number) => model.steps[i]!;
  const xFormat = xMode === "wall" ? (v: number) => formatClock(v) : xMode === "rel" ? (v: number) => formatElapsed(v) : stepFormat;
  const xTitle =
    xMode === "wall"
      ? (v: number) => formatDateTime(v)
      : xMode === "rel"
        ? (v: number) => `${formatElapsed(v)} since start`
        : (v: number) => (axis === "rollout/step" ? `step ${stepFormat(v)}` : `${axis} ${stepFormat(v)}`);
  const csv = useMemo(() => ({ xName: xColumnName(xMode), extra: timeAxis ? { name: "step", columns: [model.steps] } : undefined }), [xMode, timeAxis, model.steps]);
  return (
    <MetricCardFrame
      cardRef={ref}
      metricKey={key}
      desc={desc}
      side={focus ?? (last ? `last ${formatValueUnit(last.y, unit)} @ ${last.step}` : "")}
      error={q.error ? errorMessage(q.error) : null}
      hasData={!!points}
      note={model.noTime ? <p className="chart-status muted">no wall time on these points (aggregated from the rollout dumps): use x = step</p> : null}
    >
      {model.nonNumeric > 0 ? <p className="chart-status muted">{model.nonNumeric} non-numeric value(s) shown as gaps</p> : null}
      <CanvasChart
        deferred={built === false}
        knownWidth={built || undefined}
        deferredText={seen ? "loading…" : undefined}
        model={model}
        zoom={props.zoom}
        onZoom={zoomCb}
        xFormat={xFormat}
        xTitle={xTitle}
        yFormat={(v, step) => formatTickUnit(v, unit, step)}
        valueFormat={(v) => formatValueUnit(v, unit)}
        xTicks={timeAxis ? undefined : stepTicks}
        hoverX={props.hoverX}
        onHoverX={props.onHoverX}
        markX={stepToX(props.step)}
        isClickable={clickable ? (h) => nav.stepHref(axis, stepOf(h.i)) !== null || nav.noDump !== undefined : () => false}
        onPointClick={
          clickable
            ? (h) => {
                const href = nav.stepHref(axis, stepOf(h.i));
                if (href) router.push(href);
                else nav.noDump?.(axis, stepOf(h.i));
              }
            : undefined
        }
        clickHint="click: open this step's rollouts"
        label={key}
        pending={q.isPending && !points}
        smoothing={controls.smoothing}
        logY={controls.logY}
        exportName={key}
        csv={csv}
      />
    </MetricCardFrame>
  );
}
