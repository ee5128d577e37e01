import { Link } from "@/components/shell/Link";
import type { GetCompareResponse } from "@/lib/contracts/compare";
import { SERIES_COLORS } from "@/lib/charts/palette";

/** The compared runs, one colour each (the same colour in every overlay chart). */
export function runColor(i: number): string {
  return SERIES_COLORS[i % SERIES_COLORS.length]!;
}

export function RunChips({ runs }: { runs: GetCompareResponse["runs"] }) {
  return (
    <ol className="cmp-runs" aria-label="Compared runs">
      {runs.map((r, i) => (
        <li key={r.id} data-testid="compare-run">
          <span className="cmp-swatch" style={{ background: runColor(i) }} aria-hidden />
          <Link href={`/runs/${encodeURIComponent(r.id)}/metrics`} title={r.id}>
            {r.name}
          </Link>
          {i === 0 ? <span className="badge">baseline</span> : null}
          {!r.has_args ? <span className="badge" title="meta.json has no args snapshot">no args</span> : null}
          {r.wandb_url ? (
            <a href={r.wandb_url} target="_blank" rel="noreferrer" className="muted">
              wandb ↗
            </a>
          ) : null}
        </li>
      ))}
    </ol>
  );
}
