"use client";
/**
 * A small SVG bar chart for histograms (docs/views.md 4.6): `values[i]` is the height of
 * bar i; `log` scales heights by log10(1 + v) (a log-count display where empty bins stay
 * empty). Labels come from `label(i)`; a click reports the bar. Drawn as SVG so each bar
 * is addressable (title tooltip, selection) — these charts have at most a few hundred bars.
 */
export interface BarsProps {
  values: readonly number[];
  /** Second series drawn as narrower bars in front (e.g. token-weighted vs by sample). */
  overlay?: readonly number[];
  label: (i: number) => string;
  title: string;
  log?: boolean;
  width?: number;
  height?: number;
  selected?: number | null;
  onSelect?: (i: number) => void;
  /** Axis captions under the first / last bar. */
  axis?: [string, string];
}

export function Bars({ values, overlay, label, title, log = false, width = 420, height = 130, selected = null, onSelect, axis }: BarsProps) {
  const f = (v: number) => (log ? Math.log10(1 + Math.max(0, v)) : Math.max(0, v));
  const max = Math.max(1e-12, ...values.map(f), ...(overlay ?? []).map(f));
  const n = Math.max(1, values.length);
  const padB = axis ? 14 : 2;
  const h = height - padB;
  const w = width / n;
  return (
    <svg className="dr-svg" width={width} height={height} role="img" aria-label={title}>
      {values.map((v, i) => {
        const bh = (f(v) / max) * (h - 4);
        return (
          <rect
            key={i}
            data-bar={i}
            className={selected === i ? "dr-bar dr-bar-sel" : "dr-bar"}
            x={i * w + 0.5}
            y={h - bh}
            width={Math.max(1, w - 1)}
            height={bh}
            onClick={onSelect ? () => onSelect(i) : undefined}
            style={onSelect ? { cursor: "pointer" } : undefined}
          >
            <title>{`${label(i)}: ${v}`}</title>
          </rect>
        );
      })}
      {overlay?.map((v, i) => {
        const bh = (f(v) / max) * (h - 4);
        return <rect key={`o${i}`} className="dr-bar2" x={i * w + w * 0.3} y={h - bh} width={Math.max(1, w * 0.4)} height={bh} pointerEvents="none" />;
      })}
      {axis ? (
        <>
          <text x={2} y={height - 3}>
            {axis[0]}
          </text>
          <text x={width - 2} y={height - 3} textAnchor="end">
            {axis[1]}
          </text>
        </>
      ) : null}
    </svg>
  );
}
