import type { GetCompareResponse } from "@/lib/contracts/compare";
import { fmtArg } from "@/components/compare/format";

export function ConfigDelta({ report }: { report: GetCompareResponse }) {
  const rows = report.config_delta;
  return (
    <section className="panel cmp-section" aria-labelledby="cmp-config">
      <h2 id="cmp-config">Config delta</h2>
      {rows.length === 0 ? (
        <p className="muted">{report.runs.every((r) => r.has_args) ? "No args key differs." : "Nothing to compare: a run has no args snapshot."}</p>
      ) : (
        <table className="cmp-table" data-testid="config-delta">
          <thead>
            <tr>
              <th>key</th>
              {report.runs.map((r) => (
                <th key={r.id}>{r.name}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <tr key={d.key} className={d.identity ? "muted" : undefined}>
                <td className="mono">
                  {d.key}
                  {d.identity ? <span className="badge" title="names the run; not counted for the verdict">run name</span> : null}
                </td>
                {d.values.map((v, i) => (
                  <td key={i} className={`mono${i > 0 ? " cmp-changed" : ""}`}>
                    {fmtArg(v, d.absent[i] ?? false)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
