import type { GetCompareResponse } from "@/lib/contracts/compare";
import { fmtNum } from "@/components/compare/format";

/**
 * Every shared metric ranked by |shift| = |median − baseline median| / baseline spread
 * (1.4826 · MAD, docs/api.md "GET /api/compare"): a bar near 0 is not diagnostic.
 */
export function Movers({ report, limit }: { report: GetCompareResponse; limit: number }) {
  const movers = report.movers.slice(0, limit);
  const max = Math.max(1, ...movers.map((m) => (m.shift === null ? 0 : Math.abs(m.shift))));
  return (
    <section className="panel cmp-section" aria-labelledby="cmp-movers">
      <h2 id="cmp-movers">Movers</h2>
      <p className="muted cmp-note">
        shift = (median − baseline median) ÷ the baseline&apos;s spread (1.4826 × median absolute deviation over its steps). |shift| &lt; 1 is within
        the baseline&apos;s own step-to-step noise: that signal did not respond. n/a: the baseline is constant and the other run differs.
      </p>
      <table className="cmp-table" data-testid="movers">
        <thead>
          <tr>
            <th>metric</th>
            <th>shift</th>
            <th />
            <th>spread</th>
          </tr>
        </thead>
        <tbody>
          {movers.map((m) => (
            <tr key={m.key} className={m.shift !== null && Math.abs(m.shift) < 1 ? "muted" : undefined}>
              <td className="mono">{m.key}</td>
              <td className="mono">{m.shift === null ? "n/a" : `${m.shift > 0 ? "+" : ""}${m.shift.toFixed(2)}`}</td>
              <td className="cmp-bar-cell">
                {m.shift === null ? null : (
                  <span className={`cmp-bar ${m.shift > 0 ? "cmp-up" : "cmp-down"}`} style={{ width: `${(100 * Math.abs(m.shift)) / max}%` }} />
                )}
              </td>
              <td className="mono">{fmtNum(m.spread)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {report.movers.length > limit ? <p className="muted cmp-note">Top {limit} of {report.movers.length}.</p> : null}
    </section>
  );
}
