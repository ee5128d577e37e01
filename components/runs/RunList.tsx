"use client";

import { Link } from "@/components/shell/Link";
import { useRouter } from "next/navigation";
import { useUrlState } from "@/components/charts/use-url-state";
import { useMemo, useState } from "react";
import type { GetRunsResponse, RunSummary } from "@/lib/contracts/runs";
import { useRuns } from "@/lib/client/queries";
import { RelativeTime } from "@/components/shell/RelativeTime";
import { RunAnnotations } from "@/components/runs/RunAnnotations";
import "@/components/runs/runs.css";
import { RunStateCell } from "@/components/health/RunStateCell";

/** Compare takes 2–8 runs (docs/api.md "GET /api/compare"). */
const MIN_COMPARE = 2;
const MAX_COMPARE = 8;

function argText(v: string | number | boolean | null | undefined): string {
  if (v === undefined) return "";
  return typeof v === "string" ? v : JSON.stringify(v);
}

type SortKey = "activity" | "name" | "steps";

const SORTS: Record<SortKey, (a: RunSummary, b: RunSummary) => number> = {
  activity: (a, b) => (b.last_ts ?? 0) - (a.last_ts ?? 0),
  name: (a, b) => a.name.localeCompare(b.name),
  steps: (a, b) => (b.last_step ?? -1) - (a.last_step ?? -1) || b.steps - a.steps,
};

