import type { ReactNode } from "react";

/**
 * The frame of one Metrics card: title (with the metric's description as its hover
 * text), a side note, the description line (always one line, so cards of a grid row line
 * up), the request's error or a stale-data warning, then the chart.
 */
export function MetricCardFrame(props: { metricKey: string; desc: string | null | undefined; side: ReactNode; error: string | null; hasData: boolean; children: ReactNode }) {
  const { metricKey: key, desc, error } = props;
  return (
    <article className="panel chart-card" data-testid="metric-card" data-key={key} aria-label={key}>
      <header className="chart-head">
        <h3 className="chart-title mono" title={desc ?? key}>
          {key}
        </h3>
        <span className="chart-side mono muted">{props.side}</span>
      </header>
      <p className="chart-desc muted">{desc ?? "\u00a0"}</p>
      {error && !props.hasData ? (
        <p className="chart-status error-text" role="alert">
          {error}
        </p>
      ) : null}
      {error && props.hasData ? <p className="chart-status warn-text">refresh failed: {error} (showing last data)</p> : null}
      {props.children}
    </article>
  );
}
