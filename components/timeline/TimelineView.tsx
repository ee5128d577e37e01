"use client";

/**
 * Compute Utilization view: toolbar, lane selection, MFU, advisory, overview (carpet ≤ 64
 * lanes, fleet above), the time-aligned step strip, per-GPU lanes, the host panel and the legend.
 *
 * State: everything a user chooses is in the URL (lanes, window, overlay, toggles, carpet
 * metric, step). The viewport itself moves through a small store at pointer rate and is
 * written to the URL once an interaction settles (300 ms), which is also when the data
 * window is re-checked. In follow mode meta polls every 5 s; a viewport pinned to the
 * newest data trails it, and only queries whose inputs changed refetch.
 *
 * This file is layout: viewport ↔ URL sync (use-timeline-viewport), lane selection
 * (use-lane-selection), the lanes' data and paint gating (use-lane-model) and the keys
 * (use-timeline-keys) are hooks beside it.
 */
import { Link } from "@/components/shell/Link";
import { useRouter } from "next/navigation";
import { useMemo, useState } from "react";
import type { Meta, TopologyResponse } from "@/lib/charts/api-shapes";
import { formatCompact } from "@/lib/charts/core/format";
import { brushToggle, FLEET_THRESHOLD, type RowsInView } from "@/lib/charts/lane-selection";
import { prepareSteps, type StepSpan } from "@/lib/charts/prepare-bubbles";
import { OVERLAYS, overlayMetric, parseTimelineState, writeTimelineState, type TimelineUrlState } from "@/lib/charts/timeline-url";
import { latestViewport, stepViewport } from "@/lib/charts/timeline-viewport";
import { errorMessage } from "@/lib/client/fetcher";
import { preloadData } from "@/lib/client/preload";
import {
  fetchOutliers,
  useAdvisory,
  useBubbles,
  useFleet,
  useHeatmap,
  useMeta,
  useMetricSeries,
  useTopology,
  timelineUrls,
} from "@/lib/client/telemetry-queries";
import { FreshnessBadge } from "@/components/charts/FreshnessBadge";
import { useThemeName } from "@/components/charts/use-chart-theme";
import { currentParams, useUrlState, type HistoryMode } from "@/components/charts/use-url-state";
import { Carpet } from "@/components/timeline/Carpet";
import { FleetOverview } from "@/components/timeline/FleetOverview";
import { AdvisoryPanel, Legend, MfuTile } from "@/components/timeline/InfoPanels";
import { LaneCanvas, type TimeFormat } from "@/components/timeline/LaneCanvas";
import { LaneSelector } from "@/components/timeline/LaneSelector";
import { StepStrip } from "@/components/timeline/StepStrip";
import { StepsInView } from "@/components/timeline/StepsInView";
import { useLaneSelection } from "@/components/timeline/use-lane-selection";
import { GPU_MAX_POINTS, useLaneModel } from "@/components/timeline/use-lane-model";
import { useTimelineKeys } from "@/components/timeline/use-timeline-keys";
import { useTimelineViewport } from "@/components/timeline/use-timeline-viewport";
import "@/app/views.css";
import { WhyEmpty } from "@/components/health/WhyEmpty";
import { HostWindowPanel } from "@/components/health/HostPanel";

const CARPET_BUCKETS = 1200;
const FLEET_BUCKETS = 600;

function errText(e: unknown): string | null {
  return e ? errorMessage(e) : null;
}

