import type { ReactNode, Ref } from "react";

/**
 * The frame of one Metrics card: title (with the metric's description as its hover
 * text), a side note, the description line (always one line, so cards of a grid row line
 * up), the request's error or a stale-data warning, then the chart.
 */
export function MetricCardFrame({
  metricKey: key,
  desc,
  side,
  error,
  hasData,
  children,
  cardRef,
  note,
}: {
  metricKey: string;
  desc: string | null | undefined;
  side: ReactNode;
  error: string | null;
  hasData: boolean;
  children: ReactNode;
  /** the card element (the viewport observer of docs/charts.md §7) */
  cardRef?: Ref<HTMLElement>;
  /** a line above the chart (e.g. why a time axis is empty) */
  note?: ReactNode;
}) {
  return (
    <article ref={cardRef} className="panel chart-card chart-card-lazy" data-testid="metric-card" data-key={key} aria-label={key}>
      <header className="chart-head">
        <h3 className="chart-title mono" title={desc ?? key}>
          {key}
        </h3>
        <span className="chart-side mono muted">{side}</span>
      </header>
      <p className="chart-desc muted">{desc ?? "\u00a0"}</p>
      {error && !hasData ? (
        <p className="chart-status error-text" role="alert">
          {error}
        </p>
      ) : null}
      {error && hasData ? <p className="chart-status warn-text">refresh failed: {error} (showing last data)</p> : null}
      {note}
      {children}
    </article>
  );
}
