import { formatValue } from "@/lib/charts/core/format";
import type { StatScale } from "@/lib/rollout-view/tokens";

/** The colour key of the token strip: what full blue / clear / full red (or aqua) mean. */
export function StatLegend({ scale }: { scale: StatScale }) {
  const diverging = scale.kind === "diverging";
  return (
    <span className="sv-legend" title={scale.caption}>
      <span className="muted">{formatValue(scale.lo)}</span>
      <span className={`sv-legend-bar ${diverging ? "sv-legend-div" : "sv-legend-seq"}`} aria-hidden="true" />
      <span className="muted">{formatValue(scale.hi)}</span>
      <span className="muted sv-legend-cap">{scale.caption}</span>
    </span>
  );
}
