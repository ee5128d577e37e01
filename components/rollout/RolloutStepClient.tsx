"use client";
/**
 * Rollouts view of one step (docs/views.md 4): navigation, stat grid, and the Samples
 * tab (batch anatomy, scatter, virtualised sample table) or the Groups tab. Summary,
 * groups and trajectories load in parallel; tab, sort, filters, columns, anatomy order
 * and scatter axes live in the URL.
 */
import type { ColumnFiltersState, SortingState, Updater } from "@tanstack/react-table";
import { Link } from "@/components/shell/Link";
import { useRouter } from "next/navigation";
import { useMemo } from "react";
import { preloadData } from "@/lib/client/preload";
import { rolloutUrls, useRolloutGroups, useRolloutIds, useRolloutSummary, useTrajectories } from "@/lib/client/rollout-queries";
import { anatomyDensity, isAnatomySort, prepareAnatomy, type LaneFacts } from "@/lib/rollout-view/anatomy";
import { defaultVisibleSampleColumns, groupNotApplicable, isRemovedSample, isZeroStdGroup, notApplicableColumns, prepareSampleRows, sampleColumnIds, type SampleTableRow } from "@/lib/rollout-view/columns";
import { matchesFilter } from "@/lib/rollout-view/filter";
import { sampleHref, stepHref, stepPosition } from "@/lib/rollout-view/nav";
import { prepareStatGrid, rewardColumn } from "@/lib/rollout-view/stats";
import type { GroupRow } from "@/lib/rollout-view/types";
import { parseColumns, parseFilters, parseSort, serializeFilters, serializeSort } from "@/lib/rollout-view/url-state";
import { ColumnChooser } from "@/components/table/ColumnChooser";
import { DataTable, type AsyncState } from "@/components/table/DataTable";
import { BatchAnatomy } from "./BatchAnatomy";
import { StepTraces } from "./traces/StepTraces";
import { DriftPanel, RolloutSearch } from "./lazy-panels";
import { isNotFound, QueryError } from "./QueryError";
import { RewardScatter } from "./RewardScatter";
import { dataColumns } from "./rollout-columns";
import { StatGrid } from "./StatGrid";
import { StepNav } from "./StepNav";
import { StepLinks } from "./StepLinks";
import { useUrlState } from "@/components/charts/use-url-state";

export interface RolloutStepClientProps {
  runId: string;
  step: number;
  evaluation: boolean;
  ids: { train: number[]; eval: number[] };
  live: boolean;
}

const DEFAULT_SORT: SortingState = [{ id: "sample_index", desc: false }];
const GROUP_SORT: SortingState = [{ id: "group_index", desc: false }];

function apply<T>(u: Updater<T>, prev: T): T {
  return typeof u === "function" ? (u as (p: T) => T)(prev) : u;
}

