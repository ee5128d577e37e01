/**
 * Axis labels as plain SVG (docs/charts.md §2): one `<text>` per tick, no measuring. The
 * charts' ticks are chosen by lib/charts/core/ticks.ts and their labels are one short
 * line each, so nothing here needs text layout — visx's `<Text>` measured every word of
 * every label on each render (a forced layout per label) and parsed a CSS `calc()` for
 * its vertical anchor, ~10 ms per chart on a page of cards. Colours and font come from
 * chart.css (`.chart-axes text`, `.chart-axes line`).
 */
const FONT_SIZE = 11;
/** Gap between a label and the plot edge it belongs to (px). */
const GAP = 12;

type Scale = (v: number) => number;

/** Labels right-aligned left of the plot, vertically centred on their ticks. */
export function AxisLeftLabels({ left, scale, ticks, format }: { left: number; scale: Scale; ticks: readonly number[]; format: (v: number) => string }) {
  return (
    <g className="chart-axis chart-axis-left">
      {ticks.map((t, i) => (
        <text key={`${t}-${i}`} x={left - GAP} y={scale(t)} dy="0.355em" textAnchor="end" fontSize={FONT_SIZE}>
          {format(t)}
        </text>
      ))}
    </g>
  );
}

/** The axis line under the plot and centred labels below it. */
export function AxisBottom({ top, range, scale, ticks, format }: { top: number; range: readonly [number, number]; scale: Scale; ticks: readonly number[]; format: (v: number) => string }) {
  return (
    <g className="chart-axis chart-axis-bottom">
      <line x1={range[0]} x2={range[1]} y1={top} y2={top} />
      {ticks.map((t, i) => (
        <text key={`${t}-${i}`} x={scale(t)} y={top + 8 + FONT_SIZE + 2} textAnchor="middle" fontSize={FONT_SIZE}>
          {format(t)}
        </text>
      ))}
    </g>
  );
}

/** Short tick marks up from `bottom` and centred labels above them (the timeline's time axis). */
export function AxisTopTicks({ bottom, scale, ticks, format, tickLength = 3 }: { bottom: number; scale: Scale; ticks: readonly number[]; format: (v: number) => string; tickLength?: number }) {
  return (
    <g className="chart-axis chart-axis-top">
      {ticks.map((t, i) => {
        const x = scale(t);
        return (
          <g key={`${t}-${i}`}>
            <line x1={x} x2={x} y1={bottom} y2={bottom - tickLength} />
            <text x={x} y={bottom - tickLength - 1} textAnchor="middle" fontSize={FONT_SIZE}>
              {format(t)}
            </text>
          </g>
        );
      })}
    </g>
  );
}