export function TimelineView({ runId, initialMeta, initialTopology = null }: { runId: string; initialMeta: Meta | null; initialTopology?: TopologyResponse | null }) {
  const meta = useMeta(runId, initialMeta);
  const m = meta.data;
  const base = `/runs/${encodeURIComponent(runId)}`;
  if (meta.isPending) return <p className="muted">loading…</p>;
  if (!m) {
    return (
      <div className="error-box" role="alert">
        Could not load this run: {errText(meta.error)}{" "}
        <button type="button" className="btn" onClick={() => void meta.refetch()}>
          Retry
        </button>
      </div>
    );
  }
  if (!m.capabilities.has_timeline) {
    return (
      <div className="panel empty-explain" data-testid="timeline-absent">
        <h2>No compute telemetry for this run</h2>
        <p>
          This view draws GPU phases and utilization from the collector&apos;s <code>dashboard/phases</code> and <code>dashboard/gpu_util</code> streams. This run has
          neither{m.mode === "follow" ? " yet — it will appear here once the collector writes them" : ""}.
        </p>
        <p className="muted">
          Start the training job with the dashboard collector enabled to record them.{" "}
          {m.metric_keys.length > 0 ? (
            <>
              Its logged metrics are under <Link href={`${base}/metrics`}>Metrics</Link>.
            </>
          ) : null}
        </p>
        <WhyEmpty runId={runId} inputs={["dashboard", "phases", "gpu_util"]} />
      </div>
    );
  }
  if (!m.time_range) {
    return (
      <p className="muted" data-testid="timeline-waiting">
        waiting for timeline data…
      </p>
    );
  }
  return (
    <TimelineBody runId={runId} meta={m} metaFailing={meta.isError} metaError={errText(meta.error)} T0={m.time_range[0]} T1={m.time_range[1]} initialTopology={initialTopology} />
  );
}