export function RolloutStepClient({ runId, step, evaluation, ids: initialIds, live }: RolloutStepClientProps) {
  const router = useRouter();
  const { params, replace } = useUrlState();
  const idsQ = useRolloutIds(runId, initialIds, live);
  const ids = idsQ.data;
  // Preload (server render) what the step's first screen shows.
  preloadData([
    rolloutUrls.summary(runId, step, evaluation),
    rolloutUrls.groups(runId, step, evaluation),
    ...(evaluation ? [] : [rolloutUrls.trajectories(runId, step, null)]),
  ]);
  const summary = useRolloutSummary(runId, step, evaluation);
  const groups = useRolloutGroups(runId, step, evaluation);
  const traj = useTrajectories(runId, step, null, !evaluation);
  const stale = summary.isPlaceholderData;
  const sum = summary.data;

  const tab = params.get("tab") === "groups" ? "groups" : params.get("tab") === "drift" ? "drift" : params.get("tab") === "search" ? "search" : "samples";
  const allCols = useMemo(() => (sum ? sampleColumnIds(sum) : []), [sum]);
  const defaults = useMemo(() => defaultVisibleSampleColumns(allCols), [allCols]);
  const visible = useMemo(() => parseColumns(params.get("cols"), allCols) ?? defaults, [params, allCols, defaults]);
  const sorting = useMemo(() => {
    const s = parseSort(params.get("sort"), allCols.length ? allCols : undefined);
    return s.length ? s : DEFAULT_SORT;
  }, [params, allCols]);
  const filters: ColumnFiltersState = useMemo(() => parseFilters(params.getAll("f"), allCols.length ? allCols : undefined), [params, allCols]);
  const groupSorting = useMemo(() => {
    const s = parseSort(params.get("gsort"), groups.data?.columns);
    return s.length ? s : GROUP_SORT;
  }, [params, groups.data]);
  const anatSort = isAnatomySort(params.get("anat")) ? (params.get("anat") as Parameters<typeof prepareAnatomy>[1]) : "submit";

  const rows = useMemo(() => (sum ? prepareSampleRows(sum) : []), [sum]);
  const filteredRows = useMemo(() => (filters.length ? rows.filter((r) => filters.every((f) => typeof f.value !== "string" || matchesFilter(r[f.id], f.value))) : rows), [rows, filters]);
  const tiles = useMemo(() => (sum ? prepareStatGrid(sum, groups.data ?? null, evaluation) : null), [sum, groups.data, evaluation]);
  const facts = useMemo(() => {
    const m = new Map<number, LaneFacts>();
    for (const r of rows) m.set(r.sample_index, { turns: r.turns, toolCalls: r.tool_calls, reward: r.raw_reward ?? r.reward });
    return m;
  }, [rows]);
  const anatomy = useMemo(() => (traj.data ? prepareAnatomy(traj.data, anatSort, facts) : null), [traj.data, anatSort, facts]);

  const open = (sampleIndex: number) => router.push(sampleHref(runId, step, sampleIndex, evaluation));
  const sampleColumns = useMemo(
    () => dataColumns<SampleTableRow>(visible, { linkFirst: (r) => sampleHref(runId, step, r.sample_index, evaluation), notApplicable: notApplicableColumns(evaluation) }),
    [visible, runId, step, evaluation],
  );
  const groupColumns = useMemo(() => dataColumns<GroupRow>(groups.data?.columns ?? [], { notApplicable: groupNotApplicable }), [groups.data]);

  const setSorting = (u: Updater<SortingState>) => replace({ sort: serializeSort(apply(u, sorting)) });
  const setFilters = (u: Updater<ColumnFiltersState>) => replace({ f: serializeFilters(apply(u, filters).map((f) => ({ id: f.id, value: typeof f.value === "string" ? f.value : "" }))) });
  const carry = useMemo(() => {
    const q = new URLSearchParams(params.toString());
    q.delete("eval");
    return q.toString();
  }, [params]);

  if (summary.isError && !summary.data) {
    if (isNotFound(summary.error)) {
      const list = evaluation ? ids.eval : ids.train;
      const newest = stepPosition(list, step).newest;
      return (
        <div className="rv-notfound" role="alert">
          <h2>No {evaluation ? "eval" : "train"} dump for step {step}</h2>
          <p className="muted">{summary.error instanceof Error ? summary.error.message : ""}</p>
          {newest !== null ? (
            <p>
              <Link href={stepHref(runId, newest, evaluation)}>Open the newest {evaluation ? "eval" : "train"} step ({newest})</Link>
            </p>
          ) : null}
        </div>
      );
    }
  }

  const sampleState: AsyncState<SampleTableRow[]> = summary.isError
    ? { isLoading: false, isError: true, error: summary.error, data: summary.data ? rows : undefined }
    : summary.data
      ? { isLoading: false, isError: false, data: rows }
      : { isLoading: true, isError: false, data: undefined };
  const groupState: AsyncState<GroupRow[]> = groups.isError
    ? { isLoading: false, isError: true, error: groups.error, data: groups.data?.rows }
    : groups.data
      ? { isLoading: false, isError: false, data: groups.data.rows }
      : { isLoading: true, isError: false, data: undefined };

  // Every part of the step has its answer (data or an error shown in place); the canvases
  // stamp themselves once drawn (data-painted). Tests and the bench wait on both.
  const settled = !!sum && !stale && (groups.isSuccess || groups.isError) && (evaluation || traj.isSuccess || traj.isError);
  return (
    <div className="rv" data-state={settled ? "ready" : "loading"}>
      <StepNav runId={runId} step={step} evaluation={evaluation} ids={ids} carry={carry} />
      <StepLinks runId={runId} step={step} evaluation={evaluation} traj={traj.data} />
      {summary.isError ? <QueryError error={summary.error} what={`the summary of step ${step}`} /> : null}
      {tiles ? <StatGrid tiles={tiles} dim={stale} /> : <div className="rv-stats rv-skeleton" aria-busy="true" />}
      <div className="rv-tabs" role="tablist" aria-label="Step views">
        {(["samples", "groups", "drift", "search"] as const).map((t) => (
          <button key={t} type="button" role="tab" aria-selected={tab === t} className="rv-btn" onClick={() => replace({ tab: t === "samples" ? null : t })}>
            {t === "samples" ? "Samples" : t === "groups" ? "Groups" : t === "drift" ? "Drift" : "Search"}
          </button>
        ))}
        {stale ? <span className="muted rv-hint">loading step {step}…</span> : null}
      </div>

      {tab === "drift" ? (
        <DriftPanel runId={runId} step={step} evaluation={evaluation} />
      ) : tab === "search" ? (
        <RolloutSearch runId={runId} step={step} evaluation={evaluation} />
      ) : tab === "samples" ? (
        <div role="tabpanel" aria-label="Samples" className={stale ? "rv-dim" : undefined}>
          {!evaluation ? (
            traj.isError ? (
              <QueryError error={traj.error} what="the batch anatomy" />
            ) : anatomy ? (
              <section className="rv-panel" aria-labelledby="rv-anat-title">
                <h2 id="rv-anat-title" className="rv-panel-title">
                  Batch anatomy — when each sample generated, waited, tool-called
                </h2>
                <BatchAnatomy model={anatomy} sort={anatSort} onSort={(s) => replace({ anat: s === "submit" ? null : s })} onOpen={open} />
              </section>
            ) : traj.data ? (
              <p className="muted rv-note">No trajectory events for this step (the run predates the trajectory probes).</p>
            ) : (
              <section className="rv-panel rv-placeholder" aria-busy="true" style={{ minHeight: Math.min(anatomyDensity(rows.length || 32).height, 640) + 74 }}>
                <h2 className="rv-panel-title">Batch anatomy — loading…</h2>
              </section>
            )
          ) : null}
          <StepTraces runId={runId} step={step} evaluation={evaluation} onOpen={open} />
          {sum ? (
            <RewardScatter
              rows={filteredRows}
              columns={allCols}
              defaultY={rewardColumn(evaluation)}
              x={params.get("sx")}
              y={params.get("sy")}
              onAxes={(x, y) => replace({ sx: x, sy: y })}
              onOpen={open}
              onFilterBox={(f) => replace({ f: serializeFilters([...filters.map((o) => ({ id: o.id, value: typeof o.value === "string" ? o.value : "" })).filter((o) => !f.some((n) => n.id === o.id)), ...f]) })}
              hiddenByFilters={rows.length - filteredRows.length}
            />
          ) : null}
          <section className="rv-panel" aria-labelledby="rv-samples-title">
            <div className="rv-panel-head">
              <h2 id="rv-samples-title" className="rv-panel-title">
                Samples — click a row for the sample view
              </h2>
              <div className="rv-controls rv-right">
                {filters.length ? (
                  <button type="button" className="rv-btn" onClick={() => replace({ f: null })}>
                    clear filters ({filters.length})
                  </button>
                ) : null}
                <ColumnChooser all={allCols} visible={visible} defaults={defaults} onChange={(next) => replace({ cols: next.join(",") === defaults.join(",") ? null : next.join(",") })} />
              </div>
            </div>
            <DataTable
              label={`Samples of step ${step}`}
              columns={sampleColumns}
              state={sampleState}
              getRowId={(r) => String(r.sample_index)}
              sorting={sorting}
              onSortingChange={setSorting}
              columnFilters={filters}
              onColumnFiltersChange={setFilters}
              onRowActivate={(r) => open(r.sample_index)}
              rowClassName={(r) => (isRemovedSample(r) ? "dt-bad" : undefined)}
              renderError={(e) => <QueryError error={e} what="the samples" />}
              footer={<span> · red = removed from training · filters: &gt;0.5 · 2..10 · true · null · text</span>}
            />
          </section>
        </div>
      ) : (
        <div role="tabpanel" aria-label="Groups">
          <section className="rv-panel" aria-labelledby="rv-groups-title">
            <h2 id="rv-groups-title" className="rv-panel-title">
              GRPO groups <span className="rv-bad-text">(red = zero reward std → no gradient signal)</span> — click a group to list its samples
            </h2>
            <DataTable
              label={`Groups of step ${step}`}
              columns={groupColumns}
              state={groupState}
              getRowId={(r) => String(r.group_index)}
              sorting={groupSorting}
              onSortingChange={(u) => replace({ gsort: serializeSort(apply(u, groupSorting)) })}
              onRowActivate={(g) => replace({ tab: null, f: g.group_index === null ? ["group_index:null"] : [`group_index:${g.group_index}`] })}
              rowClassName={(g) => (isZeroStdGroup(g) ? "dt-bad" : undefined)}
              renderError={(e) => <QueryError error={e} what="the groups" />}
            />
          </section>
        </div>
      )}
    </div>
  );
}
