import type { GetCompareResponse } from "@/lib/contracts/compare";

export function Availability({ report }: { report: GetCompareResponse }) {
  const { items, changed } = report.availability;
  return (
    <section className="panel cmp-section" aria-labelledby="cmp-avail">
      <h2 id="cmp-avail">Availability</h2>
      <p className="muted cmp-note">
        {changed.length ? `Present in some runs only: ${items.filter((i) => changed.includes(i.key)).map((i) => i.label).join(", ")}.` : "The same data streams in every run."}
      </p>
      <table className="cmp-table" data-testid="availability">
        <thead>
          <tr>
            <th>data</th>
            {report.runs.map((r) => (
              <th key={r.id}>{r.name}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {items.map((a) => (
            <tr key={a.key} className={changed.includes(a.key) ? "cmp-row-changed" : undefined}>
              <td>{a.label}</td>
              {a.values.map((v, i) => (
                <td key={i}>{v ? "yes" : <span className="muted">no</span>}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
