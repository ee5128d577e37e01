import type { GetCompareResponse } from "@/lib/contracts/compare";
import { fmtNum, fmtPct, fmtSigned } from "@/components/compare/format";

/** Headline KPIs first, then every other scalar metric the runs share (docs/api.md "GET /api/compare"). */
export function KpiTable({ report, showAll }: { report: GetCompareResponse; showAll: boolean }) {
  const rows = showAll ? report.kpis : report.kpis.filter((k) => k.headline);
  const others = report.kpis.length - report.kpis.filter((k) => k.headline).length;
  return (
    <section className="panel cmp-section" aria-labelledby="cmp-kpis">
      <h2 id="cmp-kpis">KPIs</h2>
      <p className="muted cmp-note">
        Median over steps; <em>peak</em> where every run&apos;s median is 0 (counters idle at zero). Δ and % against the baseline.
      </p>
      <table className="cmp-table" data-testid="kpi-table">
        <thead>
          <tr>
            <th>metric</th>
            <th>stat</th>
            {report.runs.map((r, i) => (
              <th key={r.id} colSpan={i === 0 ? 1 : 3}>
                {r.name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((k) => (
            <tr key={k.key} data-key={k.key}>
              <td title={k.key}>
                {k.label}
                {k.label !== k.key ? <div className="run-path">{k.key}</div> : null}
              </td>
              <td>{k.statistic === "peak" ? <span className="badge">peak</span> : "median"}</td>
              {k.values.map((v, i) =>
                i === 0 ? (
                  <td key={i} className="mono">
                    {fmtNum(v)}
                  </td>
                ) : (
                  [
                    <td key={`${i}v`} className="mono">
                      {fmtNum(v)}
                    </td>,
                    <td key={`${i}d`} className={`mono cmp-delta ${sign(k.delta[i])}`}>
                      {fmtSigned(k.delta[i])}
                    </td>,
                    <td key={`${i}p`} className={`mono cmp-delta ${sign(k.delta[i])}`}>
                      {fmtPct(k.pct[i])}
                    </td>,
                  ]
                ),
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {!showAll && others > 0 ? <p className="muted cmp-note">{others} more shared metrics: add <code>all=1</code> or use the toggle above.</p> : null}
    </section>
  );
}

function sign(d: number | null | undefined): string {
  return d === null || d === undefined || d === 0 ? "" : d > 0 ? "cmp-up" : "cmp-down";
}