export function RunList({ initial }: { initial: GetRunsResponse }) {
  const { data, error } = useRuns(initial);
  // URL state through the History API (no server render per keystroke or column toggle)
  const { params, replace } = useUrlState();
  const router = useRouter();
  const q = params.get("q") ?? "";
  const sort = (params.get("sort") as SortKey | null) ?? "activity";
  // Config columns (dotted meta.args keys) are sticky in the URL: `cols=lr,optim.beta2`.
  const cols = useMemo(() => (params.get("cols") ?? "").split(",").filter(Boolean), [params]);
  // Selection order matters: the first selected run is the compare baseline.
  const [selected, setSelected] = useState<string[]>([]);
  const [colFilter, setColFilter] = useState("");
  const argKeys = useMemo(() => {
    const keys = new Set<string>();
    for (const r of data.runs) for (const k of Object.keys(r.args ?? {})) keys.add(k);
    return [...keys].sort();
  }, [data.runs]);
  const toggleCol = (key: string) => setParam("cols", (cols.includes(key) ? cols.filter((c) => c !== key) : [...cols, key]).join(","));
  const toggleRun = (id: string) => setSelected((s) => (s.includes(id) ? s.filter((x) => x !== id) : [...s, id]));
  const known = new Set(data.runs.map((r) => r.id));
  const chosen = selected.filter((id) => known.has(id));
  const canCompare = chosen.length >= MIN_COMPARE && chosen.length <= MAX_COMPARE;
  const compare = () => router.push(`/compare?${new URLSearchParams({ runs: chosen.join(","), view: "diff" }).toString()}`);

  // Search, sort and config columns live in the URL so a filtered list is a shareable link.
  const setParam = (key: string, value: string) => replace({ [key]: value || null });

  const runs = useMemo(() => {
    const needle = q.trim().toLowerCase();
    const filtered = data.runs.filter(
      (r) => !needle || r.name.toLowerCase().includes(needle) || r.path.toLowerCase().includes(needle),
    );
    return [...filtered].sort(SORTS[sort] ?? SORTS.activity);
  }, [data.runs, q, sort]);

  return (
    <>
      <div className="runs-toolbar">
        <input
          className="input"
          type="search"
          placeholder="Search runs by name or path…"
          aria-label="Search runs"
          value={q}
          onChange={(e) => setParam("q", e.target.value)}
        />
        <label className="muted">
          Sort{" "}
          <select className="input" aria-label="Sort runs" value={sort} onChange={(e) => setParam("sort", e.target.value)}>
            <option value="activity">latest activity</option>
            <option value="name">name</option>
            <option value="steps">last step</option>
          </select>
        </label>
        <details className="runs-cols">
          <summary className="btn">Config columns{cols.length ? ` (${cols.length})` : ""}</summary>
          <div className="panel runs-cols-menu" role="group" aria-label="Config columns">
            <input className="input" type="search" placeholder="Filter args keys…" aria-label="Filter args keys" value={colFilter} onChange={(e) => setColFilter(e.target.value)} />
            {argKeys.length === 0 ? <span className="muted">No run has an args snapshot.</span> : null}
            {argKeys
              .filter((k) => !colFilter || k.toLowerCase().includes(colFilter.toLowerCase()))
              .map((k) => (
                <label key={k}>
                  <input type="checkbox" checked={cols.includes(k)} onChange={() => toggleCol(k)} /> {k}
                </label>
              ))}
          </div>
        </details>
        <span className="muted" aria-live="polite">
          {runs.length} of {data.runs.length} runs
        </span>
        <span className="runs-compare">
          <button type="button" className="btn btn-primary" disabled={!canCompare} onClick={compare} title={`select ${MIN_COMPARE}–${MAX_COMPARE} runs; the first selected is the baseline`}>
            Compare{chosen.length ? ` (${chosen.length})` : ""}
          </button>
          <span className="muted" aria-live="polite">
            {chosen.length === 0
              ? `select ${MIN_COMPARE}–${MAX_COMPARE} runs to compare`
              : chosen.length > MAX_COMPARE
                ? `at most ${MAX_COMPARE} runs`
                : `baseline: ${data.runs.find((r) => r.id === chosen[0])?.name ?? chosen[0]}`}
          </span>
        </span>
      </div>
      {error ? (
        <div className="error-box" role="alert">
          Could not refresh the run list: {error.message}
        </div>
      ) : null}
      <div className="panel">
        {runs.length === 0 ? (
          <div className="empty">
            {data.runs.length === 0
              ? "No runs found yet. A run is a folder with dashboard/ or rollout_data/ below a runs root."
              : `No run matches “${q}”.`}
          </div>
        ) : (
          <div className="runs-table-wrap">
            <table className="runs-table">
              <thead>
                <tr>
                  <th className="runs-select" aria-label="Select for compare" />
                  <th>Run</th>
                  <th title="run health (docs/api.md 9.5.2) and the worst alarm: lifecycle, advisories, log signals">State</th>
                  <th>Data</th>
                  <th title="newest logged training step (metrics; a dump-only run: its newest dump)">Last step</th>
                  <th title="rollout dumps on disk">Dumps</th>
                  <th>Last activity</th>
                  {cols.map((c) => (
                    <th key={c} className="mono" title={c}>
                      {c}
                    </th>
                  ))}
                  <th>Tags / notes</th>
                  <th>Open</th>
                </tr>
              </thead>
              <tbody>
                {runs.map((r) => (
                  <RunRow key={r.id} run={r} cols={cols} selected={chosen.includes(r.id)} onToggle={() => toggleRun(r.id)} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </div>
    </>
  );
}

function RunRow({ run, cols, selected, onToggle }: { run: RunSummary; cols: string[]; selected: boolean; onToggle: () => void }) {
  const base = `/runs/${encodeURIComponent(run.id)}`;
  const caps = run.capabilities;
  return (
    <tr data-testid="run-row">
      <td className="runs-select">
        <input type="checkbox" checked={selected} onChange={onToggle} aria-label={`Select ${run.name} for compare`} />
      </td>
      <td className="run-cell">
        <Link href={`${base}/metrics`} className="run-name">
          {run.name}
        </Link>
        <div className="run-path">{run.path}</div>
      </td>
      <td>
        <RunStateCell run={run} />
      </td>
      <td>
        <div className="caps">
          <span className={`cap ${caps.has_timeline ? "cap-on" : ""}`} title={caps.has_timeline ? "GPU timeline recorded" : "no telemetry"}>
            {caps.has_timeline ? "≋ timeline" : "no timeline"}
          </span>
          <span className={`cap ${caps.has_dumps ? "cap-on" : ""}`} title={caps.has_dumps ? "rollout dumps" : "no rollout dumps"}>
            {caps.has_dumps ? "▦ dumps" : "no dumps"}
          </span>
          {caps.has_trajectories ? (
            <span className="cap cap-on" title="conversations / lifecycle recorded">
              ☰ trajectories
            </span>
          ) : null}
        </div>
      </td>
      <td className="mono" data-testid="run-last-step">
        {run.last_step ?? <span className="muted">—</span>}
      </td>
      <td className="mono" data-testid="run-dumps">
        {run.steps}
      </td>
      <td className="run-when">
        <RelativeTime ts={run.last_ts} />
      </td>
      {cols.map((c) => (
        <td key={c} className="run-arg" title={argText(run.args?.[c])}>
          {run.args === null ? <span className="muted">—</span> : argText(run.args[c])}
        </td>
      ))}
      <td>
        <RunAnnotations run={run} />
      </td>
      <td>
        <div className="run-links">
          <Link href={`${base}/metrics`}>Metrics</Link>
          {caps.has_timeline ? <Link href={`${base}/timeline`}>Timeline</Link> : null}
          {caps.has_dumps ? <Link href={`${base}/rollout`}>Rollouts</Link> : null}
        </div>
      </td>
    </tr>
  );
}