function TimelineBody({
  runId,
  meta,
  metaFailing,
  metaError,
  T0,
  T1,
  initialTopology,
}: {
  runId: string;
  meta: Meta;
  metaFailing: boolean;
  metaError: string | null;
  T0: number;
  T1: number;
  initialTopology: TopologyResponse | null;
}) {
  const router = useRouter();
  const theme = useThemeName();
  const maxWindow = meta.capabilities.max_window_s;
  const follow = meta.mode === "follow";
  const base = `/runs/${encodeURIComponent(runId)}`;
  const { params, write } = useUrlState();
  const st = parseTimelineState(params);
  const update = (patch: Partial<TimelineUrlState>, mode: HistoryMode = "replace") => write(writeTimelineState(currentParams(), patch), mode);

  const { store, fetched, settled } = useTimelineViewport({ T0, T1, maxWindow }, st, write);

  // ---- lanes
  const topology = useTopology(runId, follow, initialTopology);
  // the lane rows in sight (reported by the lanes box as the page scrolls): their page is drawn
  const [rows, setRows] = useState<RowsInView>({ first: 0, count: 16 });
  const onRows = (r: RowsInView) => setRows((cur) => (cur.first === r.first && cur.count === r.count ? cur : r));
  const lanes = useLaneSelection(runId, topology.data, st.lanes, T1, rows, (sel) => update({ lanes: sel }, "replace"));
  const { allLanes, selection, resolvedLanes, ordered, shown, offset, dataLanes, aheadLanes, selectedSet } = lanes;

  const ovId = st.overlay === undefined ? (meta.capabilities.has_engine_series ? OVERLAYS[0].id : null) : st.overlay;
  const ovMetric = meta.capabilities.has_engine_series ? overlayMetric(ovId) : null;
  const { model, processTracks, hasLanes, error: laneDataError, fetching } = useLaneModel(
    runId,
    fetched,
    shown,
    dataLanes,
    topology.data?.windows,
    ovMetric,
    aheadLanes,
  );

  // ---- overview
  const totalLanes = allLanes.length;
  const manyLanes = meta.capabilities.use_utilization_overview || totalLanes > FLEET_THRESHOLD;
  // The overview covers the same margin-padded window as the lanes (at the viewport's
  // resolution), so a pan within the margin never shows an empty carpet.
  const overRatio = Math.max(1, (fetched.t1 - fetched.t0) / Math.max(1e-9, settled.t1 - settled.t0));
  const carpetBuckets = Math.min(4000, Math.round(CARPET_BUCKETS * overRatio));
  const fleetBuckets = Math.min(4000, Math.round(FLEET_BUCKETS * overRatio));
  const heatmap = useHeatmap(runId, st.carpet, fetched, carpetBuckets, { enabled: !manyLanes && topology.isSuccess, follow });
  const fleet = useFleet(runId, fetched, fleetBuckets, { enabled: manyLanes, follow });

  // Preload (server render) the lanes' heaviest data: phases, GPU series, overlay.
  if (hasLanes) {
    preloadData([
      timelineUrls.gpu(runId, fetched, dataLanes, GPU_MAX_POINTS),
      timelineUrls.phases(runId, fetched, dataLanes),
      ...(ovMetric ? [timelineUrls.engine(runId, ovMetric, GPU_MAX_POINTS, false, fetched)] : []),
    ]);
  }

  // ---- steps, advisory, mfu
  const bubbles = useBubbles(runId, follow);
  const steps = useMemo(() => prepareSteps(bubbles.data?.bubbles ?? []), [bubbles.data]);
  const advisory = useAdvisory(runId, follow);
  const hasMfuKey = meta.metric_keys.includes("perf/actor_train_mfu");
  const mfuTrend = useMetricSeries(runId, "rollout/step", hasMfuKey ? ["perf/actor_train_mfu"] : [], follow);

  const trainIds = useMemo(() => new Set(meta.rollout_ids.train), [meta.rollout_ids.train]);
  const stepHref = (step: number) => (trainIds.has(step) ? `${base}/rollout/${step}` : null);
  const goStep = (s: StepSpan) => {
    const r = store.range();
    store.set(stepViewport(s.t1, s.t1 - s.t0, r.T0, r.T1, r.maxWindow));
    update({ step: s.step });
  };
  const latest = () => {
    const r = store.range();
    store.set(latestViewport(r.T0, r.T1, r.maxWindow));
    update({ step: null });
  };
  useTimelineKeys(store, steps, goStep, latest);

  const fmt: TimeFormat = { absTime: st.absTime, utc: st.utc, T0 };
  const ovLabel = ovMetric ? (OVERLAYS.find((o) => o.metric === ovMetric)?.id ?? ovMetric) : null;
  const laneError = errText(lanes.serverError);
  const dataError = errText(laneDataError);
  const loadingLanes = lanes.resolving || fetching;

  const onPick = async (criterion: string): Promise<string | null> => {
    try {
      const res = await fetchOutliers(runId, criterion, 8);
      if (res.outliers.length === 0) return `no lanes to pick for ${criterion}`;
      update({ lanes: res.outliers.map((o) => `gpu:${o.node}:${o.gpu}`).join(",") }, "push");
      return `picked ${res.outliers.length} lane(s): ${criterion.replace("_", " ")}`;
    } catch (err) {
      return `pick failed: ${errText(err)}`;
    }
  };

  const hint = `drag = pan · Ctrl+wheel or +/− = zoom · window ≤ ${Math.round(maxWindow / 3600)}h`;
  return (
    <div className="timeline" data-testid="timeline-view" data-advisory={advisory.isPending ? "loading" : "done"}>
      <div className="control-row toolbar" role="toolbar" aria-label="Timeline options">
        <span className="muted">Overlay</span>
        {meta.capabilities.has_engine_series ? (
          OVERLAYS.map((o) => (
            <button key={o.id} type="button" className="chip-btn" aria-pressed={ovId === o.id} onClick={() => update({ overlay: ovId === o.id ? null : o.id })}>
              {o.id}
            </button>
          ))
        ) : (
          <span className="muted">(no engine series)</span>
        )}
        <button type="button" className="chip-btn" aria-pressed={st.mem} onClick={() => update({ mem: !st.mem })}>
          mem
        </button>
        <button type="button" className="chip-btn" aria-pressed={st.absTime} onClick={() => update({ absTime: !st.absTime })}>
          abs time
        </button>
        {st.absTime ? (
          <button type="button" className="chip-btn" aria-pressed={st.utc} onClick={() => update({ utc: !st.utc })}>
            UTC
          </button>
        ) : null}
        <button type="button" className="btn btn-small" onClick={latest} title="Show the newest 4 h and follow new data (Esc)">
          latest window
        </button>
        {model.overlay && ovLabel ? (
          <span className="overlay-scale mono small">
            {ovLabel} scale 0–{formatCompact(model.overlay.max)}
          </span>
        ) : null}
        <FreshnessBadge mode={meta.mode} t1={T1} failing={metaFailing} error={metaError} />
        {meta.data_buffer_length !== null ? <span className="muted small">databuffer: {meta.data_buffer_length} groups</span> : null}
        <span className="hint muted small" title={hint}>
          {hint}
        </span>
      </div>

      <LaneSelector
        selection={selection ?? ""}
        onChange={(sel) => update({ lanes: sel }, "push")}
        serverError={laneError}
        total={lanes.known ? resolvedLanes.length : null}
        shown={shown.length}
        onPick={onPick}
      />

      {/* The MFU tile keeps its place while the advisory answer is on the way (a run that logs
          MFU gets one); arriving later above the overview it moved the carpet and the lanes. */}
      {advisory.data?.mfu || (hasMfuKey && advisory.isPending) ? (
        <MfuTile mfu={advisory.data?.mfu ?? null} trend={mfuTrend.data?.["perf/actor_train_mfu"]} metricsHref={`${base}/metrics?cat=perf&q=mfu`} />
      ) : null}

      {manyLanes ? (
        <FleetOverview data={fleet.data} store={store} fmt={fmt} error={errText(fleet.error)} totalLanes={totalLanes} />
      ) : (
        <Carpet
          data={heatmap.data}
          metric={st.carpet}
          onMetric={(c) => update({ carpet: c })}
          store={store}
          selected={selectedSet}
          rowsHint={st.carpet === "lifecycle" || !topology.data ? null : totalLanes}
          onBrush={(idx) => update({ lanes: brushToggle(selection ?? "", (selection ?? "") === "" ? null : selectedSet, idx, allLanes.map((l) => l.index)) }, "push")}
          fmt={fmt}
          error={errText(heatmap.error)}
          loading={heatmap.isFetching && !heatmap.data}
        />
      )}

      {/* the strip's place is kept while the steps load (a run that logs perf/step_time has them) */}
      {steps.length === 0 && bubbles.isPending && meta.metric_keys.includes("perf/step_time") ? <div className="tl-steps tl-steps-pending" aria-hidden="true" /> : null}
      {steps.length > 0 ? <StepStrip steps={steps} store={store} current={st.step} onStep={goStep} stepHref={stepHref} onOpen={(s) => { const h = stepHref(s); if (h) router.push(h); }} /> : null}

      <section className="panel tl-panel lanes-panel" aria-label="GPU lanes">
        {dataError ? (
          <p className="error-text" role="alert">
            {dataError}
          </p>
        ) : null}
        <LaneCanvas
          model={model}
          processes={processTracks}
          store={store}
          T0={T0}
          T1={T1}
          maxWindow={maxWindow}
          mem={st.mem}
          fmt={fmt}
          overlayLabel={ovLabel}
          rowLanes={ordered}
          offset={offset}
          onRows={onRows}
          loading={loadingLanes}
        />
      </section>

      {/* below the lanes: its height follows the steps in the window, and a panel above the
          lanes that grows or shrinks while they are dragged would move them under the cursor */}
      <StepsInView runId={runId} steps={steps} win={settled} trainIds={meta.rollout_ids.train} fmt={fmt} />

      {/* Below the lanes too: its messages arrive after them, and the run header's strip shows
          the same advisories at the top of every view from the start. */}
      <AdvisoryPanel items={advisory.data?.advisories ?? []} stale={advisory.isError && advisory.data ? errText(advisory.error) : null} />

      {/* collector --host-telemetry: CPU, memory, the job's processes over the visible window (absent without host data) */}
      <HostWindowPanel runId={runId} win={settled} follow={follow} />

      <Legend phases={model.phasesPresent} theme={theme} overlayLabel={model.overlay ? ovLabel : null} mem={st.mem} memMaxGb={model.memMaxMb / 1024} overlayMax={model.overlay?.max ?? null} />
    </div>
  );
}
