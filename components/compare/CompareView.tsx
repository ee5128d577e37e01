"use client";

/**
 * Compare view (README "Comparing runs"): `view=diff` (verdict, KPI table, config delta,
 * availability, movers; A = baseline) and `view=metrics` (overlay: one chart per metric,
 * one colour per run). URL state: runs, view, all (every KPI row), x (step | time), cat, q.
 * Live runs: the diff refetches every 15 s, the overlay like the Metrics view in follow mode.
 */
import { useQuery } from "@tanstack/react-query";
import { Link } from "@/components/shell/Link";
import { useUrlState } from "@/components/charts/use-url-state";
import type { GetCompareResponse } from "@/lib/contracts/compare";
import { ApiClientError, apiJson } from "@/lib/client/fetcher";
import { Availability } from "@/components/compare/Availability";
import { CompareOverlay } from "@/components/compare/CompareOverlay";
import { ConfigDelta } from "@/components/compare/ConfigDelta";
import { KpiTable } from "@/components/compare/KpiTable";
import { Movers } from "@/components/compare/Movers";
import { RunChips } from "@/components/compare/RunChips";
import { VerdictBanner } from "@/components/compare/VerdictBanner";
import "@/components/compare/compare.css";

export interface CompareViewProps {
  runs: string;
  initial: GetCompareResponse | null;
  error: { status: number; message: string } | null;
  live: boolean;
}

export function CompareView({ runs, initial, error, live }: CompareViewProps) {
  const { params, write, replace } = useUrlState();
  const view = params.get("view") === "metrics" ? "metrics" : "diff";
  const showAll = params.get("all") === "1";
  const q = useQuery({
    queryKey: ["compare", runs],
    queryFn: () => apiJson<GetCompareResponse>(`/api/compare?runs=${encodeURIComponent(runs)}`),
    initialData: initial ?? undefined,
    enabled: !error,
    refetchInterval: live ? 15_000 : false,
  });
  const report = q.data;
  const href = (v: string) => `/compare?${new URLSearchParams({ runs, view: v }).toString()}`;
  // Switching views is URL state on the same page (History API: no server render, Back undoes it).
  const show = (v: "diff" | "metrics") => (e: { preventDefault: () => void; metaKey: boolean; ctrlKey: boolean }) => {
    if (e.metaKey || e.ctrlKey) return;
    e.preventDefault();
    const next = new URLSearchParams(window.location.search);
    next.set("view", v);
    write(`?${next.toString()}`, "push");
  };
  if (error || !report) {
    const msg = error ? `${error.message} (HTTP ${error.status})` : q.error instanceof ApiClientError ? `${q.error.message} (HTTP ${q.error.status})` : "loading…";
    return (
      <main className="page">
        <h1>Compare runs</h1>
        <div className={error || q.error ? "error-box" : "muted"} role={error || q.error ? "alert" : undefined} data-testid="compare-error">
          {msg}
        </div>
        <p>
          <Link href="/">Back to the run list</Link> to pick 2–8 runs.
        </p>
      </main>
    );
  }
  return (
    <main className="page cmp-page">
      <div className="cmp-head">
        <h1>Compare runs</h1>
        <nav className="run-tabs" aria-label="Compare views">
          <a href={href("diff")} onClick={show("diff")} className={`run-tab${view === "diff" ? " run-tab-active" : ""}`} aria-current={view === "diff" ? "page" : undefined}>
            Diff
          </a>
          <a href={href("metrics")} onClick={show("metrics")} className={`run-tab${view === "metrics" ? " run-tab-active" : ""}`} aria-current={view === "metrics" ? "page" : undefined}>
            Metrics overlay
          </a>
        </nav>
        {live ? <span className="badge badge-live">live</span> : null}
      </div>
      <RunChips runs={report.runs} />
      <VerdictBanner verdict={report.verdict} runNames={report.runs.map((r) => r.name)} />
      {q.error ? (
        <div className="error-box" role="alert">
          Could not refresh: {q.error.message}
        </div>
      ) : null}
      {view === "diff" ? (
        <>
          <label className="muted cmp-toggle">
            <input type="checkbox" checked={showAll} onChange={(e) => replace({ all: e.target.checked ? "1" : null })} /> every shared metric in the KPI
            table ({report.kpis.length} rows)
          </label>
          <div className="cmp-grid">
            <KpiTable report={report} showAll={showAll} />
            <div className="cmp-side">
              <ConfigDelta report={report} />
              <Availability report={report} />
            </div>
          </div>
          <Movers report={report} limit={showAll ? report.movers.length : 25} />
          {report.warnings.length ? (
            <ul className="muted">
              {report.warnings.map((w) => (
                <li key={w}>{w}</li>
              ))}
            </ul>
          ) : null}
        </>
      ) : (
        <CompareOverlay report={report} live={live} />
      )}
    </main>
  );
}
