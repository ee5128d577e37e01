"use client";

/**
 * Lane selection of the Compute Utilization view: the URL's `lanes=` (or the default of 8
 * spaced lanes, written to the URL once the topology is known), resolved to lanes.
 * Index-only selections resolve here from the topology; catalog terms (rank, engine,
 * role) and anything malformed go to the server, which is the grammar's judge. While a
 * new answer is on its way, or after a failed one, the last good lanes stay; the same
 * lanes as before (a follow tick re-resolves) keep the same array, so nothing redraws.
 * Of the selected lanes, the page of rows in sight (`rows`, reported by the lanes box) is
 * the one whose data is asked and drawn, and the page a scroll on would reach next is named
 * so its data can be asked before it is needed.
 */
import { useEffect, useEffectEvent, useMemo, useState } from "react";
import type { TopologyResponse } from "@/lib/charts/api-shapes";
import { defaultSpacedSelection, pageAhead, pageFor, resolveLocally, shownSelection, type LanePage, type RowsInView } from "@/lib/charts/lane-selection";
import { useResolvedLanes } from "@/lib/client/telemetry-queries";
import { currentParams } from "@/components/charts/use-url-state";

type Lane = { node: string; gpu: number; index: number };

const laneKey = (ls: readonly Lane[]) => ls.map((l) => `${l.index}@${l.node}:${l.gpu}`).join(",");

export function useLaneSelection(
  runId: string,
  topology: TopologyResponse | undefined,
  urlLanes: string | null,
  T1: number,
  rows: RowsInView,
  setDefault: (selection: string) => void,
) {
  const allLanes = useMemo(() => topology?.lanes ?? [], [topology]);
  const defaultSel = topology ? (defaultSpacedSelection(allLanes) ?? "") : null;
  const selection = urlLanes ?? defaultSel;
  // The default is a real selection: written to the URL (no history entry) — unless the
  // address bar has a selection by now (a deep link this render did not see yet: #15 defect 1).
  const writeDefault = useEffectEvent((sel: string) => {
    if (!currentParams().has("lanes")) setDefault(sel);
  });
  useEffect(() => {
    if (urlLanes === null && defaultSel !== null && defaultSel !== "") writeDefault(defaultSel);
  }, [urlLanes, defaultSel]);

  const local = useMemo(() => (selection !== null && topology ? resolveLocally(selection, allLanes) : null), [selection, topology, allLanes]);
  const resolved = useResolvedLanes(runId, selection ?? "", selection === null || local !== null ? null : T1);
  const serverSide = local === null;

  // The last good lanes, kept by value (adjusted during render, so no ref is read there).
  const good = local ?? (resolved.data && !resolved.isPlaceholderData ? resolved.data : null);
  const goodKey = good ? laneKey(good) : null;
  const [kept, setKept] = useState<{ key: string; lanes: readonly Lane[] }>({ key: "", lanes: [] });
  if (good && goodKey !== kept.key) setKept({ key: goodKey!, lanes: good });
  const now = local ?? (resolved.isError ? kept.lanes : (resolved.data ?? kept.lanes));
  const resolvedLanes = now === kept.lanes || laneKey(now) === kept.key ? kept.lanes : now;

  const sorted = useMemo(() => [...resolvedLanes].sort((a, b) => a.index - b.index), [resolvedLanes]);
  // The page stays while the rows in sight are in it (kept during render, as above), and
  // the way the last move went says which page to ask ahead of the scroll.
  const [paging, setPaging] = useState<{ page: LanePage; down: boolean } | null>(null);
  const page = pageFor(rows, sorted.length, paging?.page ?? null);
  const moved = paging === null || page.start !== paging.page.start || page.size !== paging.page.size;
  const down = moved ? paging === null || page.start >= paging.page.start : paging.down;
  if (moved) setPaging({ page, down });
  const { start, size } = page;
  const ahead = pageAhead(page, rows, sorted.length, down);
  // the same page keeps the same array (the lanes' queries and model key on it)
  const shown = useMemo(() => sorted.slice(start, start + size), [sorted, start, size]);
  const aheadLanes = ahead === null ? null : shownSelection(sorted.slice(ahead.start, ahead.start + ahead.size));
  const selectedSet = useMemo(() => new Set(resolvedLanes.map((l) => l.index)), [resolvedLanes]);
  return {
    allLanes,
    selection,
    resolvedLanes,
    /** the selected lanes in row order (index order) */
    ordered: sorted,
    shown,
    /** row of shown[0] among the selected lanes */
    offset: start,
    /** the selection string the lane queries send (the page of lanes drawn) */
    dataLanes: shownSelection(shown),
    /** the selection of the page a scroll on would draw next (asked early), null if none */
    aheadLanes,
    selectedSet,
    /** the server answered the selection (or it resolved locally): the count is known */
    known: local !== null || resolved.data !== undefined || resolved.isError,
    serverError: serverSide && resolved.isError ? resolved.error : null,
    resolving: serverSide && resolved.isPending,
  };
}
