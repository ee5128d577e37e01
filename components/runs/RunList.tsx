"use client";

import { Link } from "@/components/shell/Link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useMemo } from "react";
import type { GetRunsResponse, RunSummary } from "@/lib/contracts/runs";
import { useRuns } from "@/lib/client/queries";
import { formatAgo, formatUtc } from "@/lib/format/time";

type SortKey = "activity" | "name" | "steps";

const SORTS: Record<SortKey, (a: RunSummary, b: RunSummary) => number> = {
  activity: (a, b) => (b.last_ts ?? 0) - (a.last_ts ?? 0),
  name: (a, b) => a.name.localeCompare(b.name),
  steps: (a, b) => b.steps - a.steps,
};

export function RunList({ initial }: { initial: GetRunsResponse }) {
  const { data, error } = useRuns(initial);
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  const q = params.get("q") ?? "";
  const sort = (params.get("sort") as SortKey | null) ?? "activity";

  // Search and sort live in the URL so a filtered list is a shareable link.
  const setParam = (key: string, value: string) => {
    const next = new URLSearchParams(params.toString());
    if (value) next.set(key, value);
    else next.delete(key);
    const qs = next.toString();
    router.replace(qs ? `${pathname}?${qs}` : pathname, { scroll: false });
  };

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
            <option value="steps">steps</option>
          </select>
        </label>
        <span className="muted" aria-live="polite">
          {runs.length} of {data.runs.length} runs
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
          <table className="runs-table">
            <thead>
              <tr>
                <th>Run</th>
                <th>Status</th>
                <th>Data</th>
                <th>Steps</th>
                <th>Last activity</th>
                <th>Open</th>
              </tr>
            </thead>
            <tbody>
              {runs.map((r) => (
                <RunRow key={r.id} run={r} />
              ))}
            </tbody>
          </table>
        )}
      </div>
    </>
  );
}

function RunRow({ run }: { run: RunSummary }) {
  const base = `/runs/${encodeURIComponent(run.id)}`;
  const caps = run.capabilities;
  return (
    <tr data-testid="run-row">
      <td>
        <Link href={`${base}/metrics`} className="run-name">
          {run.name}
        </Link>
        <div className="run-path">{run.path}</div>
      </td>
      <td>{run.live ? <span className="badge badge-live">live</span> : <span className="badge">finished</span>}</td>
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
      <td className="mono">{run.steps}</td>
      <td title={formatUtc(run.last_ts)}>{formatAgo(run.last_ts)}</td>
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
